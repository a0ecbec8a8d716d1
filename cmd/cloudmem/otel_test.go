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
	c := newCollector(t)
	dir := t.TempDir()
	const content = "PLANTED-telemetry-content"
	stdin := `{"command":"create","path":"/memories/a.md","file_text":"` + content + `"}` + "\n" +
		`{"command":"view","path":"/memories/a.md"}` + "\n"

	// Without the endpoint: nothing is exported.
	if code, _, stderr := cloudmem([]string{"--store", dir, "exec"}, stdin, nil); code != 0 {
		t.Fatalf("exec: %d %s", code, stderr)
	}
	if _, bodies, _ := c.exports(); len(bodies) != 0 {
		t.Fatalf("%d exports without OTEL_EXPORTER_OTLP_ENDPOINT", len(bodies))
	}

	// The SDK's exporters read the process environment; the app its getenv.
	env := c.env(t)
	stdin = `{"command":"view","path":"/memories/a.md"}` + "\n" +
		`{"command":"str_replace","path":"/memories/a.md","old_str":"` + content + `","new_str":"` + content + `2"}` + "\n"
	if code, _, stderr := cloudmem([]string{"--store", dir, "exec"}, stdin, env); code != 0 || stderr != "" {
		t.Fatalf("exec: %d %s", code, stderr)
	}
	spans, bodies, paths := c.exports()
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

// TestTelemetryHistoryCommands: a history command traces the storage calls
// of its history Store (reading the records), as every command traces its
// storage calls: the telemetry layer sits beneath the history Store.
func TestTelemetryHistoryCommands(t *testing.T) {
	c := newCollector(t)
	store := "file://" + t.TempDir() + "?history=on"
	if code, _, stderr := cloudmem([]string{"--store", store, "exec"}, `{"command":"create","path":"/memories/a.md","file_text":"x"}`+"\n", nil); code != 0 {
		t.Fatalf("exec: %d %s", code, stderr)
	}
	if code, _, stderr := cloudmem([]string{"--store", store, "history", "/memories/a.md"}, "", c.env(t)); code != 0 || stderr != "" {
		t.Fatalf("history: %d %s", code, stderr)
	}
	spans, _, _ := c.exports()
	if want := []string{"storage get", "storage list", "storage stat"}; !slices.Equal(spans, want) {
		t.Errorf("spans exported %q, want %q", spans, want)
	}
}

// collector is an OTLP collector over http/protobuf for a test: it keeps
// every export's body and path, and the names of the spans.
type collector struct {
	url    string
	mu     sync.Mutex
	spans  []string
	bodies [][]byte
	paths  []string
}

// newCollector starts a collector, stopped when t ends.
func newCollector(t *testing.T) *collector {
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.bodies = append(c.bodies, body)
		c.paths = append(c.paths, r.URL.Path)
		if r.URL.Path == "/v1/traces" {
			var req colltrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err == nil {
				for _, rs := range req.GetResourceSpans() {
					for _, ss := range rs.GetScopeSpans() {
						for _, s := range ss.GetSpans() {
							c.spans = append(c.spans, s.GetName())
						}
					}
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// env sets the OTLP exporter's environment for c, in the process (the
// SDK's exporters read it) and in the map it returns (the app's getenv).
func (c *collector) env(t *testing.T) map[string]string {
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.url, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	return env
}

// exports returns the names of the spans exported so far, sorted, and
// every export's body and path.
func (c *collector) exports() (spans []string, bodies [][]byte, paths []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	spans = slices.Clone(c.spans)
	sort.Strings(spans)
	return spans, slices.Clone(c.bodies), slices.Clone(c.paths)
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
