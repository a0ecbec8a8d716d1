package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cloudmem/cloudmem/backends/azure"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/telemetry"
	"github.com/cloudmem/cloudmem/telemetry/otlpsetup"
)

// otlpReceiver is a local OTLP/HTTP collector: it keeps every export's
// body and the instrumentation scopes of its spans and metrics.
type otlpReceiver struct {
	mu     sync.Mutex
	bodies [][]byte
	scopes []string
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, body)
	switch req.URL.Path {
	case "/v1/traces":
		var m colltrace.ExportTraceServiceRequest
		if proto.Unmarshal(body, &m) == nil {
			for _, rs := range m.GetResourceSpans() {
				for _, ss := range rs.GetScopeSpans() {
					r.scopes = append(r.scopes, "spans of "+ss.GetScope().GetName())
				}
			}
		}
	case "/v1/metrics":
		var m collmetrics.ExportMetricsServiceRequest
		if proto.Unmarshal(body, &m) == nil {
			for _, rm := range m.GetResourceMetrics() {
				for _, sm := range rm.GetScopeMetrics() {
					r.scopes = append(r.scopes, "metrics of "+sm.GetScope().GetName())
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// TestSDKTelemetryStaysOut (issue 26, item 2): with OTLP export set up as
// a program does (otlpsetup, the global providers), memory commands on
// every backend, failing ones among them, export only package telemetry's
// spans and metrics, and no export holds a memory path, file content, the
// bucket, a server's address or an error text. Before, the GCS client
// exported its own spans with url.full (the bucket and the path),
// server.address and exception.message.
func TestSDKTelemetryStaysOut(t *testing.T) {
	endpoint, bucket := s3Server(t)
	gcsBucket := gcsServer(t)
	conn, container := azureServer(t)
	t.Setenv(azure.ConnectionStringEnv, conn)
	redisAddr := server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR")

	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	res, err := otlpsetup.Setup(t.Context(), otlpsetup.Options{ServiceName: "telemetry-test"})
	if err != nil || !res.Enabled {
		t.Fatalf("otlpsetup.Setup = %+v, %v", res, err)
	}
	t.Cleanup(func() { // the other tests of this process run without it
		otel.SetTracerProvider(tracenoop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
	})

	dir := "telemetry/" + uniquePrefix()
	const content = "PLANTED-content-7f3a"
	const name = "planted-name-2c9d"
	stores := map[string]string{
		"s3":    "s3://" + bucket + "/" + dir + "?endpoint=" + url.QueryEscape(endpoint) + "&path_style=true&region=us-east-1",
		"gcs":   "gs://" + gcsBucket + "/" + dir,
		"azure": "azblob://" + container + "/" + dir,
		"redis": "redis://" + redisAddr + "/0?prefix=" + dir,
	}
	for backend, raw := range stores {
		in, err := telemetry.New(telemetry.Options{Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		s := in.Store(openURL(t, raw))
		h, err := memory.New(s, memory.Options{Observer: in.Observer(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		path := "/memories/" + name + ".md"
		for _, r := range []memory.Result{
			h.Create(ctx, path, content+"\n"),
			h.View(ctx, path, nil),
			h.StrReplace(ctx, path, "not there", "x"),               // an error result
			h.View(ctx, "/memories/"+name+"-missing/"+content, nil), // another
			h.Rename(ctx, path, "/memories/"+name+"-moved.md"),
			h.Delete(ctx, "/memories/"+name+"-moved.md"),
		} {
			if errors.Is(r.Err, memory.ErrStorage) {
				t.Fatalf("%s: %s", backend, r.Text)
			}
		}
	}
	if err := res.Shutdown(context.Background()); err != nil {
		t.Fatalf("flushing the exports: %v", err)
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	scopes := slices.Compact(slices.Sorted(slices.Values(recv.scopes)))
	if want := []string{"metrics of " + telemetry.ScopeName, "spans of " + telemetry.ScopeName}; !slices.Equal(scopes, want) {
		t.Errorf("exported scopes %q, want only %q", scopes, want)
	}
	leaks := []string{content, name, dir, bucket, gcsBucket, container, redisAddr, "devstoreaccount1", "does not exist"}
	for _, raw := range []string{endpoint, "http://" + os.Getenv("STORAGE_EMULATOR_HOST"), connField(conn, "BlobEndpoint")} {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			leaks = append(leaks, u.Host)
		}
	}
	for _, body := range recv.bodies {
		for _, leak := range leaks {
			if bytes.Contains(body, []byte(leak)) {
				t.Errorf("an export holds %q", leak)
			}
		}
	}
	if len(recv.bodies) == 0 {
		t.Error("nothing was exported")
	}
}
