package otlpsetup_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/cloudmem/cloudmem/telemetry/otlpsetup"
)

// clearEnv unsets every variable Setup or the exporters read, for the
// test's duration.
func clearEnv(t *testing.T) {
	for _, v := range []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_INSECURE", "OTEL_SDK_DISABLED",
		"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	} {
		t.Setenv(v, "")
	}
}

// Without OTEL_EXPORTER_OTLP_ENDPOINT (or with the SDK disabled) Setup
// installs nothing.
func TestNothingWithoutEndpoint(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"no endpoint":  {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		"sdk disabled": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range env {
				t.Setenv(k, v)
			}
			tp, mp, prop := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetTextMapPropagator()
			res, err := otlpsetup.Setup(context.Background(), otlpsetup.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Enabled || res.TracesProtocol != "" || res.MetricsProtocol != "" {
				t.Errorf("Setup = %+v, want nothing enabled", res)
			}
			if otel.GetTracerProvider() != tp || otel.GetMeterProvider() != mp || otel.GetTextMapPropagator() != prop {
				t.Error("Setup changed a global provider")
			}
			if err := res.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
}

// An unknown protocol is an error, and installs nothing.
func TestBadProtocol(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json")
	tp := otel.GetTracerProvider()
	_, err := otlpsetup.Setup(context.Background(), otlpsetup.Options{})
	if !errors.Is(err, otlpsetup.ErrProtocol) {
		t.Fatalf("Setup: %v, want ErrProtocol", err)
	}
	want := `otlpsetup: unsupported OTLP protocol "http/json" for metrics (use "grpc" or "http/protobuf")`
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if otel.GetTracerProvider() != tp {
		t.Error("a failed Setup changed the tracer provider")
	}
}

// received is what a test collector got: span names and metric names.
type received struct {
	mu       sync.Mutex
	spans    []string
	metrics  []string
	services []string
}

func (r *received) addTraces(req *colltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				r.services = append(r.services, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, s.GetName())
			}
		}
	}
}

func (r *received) addMetrics(req *collmetrics.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				r.metrics = append(r.metrics, m.GetName())
			}
		}
	}
}

// emit makes one span and one counter increment through the globals, then
// shuts the providers down, which flushes both to the collector.
func emit(t *testing.T, res *otlpsetup.Result) {
	t.Helper()
	ctx := context.Background()
	_, span := otel.Tracer("test").Start(ctx, "test-span")
	span.End()
	c, err := otel.Meter("test").Int64Counter("test.counter")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(ctx, 1)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := res.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func (r *received) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Equal(r.spans, []string{"test-span"}) {
		t.Errorf("spans received %q, want [test-span]", r.spans)
	}
	if !slices.Equal(r.metrics, []string{"test.counter"}) {
		t.Errorf("metrics received %q, want [test.counter]", r.metrics)
	}
	if !slices.Equal(r.services, []string{"otlpsetup-test"}) {
		t.Errorf("service.name %q, want [otlpsetup-test]", r.services)
	}
}

// With http/protobuf, spans and metrics reach the collector's /v1/traces
// and /v1/metrics.
func TestHTTPProtobuf(t *testing.T) {
	var got received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/v1/traces":
			var req colltrace.ExportTraceServiceRequest
			if proto.Unmarshal(body, &req) == nil {
				got.addTraces(&req)
			}
		case "/v1/metrics":
			var req collmetrics.ExportMetricsServiceRequest
			if proto.Unmarshal(body, &req) == nil {
				got.addMetrics(&req)
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "otlpsetup-test")
	res, err := otlpsetup.Setup(context.Background(), otlpsetup.Options{ServiceName: "ignored: the environment names the service"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Enabled || res.TracesProtocol != otlpsetup.ProtocolHTTP || res.MetricsProtocol != otlpsetup.ProtocolHTTP {
		t.Fatalf("Setup = %+v, want both signals over http/protobuf", res)
	}
	emit(t, res)
	got.check(t)
}

type traceServer struct {
	colltrace.UnimplementedTraceServiceServer
	got *received
}

func (s traceServer) Export(_ context.Context, req *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	s.got.addTraces(req)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

type metricsServer struct {
	collmetrics.UnimplementedMetricsServiceServer
	got *received
}

func (s metricsServer) Export(_ context.Context, req *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	s.got.addMetrics(req)
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}

// With grpc, spans and metrics reach the collector's gRPC services.
func TestGRPC(t *testing.T) {
	var got received
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	colltrace.RegisterTraceServiceServer(srv, traceServer{got: &got})
	collmetrics.RegisterMetricsServiceServer(srv, metricsServer{got: &got})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	res, err := otlpsetup.Setup(context.Background(), otlpsetup.Options{ServiceName: "otlpsetup-test"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Enabled || res.TracesProtocol != otlpsetup.ProtocolGRPC || res.MetricsProtocol != otlpsetup.ProtocolGRPC {
		t.Fatalf("Setup = %+v, want both signals over grpc", res)
	}
	emit(t, res)
	got.check(t)
}

// OTEL_METRICS_EXPORTER=none leaves metrics out; a per-signal protocol
// overrides the general one.
func TestSignalSelection(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	mp := otel.GetMeterProvider()
	res, err := otlpsetup.Setup(context.Background(), otlpsetup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = res.Shutdown(ctx) // nothing to flush; the endpoint is closed
	}()
	if !res.Enabled || res.TracesProtocol != otlpsetup.ProtocolGRPC || res.MetricsProtocol != "" {
		t.Errorf("Setup = %+v, want traces over grpc and no metrics", res)
	}
	if otel.GetMeterProvider() != mp {
		t.Error("the meter provider changed with OTEL_METRICS_EXPORTER=none")
	}
}
