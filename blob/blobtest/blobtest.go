// Package blobtest is the conformance suite for blob.Store implementations,
// in the manner of testing/fstest: every backend and every wrapper runs the
// same tests, so "passes blobtest" means the same thing for all of them.
//
// A backend's test calls Run (or RunWith, to skip a behaviour its server
// cannot prove) with a constructor that returns a new, empty store:
//
//	func TestConformance(t *testing.T) {
//		blobtest.Run(t, func(t *testing.T) blob.Store {
//			s, err := file.Open(t.Context(), t.TempDir(), nil)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// A read-only store (one for which blob.IsReadOnly is true) runs
// RunReadOnly instead, which checks reads over seeded data and that every
// write fails with blob.ErrReadOnly.
//
// Only test code may import this package.
package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// Options adjusts RunWith. The zero value runs every test.
type Options struct {
	// Skip maps the name of a top-level subtest (as printed by go test
	// -v, e.g. "DeleteIfVersionRace") to the reason the store cannot prove
	// that behaviour, e.g. an emulator that ignores conditional deletes.
	// The subtest calls t.Skip with the reason, so it is printed, never
	// silent. A name that matches no subtest fails the run.
	Skip map[string]string
}

// test is one behaviour: it gets a new, empty store.
type test struct {
	name string
	fn   func(t *testing.T, s blob.Store)
}

// tests is the whole suite, in the order it runs.
func tests() []test {
	var all []test
	for _, group := range [][]test{basicTests, limitTests, keyTests, listTests, raceTests, nameTests, lockTests, cancelTests, treeTests, copyTests} {
		all = append(all, group...)
	}
	return all
}

// Run runs the whole suite. newStore is called once per subtest and must
// return an empty, writable store; it registers any cleanup with t.Cleanup
// (stores on shared servers should use a unique prefix per call).
func Run(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Helper()
	RunWith(t, newStore, Options{})
}

// RunWith is Run with Options.
func RunWith(t *testing.T, newStore func(t *testing.T) blob.Store, opts Options) {
	t.Helper()
	all := tests()
	checkSkipNames(t, opts.Skip, all)
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			if reason, ok := opts.Skip[tc.name]; ok {
				t.Skip(reason)
			}
			s := newStore(t)
			if blob.IsReadOnly(s) {
				t.Fatal("store reports ReadOnly: run it with blobtest.RunReadOnly")
			}
			if keys := listKeys(t, s, ""); len(keys) != 0 {
				t.Fatalf("newStore returned a store that is not empty: List(\"\") = %q", keys)
			}
			tc.fn(t, s)
		})
	}
}

func checkSkipNames(t *testing.T, skip map[string]string, all []test) {
	t.Helper()
	for name, reason := range skip {
		if !slices.ContainsFunc(all, func(tc test) bool { return tc.name == name }) {
			t.Errorf("Options.Skip names %q, which is no subtest of blobtest", name)
		}
		if strings.TrimSpace(reason) == "" {
			t.Errorf("Options.Skip[%q] gives no reason", name)
		}
	}
}

// Helpers shared by the tests. Each fails the test on an unexpected error.

func put(t *testing.T, s blob.Store, key string, data []byte) blob.Info {
	t.Helper()
	info, err := s.Put(t.Context(), key, data, blob.Cond{})
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

func putAll(t *testing.T, s blob.Store, keys ...string) {
	t.Helper()
	for _, k := range keys {
		put(t, s, k, []byte("data of "+k))
	}
}

// wantContent checks that key holds exactly data.
func wantContent(t *testing.T, s blob.Store, key string, data []byte) blob.Info {
	t.Helper()
	got, info, err := s.Get(t.Context(), key, blob.MaxObjectBytes)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("Get(%q) = %s, want %s", key, brief(got), brief(data))
	}
	if info.Key != key || info.Size != int64(len(data)) || info.Version == "" {
		t.Fatalf("Get(%q) Info = {Key:%q Size:%d Version:%q}, want Key %q, Size %d and a version",
			key, info.Key, info.Size, info.Version, key, len(data))
	}
	return info
}

// wantAbsent checks that Get and Stat of key report ErrNotExist.
func wantAbsent(t *testing.T, s blob.Store, key string) {
	t.Helper()
	if _, _, err := s.Get(t.Context(), key, blob.MaxObjectBytes); !errors.Is(err, blob.ErrNotExist) {
		t.Fatalf("Get(%q) error = %v, want ErrNotExist", key, err)
	}
	if _, err := s.Stat(t.Context(), key); !errors.Is(err, blob.ErrNotExist) {
		t.Fatalf("Stat(%q) error = %v, want ErrNotExist", key, err)
	}
}

// wantErr checks that err wraps target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s error = %v, want one wrapping %q", what, err, target)
	}
}

func listInfos(t *testing.T, s blob.Store, prefix string) []blob.Info {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return infos
}

func listKeys(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	var keys []string
	for _, info := range listInfos(t, s, prefix) {
		keys = append(keys, info.Key)
	}
	return keys
}

// wantKeys checks that List(prefix) yields exactly want, in this order.
func wantKeys(t *testing.T, s blob.Store, prefix string, want ...string) {
	t.Helper()
	got := listKeys(t, s, prefix)
	if !slices.Equal(got, want) {
		t.Fatalf("List(%q) keys =\n\t%q\nwant\n\t%q", prefix, got, want)
	}
}

// brief renders data for a failure message without flooding the log.
func brief(data []byte) string {
	if len(data) <= 64 {
		return fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("%q... (%d bytes)", data[:64], len(data))
}

// cancelled returns a context that is already cancelled.
func cancelled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}
