package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/cloudmem/cloudmem/blob"
)

// What operators need of an HTTP (docs/mcp.md "Operating the service"): a
// readiness check, caps on the requests in flight, the client's trace
// continued, an access log.

// ReadyPath answers 200 "ready" while the store answers, 503 otherwise; no
// token needed.
const ReadyPath = "/readyz"

// Defaults of HTTPOptions' in-flight caps.
const (
	DefaultMaxInFlight       = 256
	DefaultMaxTenantInFlight = 64
	// readyTimeout bounds the readiness check's storage call.
	readyTimeout = 5 * time.Second
	// readyKey is the key the readiness check reads (absent is fine).
	readyKey = "cloudmem-readiness-check"
)

// requestInfo is what the access log says of a request, filled in as it is
// served.
type requestInfo struct {
	tenant string
	authed bool
}

type requestInfoKey struct{}

// statusWriter records a response's status for the access log; Unwrap
// keeps http.ResponseController working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("mcpserver: the connection cannot be hijacked")
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP serves a request (see route), continuing the client's W3C trace
// context (traceparent, tracestate) into the spans of its commands, and
// logs it: one structured line per request, with its method, path, status,
// duration, tenant, client address, MCP method and trace id; never a token,
// a header's value or a body.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	info := &requestInfo{}
	ctx = context.WithValue(ctx, requestInfoKey{}, info)
	sw := &statusWriter{ResponseWriter: w}
	h.route(sw, r.WithContext(ctx))
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	attrs := []any{
		"method", r.Method, "path", r.URL.Path, "status", sw.status,
		"duration", time.Since(began).Round(time.Microsecond), "remote", r.RemoteAddr,
	}
	if info.authed {
		attrs = append(attrs, "tenant", info.tenant)
	}
	if m := r.Header.Get("Mcp-Method"); m != "" && len(m) <= 64 {
		attrs = append(attrs, "mcp_method", m)
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		attrs = append(attrs, "trace_id", sc.TraceID().String())
	}
	level := slog.LevelInfo
	if r.URL.Path == HealthPath || r.URL.Path == ReadyPath { // a load balancer's probes, every few seconds
		level = slog.LevelDebug
	}
	h.opts.Logger.Log(r.Context(), level, "mcpserver: request", attrs...)
}

// serveReady answers whether the store answers: a read of one key within
// readyTimeout (the key being absent is an answer).
func (h *HTTP) serveReady(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	h.mu.Lock()
	draining := h.draining
	h.mu.Unlock()
	if draining {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "shutting down")
		return
	}
	if h.opts.Store != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if _, err := h.opts.Store.Stat(ctx, readyKey); err != nil && !errors.Is(err, blob.ErrNotExist) {
			h.opts.Logger.Warn("mcpserver: readiness check: the store does not answer", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "the store does not answer")
			return
		}
	}
	fmt.Fprintln(w, "ready")
}

// admit counts a request of tenant in flight, or returns the HTTP status
// and the text of its refusal (docs/spec.md "Sessions over HTTP"). A
// request admitted must be released.
func (h *HTTP) admit(tenant string) (int, string) {
	h.fmu.Lock()
	defer h.fmu.Unlock()
	switch n := h.tenantInFlight[tenant]; {
	case h.opts.MaxTenantInFlight >= 0 && n >= h.opts.MaxTenantInFlight:
		return http.StatusTooManyRequests, fmt.Sprintf("Too many requests: this token has %d requests in flight, the limit is %d. "+
			"Wait for an answer before sending more.", n, h.opts.MaxTenantInFlight)
	case h.opts.MaxInFlight >= 0 && h.inFlight >= h.opts.MaxInFlight:
		return http.StatusServiceUnavailable, fmt.Sprintf("Too many requests: the server has %d requests in flight, the limit is %d. "+
			"Try again later.", h.inFlight, h.opts.MaxInFlight)
	}
	h.tenantInFlight[tenant]++
	h.inFlight++
	return 0, ""
}

// release ends what admit counted.
func (h *HTTP) release(tenant string) {
	h.fmu.Lock()
	defer h.fmu.Unlock()
	h.inFlight--
	if h.tenantInFlight[tenant]--; h.tenantInFlight[tenant] == 0 {
		delete(h.tenantInFlight, tenant)
	}
}
