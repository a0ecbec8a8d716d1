package claude_test

import (
	"context"
	"fmt"
	"log"

	"github.com/anthropics/anthropic-sdk-go/v2"

	_ "github.com/cloudmem/cloudmem/backends/s3" // s3:// store URLs
	"github.com/cloudmem/cloudmem/claude"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// The SDK's tool runner with the memory tool, its memory kept in an S3
// bucket. The client reads ANTHROPIC_API_KEY; the store uses the AWS SDK's
// usual credentials. (Not run: it needs the network.)
func Example() {
	ctx := context.Background()
	store, err := storeurl.Open(ctx, "s3://my-bucket/agent1?region=us-east-1")
	if err != nil {
		log.Fatal(err)
	}
	h, err := memory.New(store, memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client := anthropic.NewClient()
	runner := client.Beta.Messages.NewToolRunner([]anthropic.BetaTool{claude.NewTool(h)}, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:             anthropic.ModelClaudeSonnet5_5,
			MaxTokens:         2048,
			Betas:             []anthropic.AnthropicBeta{claude.Beta},
			Tools:             []anthropic.BetaToolUnionParam{claude.ToolParam()},
			ContextManagement: claude.ContextManagement(),
			Messages: []anthropic.BetaMessageParam{
				anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("What do you remember about me?")),
			},
		},
	})
	msg, err := runner.RunToCompletion(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, block := range msg.Content {
		if block.Type == "text" {
			fmt.Println(block.Text)
		}
	}
}
