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

// TestOpenWithLayers: a layer of Options.Layers is built by its own
// function, in its wrapper's place, whether the URL selects the wrapper
// or not, and the wrapper's own Wrap is not called; the function gets the
// store beneath read-only when the store is opened read-only (readonly=1
// or Options.ReadOnly), as the program writes through its layer directly;
// a name that is not a wrapper's, or prefix, or a nil function, is refused
// before the backend is opened.
func TestOpenWithLayers(t *testing.T) {
	m := storeurl.DefaultMux.Clone()
	m.RegisterWrapper("mark", storeurl.Wrapper{
		Order:  storeurl.OrderHistory + 50,
		Params: []string{"mark"},
		Check:  func(url.Values) error { return nil },
		Wrap: func(context.Context, blob.Store, url.Values) (blob.Store, error) {
			t.Error("the registered Wrap of a wrapper that Options.Layers builds was called")
			return nil, errors.New("not this one")
		},
	})
	opened := 0
	m.Register("counted", storeurl.Backend{Open: func(ctx context.Context, loc *storeurl.Location) (blob.Store, error) {
		opened++
		return storeurl.Open(ctx, "mem://")
	}})
	type seen struct {
		readOnly bool
		keyBytes int
		params   string
	}
	for _, tc := range []struct {
		url      string
		readOnly bool // Options.ReadOnly
		want     seen
	}{
		{"counted://?readonly=1&prefix=/team/", false, seen{true, blob.MaxKeyLen - len("team/"), ""}},
		{"counted://?mark=here&readonly=1", false, seen{true, blob.MaxKeyLen, "mark=here"}},
		{"counted://", true, seen{true, blob.MaxKeyLen, ""}},
		{"counted://?mark=here&readonly=0", false, seen{false, blob.MaxKeyLen, "mark=here"}},
	} {
		var got []seen
		s, err := m.OpenWith(t.Context(), tc.url, storeurl.Options{ReadOnly: tc.readOnly, Layers: map[string]storeurl.WrapFunc{
			"mark": func(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
				got = append(got, seen{blob.IsReadOnly(s), blob.KeyBytes(s), params.Encode()})
				return s, nil
			},
		}})
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if !slices.Equal(got, []seen{tc.want}) {
			t.Errorf("%s (Options.ReadOnly %v): the layer saw %+v, want %+v", tc.url, tc.readOnly, got, []seen{tc.want})
		}
		if blob.IsReadOnly(s) != tc.want.readOnly {
			t.Errorf("%s (Options.ReadOnly %v): the store's read-only is %v, want %v", tc.url, tc.readOnly, blob.IsReadOnly(s), tc.want.readOnly)
		}
	}
	before := opened
	wrap := func(_ context.Context, s blob.Store, _ url.Values) (blob.Store, error) { return s, nil }
	for _, tc := range []struct {
		name string
		wrap storeurl.WrapFunc
		want string
	}{
		{"nope", wrap, `storeurl: no wrapper "nope" is registered`},
		{"prefix", wrap, "storeurl: Options.Layers cannot build the prefix layer"},
		{"mark", nil, `storeurl: Options.Layers["mark"] is nil`},
	} {
		_, err := m.OpenWith(t.Context(), "counted://", storeurl.Options{Layers: map[string]storeurl.WrapFunc{tc.name: tc.wrap}})
		if err == nil || err.Error() != tc.want {
			t.Errorf("Options.Layers naming %s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if opened != before {
		t.Errorf("a refused Options.Layers opened the backend %d times", opened-before)
	}
}
