package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/claude"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/telemetry"
)

// rig is an Instrumentation recording into the SDK's in-memory exporters.
type rig struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	in     *telemetry.Instrumentation
}

func newRig(t *testing.T, opts telemetry.Options) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	opts.TracerProvider = r.tp
	opts.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	in, err := telemetry.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.in = in
	return r
}

// handler returns a Handler over the instrumented store s.
func (r *rig) handler(t *testing.T, s blob.Store, opts memory.Options) *memory.Handler {
	t.Helper()
	opts.Observer = r.in.Observer()
	opts.Logger = slog.New(slog.DiscardHandler)
	h, err := memory.New(r.in.Store(s), opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// run executes input under a parent span (standing for the agent's tool
// span), and returns the Result, the parent's span context and the spans
// ended meanwhile.
func (r *rig) run(t *testing.T, h *memory.Handler, input string) (memory.Result, trace.SpanContext, []sdktrace.ReadOnlySpan) {
	t.Helper()
	before := len(r.spans.Ended())
	ctx, parent := r.tp.Tracer("test").Start(context.Background(), "execute_tool memory")
	res := h.Execute(ctx, []byte(input))
	parent.End()
	ended := r.spans.Ended()[before:]
	return res, parent.SpanContext(), ended[:len(ended)-1] // drop the parent itself
}

// attrs renders a span's attributes as name=value, sorted.
func attrs(kvs []attribute.KeyValue) string {
	var out []string
	for _, kv := range kvs {
		out = append(out, string(kv.Key)+"="+kv.Value.Emit())
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// describeStorage renders the storage spans of a command, one line each:
// name, attributes, status.
func describeSpan(s sdktrace.ReadOnlySpan) string {
	d := s.Name() + " [" + s.SpanKind().String() + "] " + attrs(s.Attributes())
	if s.Status().Code == codes.Error {
		d += " status=Error(" + s.Status().Description + ")"
	}
	for _, e := range s.Events() {
		d += " event=" + e.Name
	}
	return d
}

// Every command gets one span, a child of the caller's, whose children are
// its storage calls, with the attributes the package documents.
func TestCommandSpans(t *testing.T) {
	r := newRig(t, telemetry.Options{Backend: "mem"})
	h := r.handler(t, mem.New(nil), memory.Options{})
	for _, c := range []struct {
		input   string
		command string   // the command span
		storage []string // its children, compared in byte order: calls made at once end in any order
	}{{
		input:   `{"command":"create","path":"/memories/notes.md","file_text":"hello\nworld\n"}`,
		command: "create_memory [internal] cloudmem.memory.command=create cloudmem.memory.result=ok cloudmem.memory.retries=0 cloudmem.storage.backend=mem gen_ai.operation.name=create_memory",
		storage: []string{
			// The file count: none yet, so the create probes first.
			"storage get [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=0 cloudmem.storage.operation=get cloudmem.storage.result=not_found",
			// Is it a file, a directory?
			"storage stat [client] cloudmem.storage.backend=mem cloudmem.storage.operation=stat cloudmem.storage.result=not_found",
			"storage list [client] cloudmem.storage.backend=mem cloudmem.storage.objects=0 cloudmem.storage.operation=list cloudmem.storage.result=ok",
			// The store is counted and the count written with this
			// create's reservation, then the file.
			"storage list [client] cloudmem.storage.backend=mem cloudmem.storage.objects=0 cloudmem.storage.operation=list cloudmem.storage.result=ok",
			"storage put [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=134 cloudmem.storage.condition=if_absent cloudmem.storage.operation=put cloudmem.storage.result=ok",
			"storage put [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=12 cloudmem.storage.condition=if_absent cloudmem.storage.operation=put cloudmem.storage.result=ok",
			// The reservation confirmed.
			"storage put [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=54 cloudmem.storage.condition=if_version cloudmem.storage.operation=put cloudmem.storage.result=ok",
			// The check that no file lies beneath the new one.
			"storage list [client] cloudmem.storage.backend=mem cloudmem.storage.objects=0 cloudmem.storage.operation=list cloudmem.storage.result=ok",
		},
	}, {
		input:   `{"command":"view","path":"/memories/notes.md"}`,
		command: "search_memory [internal] cloudmem.memory.command=view cloudmem.memory.result=ok cloudmem.memory.retries=0 cloudmem.storage.backend=mem gen_ai.operation.name=search_memory",
		storage: []string{
			"storage get [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=12 cloudmem.storage.operation=get cloudmem.storage.result=ok",
		},
	}, {
		input:   `{"command":"str_replace","path":"/memories/notes.md","old_str":"world","new_str":"there"}`,
		command: "update_memory [internal] cloudmem.memory.command=str_replace cloudmem.memory.result=ok cloudmem.memory.retries=0 cloudmem.storage.backend=mem gen_ai.operation.name=update_memory",
		storage: []string{
			"storage get [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=12 cloudmem.storage.operation=get cloudmem.storage.result=ok",
			"storage put [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=12 cloudmem.storage.condition=if_version cloudmem.storage.operation=put cloudmem.storage.result=ok",
		},
	}, {
		input:   `{"command":"insert","path":"/memories/notes.md","insert_line":0,"insert_text":"# Notes"}`,
		command: "update_memory [internal] cloudmem.memory.command=insert cloudmem.memory.result=ok cloudmem.memory.retries=0 cloudmem.storage.backend=mem gen_ai.operation.name=update_memory",
		storage: []string{
			"storage get [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=12 cloudmem.storage.operation=get cloudmem.storage.result=ok",
			"storage put [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=20 cloudmem.storage.condition=if_version cloudmem.storage.operation=put cloudmem.storage.result=ok",
		},
	}, {
		input:   `{"command":"rename","old_path":"/memories/notes.md","new_path":"/memories/old.md"}`,
		command: "update_memory [internal] cloudmem.memory.command=rename cloudmem.memory.result=ok cloudmem.memory.retries=0 cloudmem.storage.backend=mem gen_ai.operation.name=update_memory",
		storage: []string{ // mem keeps no name from being both: the look for a racing create follows
			"storage rename [client] cloudmem.storage.backend=mem cloudmem.storage.operation=rename cloudmem.storage.result=ok",
			"storage stat [client] cloudmem.storage.backend=mem cloudmem.storage.operation=stat cloudmem.storage.result=ok",
			"storage list [client] cloudmem.storage.backend=mem cloudmem.storage.objects=0 cloudmem.storage.operation=list cloudmem.storage.result=ok",
		},
	}, {
		input:   `{"command":"view","path":"/memories"}`,
		command: "search_memory [internal] cloudmem.memory.command=view cloudmem.memory.result=ok cloudmem.memory.retries=0 cloudmem.storage.backend=mem gen_ai.operation.name=search_memory",
		storage: []string{
			"storage list [client] cloudmem.storage.backend=mem cloudmem.storage.objects=2 cloudmem.storage.operation=list cloudmem.storage.result=ok", // the file and the file count
		},
	}, {
		input:   `{"command":"delete","path":"/memories/old.md"}`,
		command: "delete_memory [internal] cloudmem.memory.command=delete cloudmem.memory.result=ok cloudmem.memory.retries=0 cloudmem.storage.backend=mem gen_ai.operation.name=delete_memory",
		storage: []string{ // the count as the create left it, far from the limit: no Get of it
			"storage delete [client] cloudmem.storage.backend=mem cloudmem.storage.condition=none cloudmem.storage.operation=delete cloudmem.storage.result=ok",
		},
	}, {
		input:   `{"command":"view","path":"/memories/old.md"}`,
		command: "search_memory [internal] cloudmem.memory.command=view cloudmem.memory.result=error cloudmem.memory.retries=0 cloudmem.storage.backend=mem error.type=not_found gen_ai.operation.name=search_memory status=Error(not_found)",
		storage: []string{
			"storage get [client] cloudmem.storage.backend=mem cloudmem.storage.bytes=0 cloudmem.storage.operation=get cloudmem.storage.result=not_found",
			"storage list [client] cloudmem.storage.backend=mem cloudmem.storage.objects=0 cloudmem.storage.operation=list cloudmem.storage.result=ok",
		},
	}, {
		input:   `{"command":"fly","path":"/memories/x"}`,
		command: "memory [internal] cloudmem.memory.command=invalid cloudmem.memory.result=error cloudmem.memory.retries=0 cloudmem.storage.backend=mem error.type=invalid_input gen_ai.operation.name=memory status=Error(invalid_input)",
	}} {
		res, parent, spans := r.run(t, h, c.input)
		if len(spans) == 0 {
			t.Fatalf("%s: no span", c.input)
		}
		cmd := spans[len(spans)-1]
		if got := describeSpan(cmd); got != c.command {
			t.Errorf("%s (result %q):\n command span %s\n         want %s", c.input, res.Text, got, c.command)
		}
		if cmd.Parent().SpanID() != parent.SpanID() || cmd.SpanContext().TraceID() != parent.TraceID() {
			t.Errorf("%s: the command span is not a child of the caller's span", c.input)
		}
		var got []string
		for _, s := range spans[:len(spans)-1] {
			got = append(got, describeSpan(s))
			if s.Parent().SpanID() != cmd.SpanContext().SpanID() {
				t.Errorf("%s: storage span %q is not a child of the command span", c.input, s.Name())
			}
		}
		if !slices.Equal(sortedSpans(got), sortedSpans(c.storage)) {
			t.Errorf("%s: storage spans\n %s\nwant\n %s", c.input, strings.Join(got, "\n "), strings.Join(c.storage, "\n "))
		}
	}
}

// sortedSpans returns the span descriptions d in byte order.
func sortedSpans(d []string) []string { return slices.Sorted(slices.Values(d)) }

// metrics collects the reader's metrics by name.
func (r *rig) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// points renders the data points of a counter or histogram as
// "attributes: value" lines (count of observations for histograms), sorted.
func points(data metricdata.Aggregation) []string {
	var out []string
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, fmt.Sprintf("%s: %d", attrs(p.Attributes.ToSlice()), p.Value))
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, fmt.Sprintf("%s: %d", attrs(p.Attributes.ToSlice()), p.Count))
		}
	}
	sort.Strings(out)
	return out
}

// The metrics count what the commands did.
func TestMetrics(t *testing.T) {
	r := newRig(t, telemetry.Options{Backend: "mem"})
	h := r.handler(t, mem.New(nil), memory.Options{})
	for _, in := range []string{
		`{"command":"create","path":"/memories/a.md","file_text":"12345"}`,
		`{"command":"create","path":"/memories/a.md","file_text":"12345"}`, // exists
		`{"command":"view","path":"/memories/a.md"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"3","new_str":"333"}`,
		`{"command":"delete","path":"/memories/a.md"}`,
	} {
		h.Execute(context.Background(), []byte(in))
	}
	m := r.metrics(t)
	want := map[string][]string{
		telemetry.MetricCommandDuration: {
			"cloudmem.memory.command=create cloudmem.memory.result=error cloudmem.storage.backend=mem error.type=exists gen_ai.operation.name=create_memory: 1",
			"cloudmem.memory.command=create cloudmem.memory.result=ok cloudmem.storage.backend=mem gen_ai.operation.name=create_memory: 1",
			"cloudmem.memory.command=delete cloudmem.memory.result=ok cloudmem.storage.backend=mem gen_ai.operation.name=delete_memory: 1",
			"cloudmem.memory.command=str_replace cloudmem.memory.result=ok cloudmem.storage.backend=mem gen_ai.operation.name=update_memory: 1",
			"cloudmem.memory.command=view cloudmem.memory.result=ok cloudmem.storage.backend=mem gen_ai.operation.name=search_memory: 1",
		},
		telemetry.MetricStorageDuration: {
			"cloudmem.storage.backend=mem cloudmem.storage.operation=delete cloudmem.storage.result=ok: 1",
			"cloudmem.storage.backend=mem cloudmem.storage.operation=get cloudmem.storage.result=not_found: 1",           // no file count yet
			"cloudmem.storage.backend=mem cloudmem.storage.operation=get cloudmem.storage.result=ok: 2",                  // view, str_replace (the delete trusts the count it remembers)
			"cloudmem.storage.backend=mem cloudmem.storage.operation=list cloudmem.storage.result=ok: 3",                 // create: beneath, the count, beneath
			"cloudmem.storage.backend=mem cloudmem.storage.operation=put cloudmem.storage.result=ok: 6",                  // create 3, the second create's count and its taking back, str_replace
			"cloudmem.storage.backend=mem cloudmem.storage.operation=put cloudmem.storage.result=precondition_failed: 1", // the second create's file
			"cloudmem.storage.backend=mem cloudmem.storage.operation=stat cloudmem.storage.result=not_found: 1",
			"cloudmem.storage.backend=mem cloudmem.storage.operation=stat cloudmem.storage.result=ok: 1", // the second create finds the file
		},
		telemetry.MetricBytesRead: {
			"cloudmem.storage.backend=mem cloudmem.storage.operation=get: 10", // the view's 5 bytes, str_replace's 5
		},
		telemetry.MetricBytesWritten: {
			"cloudmem.storage.backend=mem cloudmem.storage.operation=put: 304", // 12 of files, the rest the file count
		},
	}
	for name, w := range want {
		if got := points(m[name]); !slices.Equal(got, w) {
			t.Errorf("%s:\n %s\nwant\n %s", name, strings.Join(got, "\n "), strings.Join(w, "\n "))
		}
	}
	for _, name := range []string{telemetry.MetricConflicts, telemetry.MetricRetries, telemetry.MetricGaveUp, telemetry.MetricStorageErrors} {
		if got := points(m[name]); len(got) != 0 {
			t.Errorf("%s: %v, want no data", name, got)
		}
	}
}

// rivalStore makes a rival writer rewrite every file between a command's
// Get and its Put, for the first n Gets, so that the command's
// Put(IfVersion) loses the race.
type rivalStore struct {
	blob.Store
	mu sync.Mutex
	n  int
}

func (s *rivalStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	data, info, err := s.Store.Get(ctx, key, limit)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.n > 0 {
		s.n--
		if _, err := s.Store.Put(context.Background(), key, append(data, 'r'), blob.Cond{}); err != nil {
			return nil, blob.Info{}, err
		}
	}
	return data, info, err
}

// A conflict shows as retries on the span and in the counters; a command
// that keeps losing gives up, and that is counted too.
func TestConflictsAndRetries(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, telemetry.Options{Backend: "mem"})
	inner := mem.New(nil)
	if _, err := inner.Put(ctx, "a.md", []byte("one\n"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	rival := &rivalStore{Store: inner, n: 2}
	h := r.handler(t, rival, memory.Options{Retries: 2})

	// Two conflicts, then success on the third attempt.
	res, _, spans := r.run(t, h, `{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":"x"}`)
	if res.IsError {
		t.Fatalf("insert: %s", res.Text)
	}
	want := "update_memory [internal] cloudmem.memory.command=insert cloudmem.memory.result=ok cloudmem.memory.retries=2 cloudmem.storage.backend=mem gen_ai.operation.name=update_memory event=conflict, retrying event=conflict, retrying"
	if got := describeSpan(spans[len(spans)-1]); got != want {
		t.Errorf("command span\n %s\nwant\n %s", got, want)
	}
	var results []string
	for _, s := range spans[:len(spans)-1] {
		for _, kv := range s.Attributes() {
			if kv.Key == "cloudmem.storage.result" {
				results = append(results, s.Name()+" "+kv.Value.AsString())
			}
		}
	}
	wantResults := []string{"storage get ok", "storage put precondition_failed", "storage get ok", "storage put precondition_failed", "storage get ok", "storage put ok"}
	if !slices.Equal(results, wantResults) {
		t.Errorf("storage spans %v, want %v", results, wantResults)
	}

	// Three conflicts with two retries: the command gives up.
	rival.n = 3
	res, _, spans = r.run(t, h, `{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":"y"}`)
	if !errors.Is(res.Err, memory.ErrConflict) {
		t.Fatalf("insert: %s, want a conflict", res.Text)
	}
	want = "update_memory [internal] cloudmem.memory.command=insert cloudmem.memory.result=error cloudmem.memory.retries=2 cloudmem.storage.backend=mem error.type=conflict gen_ai.operation.name=update_memory status=Error(conflict) event=conflict, retrying event=conflict, retrying event=conflict, giving up"
	if got := describeSpan(spans[len(spans)-1]); got != want {
		t.Errorf("command span\n %s\nwant\n %s", got, want)
	}

	m := r.metrics(t)
	for name, w := range map[string][]string{
		telemetry.MetricConflicts: {"cloudmem.memory.command=insert cloudmem.storage.backend=mem: 5"},
		telemetry.MetricRetries:   {"cloudmem.memory.command=insert cloudmem.storage.backend=mem: 4"},
		telemetry.MetricGaveUp:    {"cloudmem.memory.command=insert cloudmem.storage.backend=mem: 1"},
		telemetry.MetricStorageDuration: {
			"cloudmem.storage.backend=mem cloudmem.storage.operation=get cloudmem.storage.result=ok: 6",
			"cloudmem.storage.backend=mem cloudmem.storage.operation=put cloudmem.storage.result=ok: 1",
			"cloudmem.storage.backend=mem cloudmem.storage.operation=put cloudmem.storage.result=precondition_failed: 5",
		},
	} {
		if got := points(m[name]); !slices.Equal(got, w) {
			t.Errorf("%s:\n %s\nwant\n %s", name, strings.Join(got, "\n "), strings.Join(w, "\n "))
		}
	}
	if got := points(m[telemetry.MetricStorageErrors]); len(got) != 0 {
		t.Errorf("storage errors %v: a lost race is not a storage error", got)
	}
}

// secret is what a failing store's error carries: a host, a key, a
// credential. No span or metric may show it.
const secret = "redis://:hunter2-PLANTED@10.1.2.3:6379 key tenant-7/notes.md"

// failingStore fails every call of one method with an error holding the
// secret.
type failingStore struct {
	blob.Store
	fail string
}

func (f failingStore) err() error { return fmt.Errorf("dial %s: %w", secret, io.ErrUnexpectedEOF) }

func (f failingStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if f.fail == "Get" {
		return nil, blob.Info{}, f.err()
	}
	return f.Store.Get(ctx, key, limit)
}

func (f failingStore) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	if f.fail == "List" {
		return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, f.err()) }
	}
	return f.Store.List(ctx, prefix)
}

// A storage failure is an error span with the short cause, on the storage
// call and on the command, and a storage error counted by cause.
func TestStorageFailure(t *testing.T) {
	r := newRig(t, telemetry.Options{Backend: "mem"})
	h := r.handler(t, failingStore{Store: mem.New(nil), fail: "List"}, memory.Options{})
	res, _, spans := r.run(t, h, `{"command":"view","path":"/memories"}`)
	if !errors.Is(res.Err, memory.ErrStorage) {
		t.Fatalf("view: %s, want a storage failure", res.Text)
	}
	want := []string{
		"storage list [client] cloudmem.storage.backend=mem cloudmem.storage.objects=0 cloudmem.storage.operation=list cloudmem.storage.result=error error.type=_OTHER status=Error(the storage backend returned an error)",
		"search_memory [internal] cloudmem.memory.command=view cloudmem.memory.result=error cloudmem.memory.retries=0 cloudmem.storage.backend=mem error.type=storage gen_ai.operation.name=search_memory status=Error(The memory storage failed: the storage backend returned an error)",
	}
	var got []string
	for _, s := range spans {
		got = append(got, describeSpan(s))
	}
	if !slices.Equal(got, want) {
		t.Errorf("spans\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	w := []string{"cloudmem.storage.backend=mem cloudmem.storage.operation=list error.type=_OTHER: 1"}
	if got := points(r.metrics(t)[telemetry.MetricStorageErrors]); !slices.Equal(got, w) {
		t.Errorf("storage errors %v, want %v", got, w)
	}
}

// Each kind of storage failure has its own error.type and short cause.
func TestStorageFailureCauses(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("get %s: %w", secret, context.Canceled), "error.type=canceled status=Error(the request was cancelled)"},
		{fmt.Errorf("get %s: %w", secret, context.DeadlineExceeded), "error.type=timeout status=Error(the request timed out)"},
		{fmt.Errorf("get %s: %w", secret, blob.ErrReadOnly), "error.type=read_only status=Error(the store is read-only)"},
		{fmt.Errorf("get %s: %w", secret, blob.ErrInvalidKey), "error.type=invalid_key status=Error(the store rejected the path)"},
		{fmt.Errorf("get %s: %w", secret, causeError("an object could not be decrypted")), "error.type=_OTHER status=Error(an object could not be decrypted)"},
	} {
		r := newRig(t, telemetry.Options{Backend: "mem"})
		s := r.in.Store(errStore{err: c.err})
		_, _, _ = s.Get(context.Background(), "k", 10)
		spans := r.spans.Ended()
		got := describeSpan(spans[0])
		got = got[strings.Index(got, "error.type="):]
		if got != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.err, got, c.want)
		}
	}
}

type causeError string

func (e causeError) Error() string      { return "decrypt " + secret }
func (e causeError) ModelCause() string { return string(e) }

// errStore fails every Get with err.
type errStore struct {
	blob.Store
	err error
}

func (s errStore) Get(context.Context, string, int64) ([]byte, blob.Info, error) {
	return nil, blob.Info{}, s.err
}

// exported renders everything the SDK would export (span names,
// attributes, events, statuses, metric names and attributes) as one text.
func (r *rig) exported(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, s := range r.spans.Ended() {
		b.WriteString(describeSpan(s) + "\n")
		for _, e := range s.Events() {
			b.WriteString(attrs(e.Attributes) + "\n")
		}
		b.WriteString(attrs(s.Resource().Attributes()) + "\n")
	}
	m := r.metrics(t)
	for _, name := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(name + " " + strings.Join(points(m[name]), "\n") + "\n")
	}
	return b.String()
}

// No file content, storage key or credential reaches any span or metric;
// paths only with RecordPaths, and then as memory paths.
func TestPrivacy(t *testing.T) {
	const content = "PLANTED-CONTENT-sk-ant-0123456789"
	inputs := []string{
		`{"command":"create","path":"/memories/private/diary.md","file_text":"` + content + `\n"}`,
		`{"command":"str_replace","path":"/memories/private/diary.md","old_str":"` + content + `","new_str":"` + content + `2"}`,
		`{"command":"str_replace","path":"/memories/private/diary.md","old_str":"` + content + `-missing","new_str":"x"}`,
		`{"command":"insert","path":"/memories/private/diary.md","insert_line":1,"insert_text":"` + content + `"}`,
		`{"command":"view","path":"/memories/private/diary.md"}`,
		`{"command":"rename","old_path":"/memories/private/diary.md","new_path":"/memories/private/journal.md"}`,
		`{"command":"create","path":"/memories/private/journal.md","file_text":"` + content + `"}`,
		`{"command":"delete","path":"/memories/private"}`,
	}
	for _, recordPaths := range []bool{false, true} {
		t.Run(fmt.Sprintf("RecordPaths=%v", recordPaths), func(t *testing.T) {
			r := newRig(t, telemetry.Options{Backend: "mem", RecordPaths: recordPaths})
			// A tenant prefix makes every storage key differ from the memory path.
			scoped, err := blob.Prefix(mem.New(nil), "tenant-7")
			if err != nil {
				t.Fatal(err)
			}
			h := r.handler(t, scoped, memory.Options{})
			for _, in := range inputs {
				h.Execute(context.Background(), []byte(in))
			}
			h = r.handler(t, failingStore{Store: scoped, fail: "Get"}, memory.Options{})
			h.Execute(context.Background(), []byte(`{"command":"view","path":"/memories/private/x.md"}`))

			out := r.exported(t)
			for _, leak := range []string{"PLANTED-CONTENT", "hunter2", "10.1.2.3", "tenant-7"} {
				if strings.Contains(out, leak) {
					t.Errorf("%q appears in the exported telemetry:\n%s", leak, out)
				}
			}
			if got := strings.Contains(out, "private"); got != recordPaths {
				t.Errorf("a path appears in the telemetry: %v, want %v:\n%s", got, recordPaths, out)
			}
			if recordPaths {
				for _, want := range []string{
					"gen_ai.memory.record.id=/memories/private/diary.md",
					"cloudmem.memory.new_path=/memories/private/journal.md",
				} {
					if !strings.Contains(out, want) {
						t.Errorf("%s missing from the telemetry:\n%s", want, out)
					}
				}
			}
		})
	}
}

// StoreID names the store on command spans, and only there.
func TestStoreID(t *testing.T) {
	r := newRig(t, telemetry.Options{Backend: "redis", StoreID: "agent-42"})
	h := r.handler(t, mem.New(nil), memory.Options{Overwrite: true})
	_, _, spans := r.run(t, h, `{"command":"create","path":"/memories/a","file_text":""}`)
	want := "upsert_memory [internal] cloudmem.memory.command=create cloudmem.memory.result=ok cloudmem.memory.retries=0 cloudmem.storage.backend=redis gen_ai.memory.store.id=agent-42 gen_ai.operation.name=upsert_memory"
	if got := describeSpan(spans[len(spans)-1]); got != want {
		t.Errorf("command span\n %s\nwant\n %s", got, want)
	}
}

// With the global providers (Options.TracerProvider nil), a provider the
// program installs after New is used from then on; before that no span is
// made. Detecting a no-op provider leaves no probe span behind.
func TestGlobalProviderInstalledLater(t *testing.T) {
	in, err := telemetry.New(telemetry.Options{Backend: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(in.Store(mem.New(nil)), memory.Options{Observer: in.Observer()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h.Create(ctx, "/memories/a.md", "x") // no provider yet: nothing to record

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	h.View(ctx, "/memories/a.md", nil)
	var names []string
	for _, s := range spans.Ended() {
		names = append(names, s.Name())
	}
	if want := []string{"storage get", "search_memory"}; !slices.Equal(names, want) {
		t.Errorf("spans %q, want %q", names, want)
	}
}

// Through the Claude SDK glue (the tool runner's BetaTool), the command
// span is a child of the span the runner's context carries.
func TestUnderToolRunnerSpan(t *testing.T) {
	r := newRig(t, telemetry.Options{Backend: "mem"})
	tool := claude.NewTool(r.handler(t, mem.New(nil), memory.Options{}))
	ctx, toolSpan := r.tp.Tracer("runner").Start(context.Background(), "execute_tool memory")
	if _, err := tool.Execute(ctx, []byte(`{"command":"create","path":"/memories/a.md","file_text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	toolSpan.End()
	ended := r.spans.Ended()
	cmd := ended[len(ended)-2]
	if cmd.Name() != "create_memory" || cmd.Parent().SpanID() != toolSpan.SpanContext().SpanID() {
		t.Errorf("span %q has parent %v, want create_memory under the tool span %v", cmd.Name(), cmd.Parent().SpanID(), toolSpan.SpanContext().SpanID())
	}
}

// batchStore deletes keys in one call, as S3's DeleteObjects does.
type batchStore struct{ blob.Store }

func (b batchStore) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	errs := make([]error, len(infos))
	for i, info := range infos {
		if err := b.Delete(ctx, info.Key, blob.Cond{IfVersion: info.Version}); err != nil && (info.Version != "" || !errors.Is(err, blob.ErrNotExist)) {
			errs[i] = err
		}
	}
	return errs, nil
}

// A batch delete is one span with the number of keys; over a store
// without the capability the wrapper reports ErrUnsupported and the
// fallback's deletes are recorded one by one.
func TestDeleteBatch(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, telemetry.Options{Backend: "s3"})
	if err := blob.DeleteKeys(ctx, r.in.Store(batchStore{mem.New(nil)}), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := blob.DeleteKeys(ctx, r.in.Store(coreOnly{mem.New(nil)}), []string{"c"}); err != nil {
		t.Fatal(err)
	}
	versioned := batchStore{mem.New(nil)}
	info, err := versioned.Put(ctx, "v", []byte("v"), blob.Cond{})
	if err != nil {
		t.Fatal(err)
	}
	if errs, err := blob.DeleteBatch(ctx, r.in.Store(versioned), []blob.Info{info}); err != nil || errs[0] != nil {
		t.Fatal(errs, err)
	}
	var got []string
	for _, s := range r.spans.Ended() {
		got = append(got, describeSpan(s))
	}
	want := []string{
		"storage delete_batch [client] cloudmem.storage.backend=s3 cloudmem.storage.objects=2 cloudmem.storage.operation=delete_batch cloudmem.storage.result=ok",
		"storage delete [client] cloudmem.storage.backend=s3 cloudmem.storage.condition=none cloudmem.storage.operation=delete cloudmem.storage.result=not_found",
		"storage delete_batch [client] cloudmem.storage.backend=s3 cloudmem.storage.condition=if_version cloudmem.storage.objects=1 cloudmem.storage.operation=delete_batch cloudmem.storage.result=ok",
	}
	if !slices.Equal(got, want) {
		t.Errorf("spans\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
}

// With a tracer provider that makes no spans, the metrics are recorded as
// ever.
func TestMetricsWithoutSpans(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	in, err := telemetry.New(telemetry.Options{
		TracerProvider: tracenoop.NewTracerProvider(),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		Backend:        "mem",
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(in.Store(mem.New(nil)), memory.Options{Observer: in.Observer()})
	if err != nil {
		t.Fatal(err)
	}
	h.Create(context.Background(), "/memories/a.md", "abc")
	r := &rig{reader: reader}
	m := r.metrics(t)
	for name, w := range map[string][]string{
		telemetry.MetricCommandDuration: {"cloudmem.memory.command=create cloudmem.memory.result=ok cloudmem.storage.backend=mem gen_ai.operation.name=create_memory: 1"},
		telemetry.MetricBytesWritten:    {"cloudmem.storage.backend=mem cloudmem.storage.operation=put: 187"}, // 3 of the file, 184 of the file count
	} {
		if got := points(m[name]); !slices.Equal(got, w) {
			t.Errorf("%s: %q, want %q", name, got, w)
		}
	}
}
