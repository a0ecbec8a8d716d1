package storeurl_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/policy"
	"github.com/cloudmem/cloudmem/storeurl"
)

// capture is a test backend that records the URL its Open received and
// hands out a fresh in-memory store, kept for inspection.
type capture struct {
	mu       sync.Mutex
	url      string
	timeout  time.Duration
	readOnly bool
	store    *closeStore
}

func (c *capture) open(_ context.Context, loc *storeurl.Location) (blob.Store, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.url = loc.URL.String()
	c.timeout = loc.Timeout
	c.readOnly = loc.ReadOnly
	c.store = &closeStore{Store: mem.New(nil)}
	return c.store, nil
}

func (c *capture) lastTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

func (c *capture) last() (string, *closeStore) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.url, c.store
}

// closeStore is a store that records whether it was closed.
type closeStore struct {
	blob.Store
	closed bool
}

func (c *closeStore) Close() error { c.closed = true; return nil }

var (
	captured       = &capture{}
	capturedNative = &capture{}
)

func init() {
	storeurl.Register("capture", storeurl.Backend{Params: []string{"region"}, Open: captured.open})
	storeurl.Register("capture-native", storeurl.Backend{Params: []string{"region"}, Open: capturedNative.open, NativePrefix: true})
}

func TestOpenMem(t *testing.T) {
	ctx := context.Background()
	for _, raw := range []string{"mem://", "mem:", "mem:///", "MEM://"} {
		s, err := storeurl.Open(ctx, raw)
		if err != nil {
			t.Fatalf("Open(%q): %v", raw, err)
		}
		if _, err := s.Put(ctx, "a/b.md", []byte("hi"), blob.Cond{}); err != nil {
			t.Fatalf("Open(%q).Put: %v", raw, err)
		}
		data, _, err := s.Get(ctx, "a/b.md", blob.MaxObjectBytes)
		if err != nil || string(data) != "hi" {
			t.Fatalf("Open(%q).Get = %q, %v; want \"hi\"", raw, data, err)
		}
		if blob.IsReadOnly(s) {
			t.Errorf("Open(%q) is read-only", raw)
		}
	}
	// Each mem:// is a store of its own.
	s, err := storeurl.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	if infos, err := blob.ListAll(ctx, s, ""); err != nil || len(infos) != 0 {
		t.Fatalf("a new mem:// store lists %v, %v; want it empty", infos, err)
	}
}

// TestBackendURL checks what URL the backend receives: the shared parameters
// removed (all but prefix for a NativePrefix backend), its own kept.
func TestBackendURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		from *capture
		want string
	}{
		{"capture://bucket/dir", captured, "capture://bucket/dir"},
		{"capture://bucket/dir?region=eu&prefix=p&readonly=1", captured, "capture://bucket/dir?region=eu"},
		{"CAPTURE://Bucket?prefix=a/b&region=x&readonly=false", captured, "capture://Bucket?region=x"},
		{"capture-native://h?prefix=p&readonly=true", capturedNative, "capture-native://h?prefix=p"},
		{"capture-native://h?prefix=%2Fteam%2Fp%2F", capturedNative, "capture-native://h?prefix=team%2Fp"},
		{"capture-native://h?region=r", capturedNative, "capture-native://h?region=r"},
	} {
		if _, err := storeurl.Open(context.Background(), tc.raw); err != nil {
			t.Errorf("Open(%q): %v", tc.raw, err)
			continue
		}
		if got, _ := tc.from.last(); got != tc.want {
			t.Errorf("Open(%q): the backend got %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestPrefix(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		raw  string
		from *capture
		want string // the key "notes/a.md" lands at this key of the backend's store
	}{
		{"capture://?prefix=agent-7", captured, "agent-7/notes/a.md"},
		{"capture://?prefix=/team/agent-7/", captured, "team/agent-7/notes/a.md"},
		{"capture://", captured, "notes/a.md"},
		// A NativePrefix backend applies the prefix itself; this test
		// backend ignores it, so storeurl must not have applied it.
		{"capture-native://?prefix=agent-7", capturedNative, "notes/a.md"},
	} {
		s, err := storeurl.Open(ctx, tc.raw)
		if err != nil {
			t.Fatalf("Open(%q): %v", tc.raw, err)
		}
		if _, err := s.Put(ctx, "notes/a.md", []byte("x"), blob.Cond{}); err != nil {
			t.Fatalf("Open(%q).Put: %v", tc.raw, err)
		}
		_, inner := tc.from.last()
		infos, err := blob.ListAll(ctx, inner, "")
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, info := range infos {
			keys = append(keys, info.Key)
		}
		if !slices.Equal(keys, []string{tc.want}) {
			t.Errorf("Open(%q): backend keys %q, want [%q]", tc.raw, keys, tc.want)
		}
	}
}

func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		raw      string
		readOnly bool
	}{
		{"mem://?readonly=true", true},
		{"mem://?readonly=1", true},
		{"mem://?readonly=false", false},
		{"mem://?readonly=0", false},
		{"mem://?prefix=p&readonly=true", true},
	} {
		s, err := storeurl.Open(ctx, tc.raw)
		if err != nil {
			t.Fatalf("Open(%q): %v", tc.raw, err)
		}
		if got := blob.IsReadOnly(s); got != tc.readOnly {
			t.Errorf("Open(%q): IsReadOnly = %v, want %v", tc.raw, got, tc.readOnly)
		}
		_, err = s.Put(ctx, "a", []byte("x"), blob.Cond{})
		if tc.readOnly && !errors.Is(err, blob.ErrReadOnly) {
			t.Errorf("Open(%q).Put: %v, want blob.ErrReadOnly", tc.raw, err)
		}
		if !tc.readOnly && err != nil {
			t.Errorf("Open(%q).Put: %v", tc.raw, err)
		}
	}
}

// TestOpenReadOnly checks that OpenReadOnly, and readonly=true, tell the
// backend (Location.ReadOnly) and return a read-only store, and that Open
// without readonly=true does not.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		raw      string
		open     func(context.Context, string) (blob.Store, error)
		readOnly bool
	}{
		{"capture://", storeurl.Open, false},
		{"capture://?readonly=false", storeurl.Open, false},
		{"capture://?readonly=true", storeurl.Open, true},
		{"capture://", storeurl.OpenReadOnly, true},
		{"capture://?readonly=false", storeurl.OpenReadOnly, true},
	} {
		s, err := tc.open(ctx, tc.raw)
		if err != nil {
			t.Fatalf("%q: %v", tc.raw, err)
		}
		captured.mu.Lock()
		told := captured.readOnly
		captured.mu.Unlock()
		if told != tc.readOnly || blob.IsReadOnly(s) != tc.readOnly {
			t.Errorf("%q: Location.ReadOnly %v, IsReadOnly %v; want both %v", tc.raw, told, blob.IsReadOnly(s), tc.readOnly)
		}
		if _, err := s.Put(ctx, "a", []byte("x"), blob.Cond{}); tc.readOnly != errors.Is(err, blob.ErrReadOnly) {
			t.Errorf("%q: Put = %v, read-only %v", tc.raw, err, tc.readOnly)
		}
	}
}

func TestScheme(t *testing.T) {
	for raw, want := range map[string]string{
		"":                  "",
		"./memories":        "file",
		"/srv/a?b":          "file",
		"file:rel":          "file",
		"S3://bucket/p?x=1": "s3",
		"mem://":            "mem",
		"c:/windows":        "c",
	} {
		if got := storeurl.Scheme(raw); got != want {
			t.Errorf("Scheme(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	everyScheme := "every scheme accepts: age_identity_file, age_key_fingerprint, age_recipients, encrypt, max_file_bytes, max_files, policy, prefix, readonly, secrets, timeout, view_limit"
	for _, tc := range []struct{ raw, want string }{
		{"", "storeurl: empty URL"},
		{"nosuch://x", `storeurl: unknown scheme "nosuch" (registered: capture, capture-native, mem)`},
		{"s3://bucket", `storeurl: unknown scheme "s3" (registered: capture, capture-native, mem)`},
		{"mem://%zz", `storeurl: malformed URL: invalid URL escape "%zz"`},
		{"mem://?a=%zz", `storeurl: malformed query: invalid URL escape "%zz"`},
		{"mem://#x", "storeurl: a store URL has no #fragment"},
		{"mem://?foo=1", `storeurl: mem: unknown URL parameter "foo" (` + everyScheme + ")"},
		{"mem://?readonly=1&zz=1&Prefix=a&foo", `storeurl: mem: unknown URL parameters "Prefix", "foo", "zz" (` + everyScheme + ")"},
		{"capture://?regoin=eu", `storeurl: capture: unknown URL parameter "regoin" (capture accepts: region; ` + everyScheme + ")"},
		{"mem://?readonly=maybe", "storeurl: readonly=\"maybe\": want true, false, 1 or 0"},
		{"mem://?readonly=", "storeurl: readonly=\"\": want true, false, 1 or 0"},
		{"mem://?readonly=TRUE", "storeurl: readonly=\"TRUE\": want true, false, 1 or 0"},
		{"mem://?readonly=1&readonly=1", "storeurl: parameter readonly given 2 times"},
		{"mem://?prefix=a&prefix=b", "storeurl: parameter prefix given 2 times"},
		{"mem://?readonly=1&readonly=1&prefix=a&prefix=b&prefix=c", "storeurl: parameter prefix given 3 times"},
		{"mem://?prefix=", "storeurl: prefix is empty (leave it out to use the whole store)"},
		{"mem://?prefix=/", "storeurl: prefix is empty (leave it out to use the whole store)"},
		{"mem://?prefix=a/../b", `storeurl: prefix="a/../b": blob: invalid key: ".." segment`},
		{"mem://?prefix=a//b", "storeurl: prefix=\"a//b\": blob: invalid key: empty segment"},
		{"mem://?prefix=.cloudmem", "storeurl: prefix=\".cloudmem\": the segment .cloudmem is reserved for cloudmem's bookkeeping"},
		{"mem://?prefix=.cloudmem/history", "storeurl: prefix=\".cloudmem/history\": the segment .cloudmem is reserved for cloudmem's bookkeeping"},
		{"mem://?prefix=%2Fteam%2F.cloudmem-locks%2F", "storeurl: prefix=\"/team/.cloudmem-locks/\": the segment .cloudmem-locks is reserved for cloudmem's bookkeeping"},
		{"capture-native://h?prefix=a/.cloudmem/b", "storeurl: prefix=\"a/.cloudmem/b\": the segment .cloudmem is reserved for cloudmem's bookkeeping"},
		{"mem://host", "mem: the URL is just mem:// (no host or path), got mem://host"},
		{"mem:///dir", "mem: the URL is just mem:// (no host or path), got mem:///dir"},
		{"mem://u:secret@", "mem: the URL is just mem:// (no host or path), got mem://u:xxxxx@"},
		{"capture://:secret@host:port", `storeurl: malformed URL: invalid port ":port" after host`},
	} {
		s, err := storeurl.Open(context.Background(), tc.raw)
		if err == nil {
			t.Errorf("Open(%q) = %v, want error %q", tc.raw, s, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Open(%q) error:\n got %s\nwant %s", tc.raw, err, tc.want)
		}
	}
}

// TestReservedPrefix checks that a URL whose prefix lies in the reserved
// namespace fails with ErrReservedPrefix before anything opens, and that a
// look-alike name is an ordinary prefix.
func TestReservedPrefix(t *testing.T) {
	for _, raw := range []string{"mem://?prefix=.cloudmem", "capture://?prefix=x/.cloudmem-history", "capture-native://h?prefix=.cloudmem"} {
		_, err := storeurl.Open(context.Background(), raw)
		if !errors.Is(err, storeurl.ErrReservedPrefix) {
			t.Errorf("Open(%q) error = %v, want ErrReservedPrefix", raw, err)
		}
	}
	for _, raw := range []string{"mem://?prefix=.cloudmemX", "mem://?prefix=a/cloudmem/.cloudmemx"} {
		s, err := storeurl.Open(context.Background(), raw)
		if err != nil {
			t.Errorf("Open(%q): %v, want a store (a look-alike is not reserved)", raw, err)
			continue
		}
		blob.Close(s)
	}
}

// TestCloseOnFailure checks that a store opened by the backend is closed
// when a later wrapper fails (one whose parameters pass Check, as a
// wrapper that reads the store itself, encryption's key object, may), or
// a layer of the program's own (Options.Layers).
func TestCloseOnFailure(t *testing.T) {
	m := storeurl.DefaultMux.Clone()
	m.RegisterWrapper("failing", storeurl.Wrapper{Order: storeurl.OrderHistory, Params: []string{"failing"},
		Check: func(url.Values) error { return nil },
		Wrap: func(context.Context, blob.Store, url.Values) (blob.Store, error) {
			return nil, errors.New("failing: the store said no")
		}})
	_, err := m.Open(context.Background(), "capture://?failing=1")
	if errString(err) != "failing: the store said no" {
		t.Fatalf("Open with a failing wrapper = %v, want its error", err)
	}
	if _, s := captured.last(); !s.closed {
		t.Errorf("Open failed with %q but left the backend's store open", err)
	}
	// A program's own layer (Options.Layers) that fails, on a read-only
	// store (which hands it the store beneath read-only), and whether the
	// URL selects its wrapper or not.
	fail := func(context.Context, blob.Store, url.Values) (blob.Store, error) {
		return nil, errors.New("own: the store said no")
	}
	for _, raw := range []string{"capture://?readonly=1", "capture://?failing=1"} {
		_, err = m.OpenWith(context.Background(), raw, storeurl.Options{Layers: map[string]storeurl.WrapFunc{"failing": fail}})
		if errString(err) != "own: the store said no" {
			t.Fatalf("OpenWith(%q) with a failing layer of its own = %v, want its error", raw, err)
		}
		if _, s := captured.last(); !s.closed {
			t.Errorf("OpenWith(%q) failed with %q but left the backend's store open", raw, err)
		}
	}
}

func TestRegisterPanics(t *testing.T) {
	open := func(context.Context, *storeurl.Location) (blob.Store, error) { return mem.New(nil), nil }
	for _, tc := range []struct {
		scheme string
		b      storeurl.Backend
		want   string
	}{
		{"mem", storeurl.Backend{Open: open}, `storeurl: Register called twice for scheme "mem"`},
		{"Upper", storeurl.Backend{Open: open}, `storeurl: Register: invalid scheme "Upper"`},
		{"", storeurl.Backend{Open: open}, `storeurl: Register: invalid scheme ""`},
		{"1x", storeurl.Backend{Open: open}, `storeurl: Register: invalid scheme "1x"`},
		{"a b", storeurl.Backend{Open: open}, `storeurl: Register: invalid scheme "a b"`},
		{"nil-open", storeurl.Backend{}, `storeurl: Register: nil Open for scheme "nil-open"`},
	} {
		got := func() (msg any) {
			defer func() { msg = recover() }()
			storeurl.Register(tc.scheme, tc.b)
			return nil
		}()
		if got != tc.want {
			t.Errorf("Register(%q) panicked with %v, want %q", tc.scheme, got, tc.want)
		}
	}
	if got, want := storeurl.Schemes(), []string{"capture", "capture-native", "mem"}; !slices.Equal(got, want) {
		t.Errorf("Schemes() = %q after the failed registrations, want %q", got, want)
	}
}

// TestBackendParams checks how Open (here its backend half, Parse) checks
// the parameters against Backend.Params. A query that does not parse fails
// before (TestOpenErrors: "storeurl: malformed query").
func TestBackendParams(t *testing.T) {
	t.Setenv("CLOUDMEM_AGE_IDENTITY", "")
	every := "every scheme accepts: age_identity_file, age_key_fingerprint, age_recipients, encrypt, max_file_bytes, max_files, policy, prefix, readonly, secrets, timeout, view_limit"
	for _, tc := range []struct {
		raw     string
		allowed []string
		want    string // "" for no error
	}{
		{"x://h", nil, ""},
		{"x://h?region=a&endpoint=b", []string{"region", "endpoint"}, ""},
		{"x://h?prefix=p&readonly=1", nil, ""},
		{"x://h?prefix=p&encrypt=age", nil, "crypt: encrypt=age needs an identity: age_identity_file=PATH, or the identity file's content in $CLOUDMEM_AGE_IDENTITY"},
		{"x://h?b=1&a=2", nil, `storeurl: x: unknown URL parameters "a", "b" (` + every + ")"},
		{"x://h?region=a&zone=b", []string{"region", "endpoint"}, `storeurl: x: unknown URL parameter "zone" (x accepts: endpoint, region; ` + every + ")"},
		{"x://h?%22=1", nil, `storeurl: x: unknown URL parameter "\"" (` + every + ")"},
		{"x://h?region=a&region=b", []string{"region"}, "x: parameter region given 2 times"},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		b := storeurl.Backend{Params: tc.allowed, Open: captured.open}
		_, err = b.Parse(u)
		if got := errString(err); got != tc.want {
			t.Errorf("Parse(%q) with Params %q = %q, want %q", tc.raw, tc.allowed, got, tc.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestNoPasswordInErrors checks that errors never repeat a URL's password.
func TestNoPasswordInErrors(t *testing.T) {
	for _, raw := range []string{
		"mem://user:hunter2@host",
		"capture://user:hunter2@host/%zz",
		"capture://user:hunter2@host?readonly=hunter",
		"nosuch://user:hunter2@host",
	} {
		_, err := storeurl.Open(context.Background(), raw)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", raw)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) error shows the password: %s", raw, err)
		}
	}
}

// TestLimitParams: max_files, max_file_bytes and view_limit reach the
// opened store's Traits, and storeurl.Limits reads them without opening;
// a bad value is refused by both with the whole text of docs/spec.md.
func TestLimitParams(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want blob.Limits
	}{
		{"mem://", blob.Limits{}},
		{"mem://?max_files=5&max_file_bytes=1073741824&view_limit=off", blob.Limits{MaxFiles: 5, MaxFileBytes: 1 << 30, ViewLimit: -1}},
		{"mem://?max_files=off&view_limit=1", blob.Limits{MaxFiles: -1, ViewLimit: 1}},
	} {
		got, err := storeurl.Limits(tc.raw)
		if err != nil || got != tc.want {
			t.Errorf("Limits(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
		s, err := storeurl.Open(t.Context(), tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := blob.TraitsOf(s).Limits; got != tc.want {
			t.Errorf("Open(%q) carries %+v; want %+v", tc.raw, got, tc.want)
		}
		blob.Close(s)
	}
	for _, tc := range []struct{ raw, want string }{
		{"mem://?max_files=0", "storeurl: max_files=\"0\": want a whole number from 1 to 1000000000, or off"},
		{"mem://?max_files=-5", "storeurl: max_files=\"-5\": want a whole number from 1 to 1000000000, or off"},
		{"mem://?view_limit=1e3", "storeurl: view_limit=\"1e3\": want a whole number from 1 to 1000000000, or off"},
		{"mem://?max_file_bytes=off", "storeurl: max_file_bytes=\"off\": want a whole number from 1 to 1073741824"},
		{"mem://?max_file_bytes=1073741825", "storeurl: max_file_bytes=\"1073741825\": want a whole number from 1 to 1073741824"},
	} {
		if _, err := storeurl.Limits(tc.raw); err == nil || err.Error() != tc.want {
			t.Errorf("Limits(%q) = %v; want %q", tc.raw, err, tc.want)
		}
		if s, err := storeurl.Open(t.Context(), tc.raw); err == nil || err.Error() != tc.want {
			blob.Close(s)
			t.Errorf("Open(%q) = %v; want %q", tc.raw, err, tc.want)
		}
	}
}

// TestParamValuesQuoted: a refused value is shown quoted (docs/spec.md
// "Values in storeurl's errors"), so a value the URL decodes to something
// that reads like another (+2 is " 2", not 2) or to nothing is plain.
func TestParamValuesQuoted(t *testing.T) {
	for raw, want := range map[string]string{
		"mem://?max_files=+2":        `storeurl: max_files=" 2": want a whole number from 1 to 1000000000, or off`,
		"mem://?max_file_bytes=+2":   `storeurl: max_file_bytes=" 2": want a whole number from 1 to 1073741824`,
		"mem://?view_limit=2+":       `storeurl: view_limit="2 ": want a whole number from 1 to 1000000000, or off`,
		"mem://?max_files=":          `storeurl: max_files="": want a whole number from 1 to 1000000000, or off`,
		"mem://?view_limit=%092":     `storeurl: view_limit="\t2": want a whole number from 1 to 1000000000, or off`,
		"mem://?timeout=+1s":         `storeurl: timeout=" 1s": want a Go duration from 1ms to 24h, such as 1s, 500ms or 2m`,
		"mem://?readonly=+1":         `storeurl: readonly=" 1": want true, false, 1 or 0`,
		"mem://?secrets=warn+":       `storeurl: secrets="warn ": want off, warn, redact or reject`,
		"mem://?prefix=+a/.cloudmem": `storeurl: prefix=" a/.cloudmem": the segment .cloudmem is reserved for cloudmem's bookkeeping`,
	} {
		if s, err := storeurl.Open(t.Context(), raw); err == nil || err.Error() != want {
			blob.Close(s)
			t.Errorf("Open(%q) = %v\nwant %s", raw, err, want)
		}
	}
}

// secrets= and policy= set the store's write policy (docs/spec.md "Write
// policies"), checked before anything opens; secrets= wins over the file's
// mode.
func TestPolicyParams(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, []byte("secrets: warn\nallow:\n  paths: ['/memories/fixtures/**']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("secrets: loud\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		raw  string
		want *policy.Policy
	}{
		{"mem://", nil},
		{"mem://?secrets=reject", &policy.Policy{Secrets: policy.Reject}},
		{"mem://?secrets=off", &policy.Policy{}},
		{"mem://?policy=" + file, &policy.Policy{Secrets: policy.Warn, Allow: policy.Allow{Paths: []string{"/memories/fixtures/**"}}}},
		{"mem://?policy=" + file + "&secrets=redact", &policy.Policy{Secrets: policy.Redact, Allow: policy.Allow{Paths: []string{"/memories/fixtures/**"}}}},
	} {
		s, err := storeurl.Open(t.Context(), tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		carried, _ := blob.TraitsOf(s).Policy.(*policy.Policy)
		if !reflect.DeepEqual(carried, tc.want) {
			t.Errorf("Open(%q) carries %+v; want %+v", tc.raw, carried, tc.want)
		}
		blob.Close(s)
	}
	for _, tc := range []struct{ raw, want string }{
		{"mem://?secrets=loud", "storeurl: secrets=\"loud\": want off, warn, redact or reject"},
		{"mem://?policy=", "storeurl: policy is empty (leave it out for no policy file)"},
		{"mem://?policy=" + dir + "/none.yaml", "storeurl: policy: open " + dir + "/none.yaml: no such file or directory"},
		{"mem://?policy=" + bad, "storeurl: policy: " + bad + ": secrets=\"loud\": want off, warn, redact or reject"},
	} {
		if s, err := storeurl.Open(t.Context(), tc.raw); err == nil || err.Error() != tc.want {
			blob.Close(s)
			t.Errorf("Open(%q) = %v; want %q", tc.raw, err, tc.want)
		}
	}
}

// A policy file's expire rules make the store expire (blob.WithExpiry),
// above history, so that its deletions are recorded; a bad rule is refused
// before anything opens, naming the file and the rule's line.
func TestPolicyExpireRules(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, []byte("expire:\n  - path: /memories/scratch/**\n    after: 7d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("secrets: warn\nexpire:\n  - path: /memories/a/**\n    after: 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{"mem://": false, "mem://?secrets=warn": false, "mem://?policy=" + file: true,
		"mem://?policy=" + file + "&readonly=true&max_files=9": true} {
		s, err := storeurl.Open(t.Context(), raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := blob.HasExpiry(s); got != want {
			t.Errorf("Open(%q): expires %v, want %v", raw, got, want)
		}
		blob.Close(s)
	}
	want := "storeurl: policy: " + bad + `: expire rule on line 3: after "7": want a whole number and a unit (s, m, h or d), such as 7d or 12h, at most 36500d`
	if s, err := storeurl.Open(t.Context(), "mem://?policy="+bad); err == nil || err.Error() != want {
		blob.Close(s)
		t.Errorf("a bad rule: %v; want %q", err, want)
	}
}
