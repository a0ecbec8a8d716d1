package storeurl

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/cloudmem/cloudmem/blob"
)

// Mux is a registry of backends (by scheme) and wrappers (by name) that
// opens store URLs with them. DefaultMux holds those that packages register
// from their init functions; the package functions (Register,
// RegisterWrapper, Open, OpenReadOnly, OpenWith, Schemes, Wrappers,
// Without) use it. A program or a test that wants a registry of its own (a
// test wrapper that must not show in other tests' parameter lists, a scheme
// of its own) builds one with NewMux or DefaultMux.Clone. Use NewMux or
// Clone, not the zero Mux. A Mux is safe for concurrent use.
type Mux struct {
	mu       sync.RWMutex
	backends map[string]Backend
	wrappers []namedWrapper // sorted by Order
}

// DefaultMux is the Mux of the package functions.
var DefaultMux = NewMux()

// NewMux returns a Mux with no scheme and this package's own wrappers
// (prefix, readonly and limits).
func NewMux() *Mux {
	m := &Mux{backends: map[string]Backend{}}
	m.RegisterWrapper("prefix", prefixLayer)
	m.RegisterWrapper("readonly", readOnlyLayer)
	m.RegisterWrapper("limits", limitsLayer)
	return m
}

// Clone returns a new Mux with every scheme and wrapper of m; registering
// in either leaves the other as it is.
func (m *Mux) Clone() *Mux {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return &Mux{backends: maps.Clone(m.backends), wrappers: slices.Clone(m.wrappers)}
}

// Register makes a backend available under scheme. It panics if scheme is
// already registered, if scheme is not a lower-case URL scheme (a letter,
// then letters, digits, '+', '-' or '.'), or if b.Open is nil.
func (m *Mux) Register(scheme string, b Backend) {
	if !validScheme(scheme) || strings.ToLower(scheme) != scheme {
		panic(fmt.Sprintf("storeurl: Register: invalid scheme %q", scheme))
	}
	if b.Open == nil {
		panic(fmt.Sprintf("storeurl: Register: nil Open for scheme %q", scheme))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.backends[scheme]; dup {
		panic(fmt.Sprintf("storeurl: Register called twice for scheme %q", scheme))
	}
	m.backends[scheme] = b
}

// Schemes returns the registered schemes, sorted.
func (m *Mux) Schemes() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Sorted(maps.Keys(m.backends))
}

func (m *Mux) lookup(scheme string) (Backend, error) {
	m.mu.RLock()
	b, ok := m.backends[scheme]
	m.mu.RUnlock()
	if ok {
		return b, nil
	}
	known := "none"
	if s := m.Schemes(); len(s) > 0 {
		known = strings.Join(s, ", ")
	}
	return Backend{}, fmt.Errorf("storeurl: unknown scheme %q (registered: %s)", scheme, known)
}

// RegisterWrapper makes a wrapper available under name. It panics if name
// is already registered, if another wrapper has w.Order or one of w.Params,
// if a parameter is "timeout" (storeurl's own), or if w.Check or w.Wrap is
// nil or w.Params empty.
func (m *Mux) RegisterWrapper(name string, w Wrapper) {
	if w.Check == nil || w.Wrap == nil || len(w.Params) == 0 || name == "" {
		panic(fmt.Sprintf("storeurl: RegisterWrapper %q: needs a name, Params, Check and Wrap", name))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.wrappers {
		switch {
		case o.name == name:
			panic(fmt.Sprintf("storeurl: RegisterWrapper called twice for %q", name))
		case o.Order == w.Order:
			panic(fmt.Sprintf("storeurl: RegisterWrapper %q: order %d is %q's", name, w.Order, o.name))
		}
		for _, p := range w.Params {
			if slices.Contains(o.Params, p) {
				panic(fmt.Sprintf("storeurl: RegisterWrapper %q: parameter %s is %q's", name, p, o.name))
			}
		}
	}
	if slices.Contains(w.Params, paramTimeout) {
		panic(fmt.Sprintf("storeurl: RegisterWrapper %q: parameter %s is storeurl's", name, paramTimeout))
	}
	w.Params = slices.Clone(w.Params)
	m.wrappers = append(m.wrappers, namedWrapper{name, w})
	slices.SortFunc(m.wrappers, func(a, b namedWrapper) int { return a.Order - b.Order })
}

// Wrappers returns the names of the registered wrappers, in the order Open
// applies them.
func (m *Mux) Wrappers() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]string, len(m.wrappers))
	for i, w := range m.wrappers {
		out[i] = w.name
	}
	return out
}

// registeredWrappers returns a copy of the wrappers, in Order.
func (m *Mux) registeredWrappers() []namedWrapper {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.wrappers)
}

// Open opens the store that rawURL names with m's backends and wrappers,
// as the package function Open does with DefaultMux's.
func (m *Mux) Open(ctx context.Context, rawURL string) (blob.Store, error) {
	return m.open(ctx, rawURL, Options{})
}

// OpenWith opens the store that rawURL names with m's backends and
// wrappers, as the package function OpenWith does with DefaultMux's.
func (m *Mux) OpenWith(ctx context.Context, rawURL string, opts Options) (blob.Store, error) {
	return m.open(ctx, rawURL, opts)
}

// OpenReadOnly opens the store that rawURL names read-only with m's
// backends and wrappers, as the package function OpenReadOnly does with
// DefaultMux's.
func (m *Mux) OpenReadOnly(ctx context.Context, rawURL string) (blob.Store, error) {
	return m.open(ctx, rawURL, Options{ReadOnly: true})
}

// Check checks rawURL as the package function Check does, with m's
// backends and wrappers.
func (m *Mux) Check(rawURL string) error {
	_, _, _, err := m.locate(rawURL)
	return err
}

// locate parses and checks rawURL: everything Open does before it calls
// the backend.
func (m *Mux) locate(rawURL string) (Backend, *Location, []layer, error) {
	u, err := parse(rawURL)
	if err != nil {
		return Backend{}, nil, nil, err
	}
	b, err := m.lookup(u.Scheme)
	if err != nil {
		return Backend{}, nil, nil, err
	}
	loc, layers, err := b.locate(u, m.registeredWrappers())
	return b, loc, layers, err
}

func (m *Mux) open(ctx context.Context, rawURL string, opts Options) (blob.Store, error) {
	b, loc, layers, err := m.locate(rawURL)
	if err != nil {
		return nil, err
	}
	loc.ReadOnly = loc.ReadOnly || opts.ReadOnly
	if layers, err = m.placeOwnLayers(layers, opts.Layers, loc.ReadOnly); err != nil {
		return nil, err
	}
	s, err := b.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	// A store opened without encryption refuses to work if it is an
	// encrypted one (blob.RefuseEncrypted): plaintext is never written into
	// it, ciphertext never read back as content. The guard sits where the
	// encryption layer would.
	encrypted := slices.ContainsFunc(layers, func(l layer) bool { return l.w.Order == OrderEncrypt })
	guarded := false
	guard := func() {
		if !encrypted && !guarded {
			s = blob.RefuseEncrypted(s)
			guarded = true
		}
	}
	for _, l := range layers {
		if l.w.Order > OrderEncrypt {
			guard()
		}
		ws, err := l.w.Wrap(ctx, s, l.params)
		if err != nil {
			_ = blob.Close(s) // the wrapper's error is the one worth reporting
			return nil, err
		}
		s = ws
	}
	guard()
	if opts.ReadOnly {
		s = blob.ReadOnly(s)
	}
	return s, nil
}

// placeOwnLayers returns layers with the functions of Options.Layers (own)
// in place of their wrappers' Wrap, adding, in order, each layer own names
// that the URL does not select. When readOnly (the URL's readonly=true, or
// Options.ReadOnly), each function gets the store beneath it read-only:
// the program that holds the layer writes through it directly, not
// through the readonly layer above it.
func (m *Mux) placeOwnLayers(layers []layer, own map[string]WrapFunc, readOnly bool) ([]layer, error) {
	for name, wrap := range own {
		w, err := m.wrapper(name)
		if err != nil {
			return nil, err
		}
		if w.Order == OrderPrefix {
			return nil, fmt.Errorf("storeurl: Options.Layers cannot build the prefix layer")
		}
		if wrap == nil {
			return nil, fmt.Errorf("storeurl: Options.Layers[%q] is nil", name)
		}
		w.Wrap = wrap
		if readOnly {
			w.Wrap = func(ctx context.Context, s blob.Store, params url.Values) (blob.Store, error) {
				return wrap(ctx, blob.ReadOnly(s), params)
			}
		}
		if i := slices.IndexFunc(layers, func(l layer) bool { return l.w.name == name }); i >= 0 {
			layers[i].w = w
			continue
		}
		i := slices.IndexFunc(layers, func(l layer) bool { return l.w.Order > w.Order })
		if i < 0 {
			i = len(layers)
		}
		layers = slices.Insert(layers, i, layer{w, url.Values{}})
	}
	return layers, nil
}

// wrapper returns the wrapper registered as name.
func (m *Mux) wrapper(name string) (namedWrapper, error) {
	for _, w := range m.registeredWrappers() {
		if w.name == name {
			return w, nil
		}
	}
	return namedWrapper{}, fmt.Errorf("storeurl: no wrapper %q is registered", name)
}
