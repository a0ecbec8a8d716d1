package integration

// Issue 13.1: nothing hangs. Every network backend, pointed at a port where
// nothing listens and at a server that accepts the connection and never
// answers, gives up within a small multiple of the URL's timeout= and answers
// the model "The memory storage failed: the storage call timed out after 1s"
// (or, for a refused connection, "... the storage server could not be
// reached").
// These tests need no server: the endpoints are local (package netfault).

import (
	"errors"
	"testing"
	"time"

	_ "github.com/cloudmem/cloudmem/backends/all"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/netfault"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

const (
	faultTimeout = time.Second
	// faultBound is the longest a command may take against a dead endpoint
	// with faultTimeout: a small multiple, for the slack of a loaded machine.
	faultBound = 4 * faultTimeout
)

// faultURLs returns, per backend, the store URL that reaches addr with
// timeout=1s, after setting the environment its SDK needs to skip any
// credential lookup (which could itself wait on the network).
func faultURLs(t *testing.T, addr string) map[string]string {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"+
		"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"+
		"BlobEndpoint=http://"+addr+"/devstoreaccount1;")
	return map[string]string{
		"s3":    "s3://bucket?endpoint=http://" + addr + "&path_style=true&timeout=1s",
		"gcs":   "gs://bucket?endpoint=http://" + addr + "&timeout=1s",
		"azure": "azblob://container?timeout=1s",
		"redis": "redis://" + addr + "/0?timeout=1s",
	}
}

const (
	timedOut    = "Error: The memory storage failed: the storage call timed out after 1s"
	unreachable = "Error: The memory storage failed: the storage server could not be reached"
)

// TestTimeoutClosedPort: a refused connection is said as such, before the
// deadline, on S3, GCS and Azure (the SDKs do not retry it: the GCS and
// Azure stores tell them not to); go-redis redials until the deadline ends
// it.
func TestTimeoutClosedPort(t *testing.T) {
	testTimeout(t, netfault.ClosedPort(t), map[string]string{"s3": unreachable, "gcs": unreachable, "azure": unreachable})
}

func TestTimeoutSilentServer(t *testing.T) { testTimeout(t, netfault.Silent(t), nil) }

// testTimeout runs a view and a create against every backend at addr: each
// answers timedOut (or the text other gives for the backend) within
// faultBound.
func testTimeout(t *testing.T, addr string, other map[string]string) {
	for name, rawURL := range faultURLs(t, addr) {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			s, err := storeurl.Open(t.Context(), rawURL)
			if err != nil {
				// No backend calls the server in Open (Redis loads its
				// scripts at their first run); a timeout there is kept
				// to the same bound.
				var te *blob.TimeoutError
				if !errors.As(err, &te) || te.ModelCause() != "the storage call timed out after 1s" {
					t.Fatalf("Open = %v, want a *blob.TimeoutError of 1s", err)
				}
				checkElapsed(t, "Open", start)
				return
			}
			t.Cleanup(func() { _ = blob.Close(s) })
			h, err := memory.New(s, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := timedOut
			if text, ok := other[name]; ok {
				want = text
			}
			for _, input := range []string{
				`{"command":"view","path":"/memories"}`,
				`{"command":"create","path":"/memories/a.md","file_text":"x"}`,
			} {
				start := time.Now()
				res := h.Execute(t.Context(), []byte(input))
				if !res.IsError || res.Text != want {
					t.Fatalf("%s = %q, want %q", input, res.Text, want)
				}
				checkElapsed(t, input, start)
			}
		})
	}
}

func checkElapsed(t *testing.T, what string, start time.Time) {
	t.Helper()
	if d := time.Since(start); d > faultBound {
		t.Errorf("%s took %v with timeout=%v, want under %v", what, d.Round(time.Millisecond), faultTimeout, faultBound)
	}
}
