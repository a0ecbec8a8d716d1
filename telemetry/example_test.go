package telemetry_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/telemetry"
)

// A handler whose commands and storage calls are traced. A program would
// install an exporting provider (see package otlpsetup) and leave
// TracerProvider nil; here an in-memory recorder shows the spans.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	in, err := telemetry.New(telemetry.Options{TracerProvider: tp, Backend: "mem"})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := memory.New(in.Store(mem.New(nil)), memory.Options{Observer: in.Observer()})
	if err != nil {
		fmt.Println(err)
		return
	}
	h.Create(context.Background(), "/memories/notes.md", "remember this\n")
	h.View(context.Background(), "/memories/notes.md", nil)

	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// storage get
	// storage stat
	// storage list
	// storage list
	// storage put
	// storage put
	// storage put
	// storage list
	// create_memory
	// storage get
	// search_memory
}
