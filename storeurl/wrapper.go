package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

// The fixed order of the layers Open puts around a backend's store, from
// the backend outwards. A wrapper registers with one of them; Open applies
// the smallest Order first (closest to the backend).
const (
	// OrderPrefix scopes the store to the keys under a directory
	// (prefix=, registered by this package; skipped for a backend that
	// applies the prefix natively).
	OrderPrefix = 100
	// OrderEncrypt encrypts every object (encrypt=age, registered by
	// package crypt): it sees the prefixed keys, so that one bucket may
	// hold stores under different keys.
	OrderEncrypt = 200
	// OrderHistory records every change above encryption, so that the
	// records are stored encrypted like the memories they describe.
	OrderHistory = 300
	// OrderReadOnly refuses every write (readonly=, registered by this
	// package). Only the write policy and the limits sit above it, and
	// what they write (the policy's expiry deletions) passes through it,
	// so that nothing beneath it writes either, history records included.
	OrderReadOnly = 400
	// OrderLimits carries the memory tree's limits (max_files,
	// max_file_bytes, view_limit; registered by this package) in the
	// store's Traits: outermost, so that it reports every layer's Traits.
	OrderLimits = 500
)

// Wrapper is a layer a package registers, like a scheme, for Open to put
// around a backend's store when the URL holds one of its parameters.
type Wrapper struct {
	// Order places the layer (one of the Order constants). No two
	// wrappers share an Order.
	Order int

	// Params are the shared query parameters that select and configure
	// the wrapper; no two wrappers share one. Each may appear at most
	// once in a URL, and Open removes them before the backend sees it.
	Params []string

	// Check validates the wrapper's parameters before the backend is
	// opened (and for Check, which opens nothing); it may clean them in
	// place. params holds only those of Params that the URL gives. Every
	// error Wrap could return about the parameters themselves must come
	// from Check, so that a URL that passes Check fails to open only for
	// the store's sake. Check must not be nil.
	Check func(params url.Values) error

	// Wrap returns s wrapped as params (those of Params the URL gives, at
	// least one) say. Its errors must name no secret. Wrap must not be
	// nil.
	Wrap WrapFunc
}

// WrapFunc puts a layer around s as params say (see Wrapper.Wrap).
type WrapFunc func(ctx context.Context, s blob.Store, params url.Values) (blob.Store, error)

type namedWrapper struct {
	name string
	Wrapper
}

// RegisterWrapper makes a wrapper available under name in DefaultMux (see
// Mux.RegisterWrapper). It is meant to be called from the wrapper
// package's init function.
func RegisterWrapper(name string, w Wrapper) { DefaultMux.RegisterWrapper(name, w) }

// Wrappers returns the names of DefaultMux's wrappers, in the order Open
// applies them.
func Wrappers() []string { return DefaultMux.Wrappers() }

// The wrappers of this package.
const (
	paramPrefix   = "prefix"
	paramReadOnly = "readonly"
	paramTimeout  = "timeout" // not a wrapper: each backend applies it (see Location.Timeout)
)

// prefixLayer is the wrapper prefix= selects; Open also applies it to the
// path of a bucket URL whose backend has no NativePrefix.
var prefixLayer = Wrapper{Order: OrderPrefix, Params: []string{paramPrefix}, Check: checkPrefix, Wrap: wrapPrefix}

// readOnlyLayer is the wrapper readonly= selects.
var readOnlyLayer = Wrapper{Order: OrderReadOnly, Params: []string{paramReadOnly}, Check: checkReadOnly, Wrap: wrapReadOnly}

// checkPrefix validates prefix= and cleans it (removing surrounding '/').
func checkPrefix(params url.Values) error {
	raw := params.Get(paramPrefix)
	prefix := strings.Trim(raw, "/")
	if prefix == "" {
		return fmt.Errorf("storeurl: prefix is empty (leave it out to use the whole store)")
	}
	if err := blob.CheckKey(prefix); err != nil {
		return fmt.Errorf("storeurl: prefix=%q: %w", raw, err)
	}
	if err := checkUnreserved(prefix); err != nil {
		return fmt.Errorf("storeurl: prefix=%q: %w", raw, err)
	}
	params.Set(paramPrefix, prefix)
	return nil
}

// ErrReservedPrefix is the error (tested with errors.Is) of a URL whose
// prefix, from prefix= or a bucket URL's path, has a reserved segment
// (blob.IsReservedSegment): such a store would lie inside another store's
// bookkeeping (its history, its encryption key object) and could rewrite it.
var ErrReservedPrefix = errors.New("is reserved for cloudmem's bookkeeping")

// checkUnreserved refuses a prefix with a reserved segment, naming it.
func checkUnreserved(prefix string) error {
	for seg := range strings.SplitSeq(prefix, "/") {
		if blob.IsReservedSegment(seg) {
			return fmt.Errorf("the segment %s %w", seg, ErrReservedPrefix)
		}
	}
	return nil
}

func wrapPrefix(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
	ps, err := blob.Prefix(s, params.Get(paramPrefix))
	if err != nil {
		return nil, fmt.Errorf("storeurl: prefix: %w", err)
	}
	return ps, nil
}

// checkReadOnly validates readonly= (true, false, 1 or 0).
func checkReadOnly(params url.Values) error {
	_, err := readOnlyValue(params.Get(paramReadOnly))
	return err
}

func wrapReadOnly(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
	if on, _ := readOnlyValue(params.Get(paramReadOnly)); on {
		return blob.ReadOnly(s), nil
	}
	return s, nil
}

func readOnlyValue(v string) (bool, error) {
	switch v {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("storeurl: readonly=%q: want true, false, 1 or 0", v)
}

// The limits of the memory tree a URL may set (docs/spec.md "Concurrency,
// limits and failures"), carried by the store's Traits (blob.WithLimits).
const (
	paramMaxFiles     = "max_files"
	paramMaxFileBytes = "max_file_bytes"
	paramViewLimit    = "view_limit"
)

// limitsLayer is the wrapper the limit parameters select; it is outermost,
// so that every layer beneath reports its Traits through it.
var limitsLayer = Wrapper{Order: OrderLimits, Params: []string{paramMaxFiles, paramMaxFileBytes, paramViewLimit},
	Check: func(params url.Values) error { _, err := ParseLimits(params); return err },
	Wrap: func(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
		l, err := ParseLimits(params)
		if err != nil {
			return nil, err
		}
		return blob.WithLimits(s, l), nil
	}}

// ParseLimits returns the limits of the memory tree that params give (its
// max_files, max_file_bytes and view_limit; other names are ignored),
// checked as Open checks them, with Open's error for a bad value. It is
// for a configuration that sets the limits without a URL (the MCP token
// file's tenants).
func ParseLimits(params url.Values) (blob.Limits, error) {
	var l blob.Limits
	n, err := limitValue(params, paramMaxFiles, 1_000_000_000, true)
	if err != nil {
		return l, err
	}
	l.MaxFiles = int(n)
	if l.MaxFileBytes, err = limitValue(params, paramMaxFileBytes, blob.MaxObjectBytes, false); err != nil {
		return l, err
	}
	n, err = limitValue(params, paramViewLimit, 1_000_000_000, true)
	l.ViewLimit = int(n)
	return l, err
}

// limitValue parses the parameter name: absent is 0, "off" (where allowed)
// is -1, otherwise a whole number from 1 to most.
func limitValue(params url.Values, name string, most int64, off bool) (int64, error) {
	v, ok := params[name]
	if !ok {
		return 0, nil
	}
	if off && v[0] == "off" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil || n < 1 || n > most {
		orOff := ""
		if off {
			orOff = ", or off"
		}
		return 0, fmt.Errorf("storeurl: %s=%q: want a whole number from 1 to %d%s", name, v[0], most, orOff)
	}
	return n, nil
}

// Limits returns the limits of the memory tree that the URL raw sets (its
// max_files, max_file_bytes and view_limit), without opening anything: for
// a program that must know them before the store exists. A bare path sets
// none.
func Limits(raw string) (blob.Limits, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 {
		return blob.Limits{}, nil // a bare path, or one Open reports
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return blob.Limits{}, nil // Open reports it
	}
	return ParseLimits(q)
}
