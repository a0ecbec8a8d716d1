package storeurl_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// TestWrapperOrder: every layer lands in its fixed place, whatever the
// order of the parameters: prefix beneath a test wrapper (which sees the
// shorter key budget), readonly above it (so it sees a writable store).
// The test wrapper is registered on a clone of DefaultMux, so it shows in
// no other test's parameter lists.
func TestWrapperOrder(t *testing.T) {
	type seen struct {
		readOnly bool
		keyBytes int
		value    string
	}
	marks := make(chan seen, 1)
	m := storeurl.DefaultMux.Clone()
	m.RegisterWrapper("mark", storeurl.Wrapper{
		Order:  storeurl.OrderHistory + 50,
		Params: []string{"mark"},
		Check:  func(url.Values) error { return nil },
		Wrap: func(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
			marks <- seen{blob.IsReadOnly(s), blob.KeyBytes(s), params.Get("mark")}
			return s, nil
		},
	})
	if got, want := m.Wrappers(), []string{"prefix", "encrypt", "mark", "readonly", "policy", "limits"}; !slices.Equal(got, want) {
		t.Fatalf("Wrappers() = %q, want %q", got, want)
	}
	if got := storeurl.Wrappers(); slices.Contains(got, "mark") {
		t.Fatalf("the clone's wrapper shows in DefaultMux: %q", got)
	}
	s, err := m.Open(t.Context(), "mem://?readonly=1&mark=here&prefix=/team/")
	if err != nil {
		t.Fatal(err)
	}
	got := <-marks
	if want := (seen{false, blob.MaxKeyLen - len("team/"), "here"}); got != want {
		t.Fatalf("the wrapper at order %d saw %+v, want %+v", storeurl.OrderHistory+50, got, want)
	}
	if !blob.IsReadOnly(s) {
		t.Fatal("readonly=1 did not make the store read-only")
	}
	if _, err := m.Open(t.Context(), "mem://?mark=a&mark=b"); err == nil || err.Error() != "storeurl: parameter mark given 2 times" {
		t.Fatalf("a repeated wrapper parameter: %v", err)
	}
	if _, err := storeurl.Open(t.Context(), "mem://?mark=a"); err == nil {
		t.Fatal("DefaultMux opened a URL with the clone's parameter")
	}
}

// TestNewMux checks that a new Mux has storeurl's own wrappers and no
// scheme, and that a scheme registered on it is its own.
func TestNewMux(t *testing.T) {
	m := storeurl.NewMux()
	if got, want := m.Wrappers(), []string{"prefix", "readonly", "limits"}; !slices.Equal(got, want) {
		t.Errorf("Wrappers() = %q, want %q", got, want)
	}
	if _, err := m.Open(t.Context(), "mem://"); err == nil || err.Error() != `storeurl: unknown scheme "mem" (registered: none)` {
		t.Errorf("Open of an unregistered scheme: %v", err)
	}
	opened := 0
	m.Register("own", storeurl.Backend{Open: func(_ context.Context, loc *storeurl.Location) (blob.Store, error) {
		opened++
		return nil, context.Canceled
	}})
	if _, err := m.Open(t.Context(), "own://"); !errors.Is(err, context.Canceled) || opened != 1 {
		t.Errorf("Open of own:// = %v after %d opens, want context.Canceled after 1", err, opened)
	}
	if slices.Contains(storeurl.Schemes(), "own") || !slices.Equal(m.Schemes(), []string{"own"}) {
		t.Errorf("schemes: DefaultMux %q, the new Mux %q", storeurl.Schemes(), m.Schemes())
	}
}
