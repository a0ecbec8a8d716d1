package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

// maxLine is the longest command line exec accepts, newline excluded.
const maxLine = 16 << 20

// tooLongResult is the result for a line over maxLine, in the handler's wording
// for malformed input.
var tooLongResult = memory.InvalidInput(fmt.Sprintf("the input is longer than %d bytes", maxLine))

func init() { register(newExecCmd) }

// newExecCmd is "cloudmem exec": one memory command per input line, one
// result per output line, until EOF. A bad line gets its error result and
// the next line runs; the results carry the errors, so exec exits 0 at EOF
// whatever they were. It exits 1 when the store cannot be opened or stdin or
// stdout fails. Every command runs as the actor --actor names (default
// user@host), which the layers that record changes keep.
func newExecCmd(a *app) *cobra.Command {
	var actor string
	cmd := &cobra.Command{
		Use:   "exec [--actor NAME] < commands.jsonl",
		Short: "Run memory commands read from stdin, one JSON object per line",
		Long: "Reads memory commands (the input JSON of a tool_use block), one per line, from stdin,\n" +
			"and writes one result per line to stdout, in the same order:\n" +
			`  {"content":"<text>","is_error":false}` + "\n" +
			"An image result's content is an array with one image block. A line that is not a valid\n" +
			"command gets an error result and the next line runs.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := a.withActor(cmd.Context(), actor)
			h, done, err := a.openHandler(ctx, readWrite, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			return a.exec(ctx, h)
		},
	}
	addActorFlag(cmd, &actor)
	return cmd
}

// exec runs the commands of stdin with h; see newExecCmd.
func (a *app) exec(ctx context.Context, h *memory.Handler) error {
	in := bufio.NewReaderSize(a.stdin, 64<<10)
	out := bufio.NewWriter(a.stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, overLong, readErr := readLine(in, maxLine)
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return fmt.Errorf("reading stdin: %w", readErr)
		}
		if len(line) > 0 || overLong || readErr == nil {
			res := tooLongResult
			if !overLong {
				res = h.Execute(ctx, line)
			}
			if err := enc.Encode(wireResult(res)); err != nil {
				return fmt.Errorf("writing stdout: %w", err)
			}
			// Flush each result: a caller on the other end of a pipe
			// waits for it before sending the next command.
			if err := out.Flush(); err != nil {
				return fmt.Errorf("writing stdout: %w", err)
			}
		}
		if readErr != nil { // io.EOF
			return nil
		}
	}
}

// readLine reads one line, without its '\n'. A line longer than max bytes
// is consumed to its end but not kept: readLine returns tooLong and no data.
// At the end of input it returns io.EOF together with the last, unterminated
// line (which may be empty).
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if n := len(chunk); err == nil && n > 0 {
			chunk = chunk[:n-1] // the newline
		}
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// result is the JSON form of a memory.Result on exec's output.
type result struct {
	Content any  `json:"content"` // a string, or []imageBlock
	IsError bool `json:"is_error"`
}

// imageBlock is an image content block of the Messages API.
type imageBlock struct {
	Type   string      `json:"type"` // "image"
	Source imageSource `json:"source"`
}

type imageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func wireResult(r memory.Result) result {
	if r.Image == nil {
		return result{Content: r.Text, IsError: r.IsError}
	}
	return result{
		Content: []imageBlock{{
			Type: "image",
			Source: imageSource{
				Type:      "base64",
				MediaType: r.Image.MediaType,
				Data:      base64.StdEncoding.EncodeToString(r.Image.Data),
			},
		}},
		IsError: r.IsError,
	}
}
