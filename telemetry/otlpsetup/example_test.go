package otlpsetup_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cloudmem/cloudmem/telemetry/otlpsetup"
)

// A program calls Setup first and Shutdown last. Run with
// OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 it exports; run without
// it (as here) it configures nothing and costs nothing.
func ExampleSetup() {
	os.Unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT") // for the example: no collector

	otel, err := otlpsetup.Setup(context.Background(), otlpsetup.Options{ServiceName: "my-agent"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = otel.Shutdown(ctx)
	}()
	fmt.Println("exporting:", otel.Enabled)
	// Output: exporting: false
}
