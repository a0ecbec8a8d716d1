package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"sync"
	"testing"

	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a run exports a span per command
// and per storage call to the collector (here over http/protobuf), and no
// file content or store path; without it, the collector hears nothing.
func TestTelemetryExport(t *testing.T) {
	var mu sync.Mutex
	var spans []string
	var bodies [][]byte
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, body)
		paths = append(paths, r.URL.Path)
		if r.URL.Path == "/v1/traces" {
			var req colltrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err == nil {
				for _, rs := range req.GetResourceSpans() {
					for _, ss := range rs.GetScopeSpans() {
						for _, s := range ss.GetSpans() {
							spans = append(spans, s.GetName())
						}
					}
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()

	dir := t.TempDir()
	const content = "PLANTED-telemetry-content"
	stdin := `{"command":"create","path":"/memories/a.md","file_text":"` + content + `"}` + "\n" +
		`{"command":"view","path":"/memories/a.md"}` + "\n"

	// Without the endpoint: nothing is exported.
	if code, _, stderr := cloudmem([]string{"--store", dir, "exec"}, stdin, nil); code != 0 {
		t.Fatalf("exec: %d %s", code, stderr)
	}
	if len(bodies) != 0 {
		t.Fatalf("%d exports without OTEL_EXPORTER_OTLP_ENDPOINT", len(bodies))
	}

	// The SDK's exporters read the process environment; the app its getenv.
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	stdin = `{"command":"view","path":"/memories/a.md"}` + "\n" +
		`{"command":"str_replace","path":"/memories/a.md","old_str":"` + content + `","new_str":"` + content + `2"}` + "\n"
	if code, _, stderr := cloudmem([]string{"--store", dir, "exec"}, stdin, env); code != 0 || stderr != "" {
		t.Fatalf("exec: %d %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(spans)
	want := []string{"search_memory", "storage get", "storage get", "storage put", "update_memory"}
	if !slices.Equal(spans, want) {
		t.Errorf("spans exported %q, want %q", spans, want)
	}
	for _, b := range bodies {
		for _, leak := range []string{content, dir, "a.md"} {
			if bytes.Contains(b, []byte(leak)) {
				t.Errorf("an export holds %q", leak)
			}
		}
	}
	if !slices.Contains(paths, "/v1/metrics") {
		t.Errorf("export paths %q: no metrics", paths)
	}
}

// A telemetry configuration that cannot work is reported once on stderr,
// and the command runs as without it.
func TestTelemetryBadProtocol(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	code, stdout, stderr := cloudmem([]string{"--store", "mem://", "exec"}, `{"command":"view","path":"/memories"}`+"\n", env)
	wantErr := `cloudmem: telemetry is off: otlpsetup: unsupported OTLP protocol "http/json" for traces (use "grpc" or "http/protobuf")` + "\n"
	wantOut := `{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories","is_error":false}` + "\n"
	if code != 0 || stderr != wantErr || stdout != wantOut {
		t.Errorf("exec = %d\nstdout %q\nstderr %q\nwant 0, %q, %q", code, stdout, stderr, wantOut, wantErr)
	}
}
