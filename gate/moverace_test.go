package gate_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
)

// raceStore runs rival, once, just before the first write that lands a key
// at or beneath dst: a Rename to dst, or a Put there (a move by copy). The
// rival's own writes pass through untouched. With byCopy it has no atomic
// Rename, so blob.Rename copies.
type raceStore struct {
	blob.Forward
	dst    string
	byCopy bool
	rival  func()
	fired  atomic.Bool
}

func (s *raceStore) before(key string) {
	if (key == s.dst || strings.HasPrefix(key, s.dst+"/")) && s.fired.CompareAndSwap(false, true) {
		s.rival()
	}
}

func (s *raceStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	s.before(key)
	return s.Forward.Put(ctx, key, data, c)
}

func (s *raceStore) Rename(ctx context.Context, src, dst string) error {
	if s.byCopy {
		return errors.ErrUnsupported
	}
	s.before(dst)
	return s.Forward.Rename(ctx, src, dst)
}

// A move that a create of a clashing name races, after the move's checks
// and before its write lands, never leaves a name both a file and a
// directory: the create (which wrote first) keeps its name and the move is
// refused, as its checks would have refused it a moment later, and nothing
// is lost. Both on a store that renames atomically without keeping names
// exclusive (mem) and on one that moves by copying.
func TestMoveRacingCreate(t *testing.T) {
	cases := []struct {
		name     string
		files    []string // before the move
		from, to string
		rival    string // the key the racing create writes
		want     gate.Error
		after    []string
	}{
		{"a file under a new file", []string{"x"}, "x", "p/q", "p",
			gate.Error{Kind: gate.ErrNotDir, Key: "p"}, []string{"p", "x"}},
		{"a file over a new file", []string{"x"}, "x", "d", "d/f",
			gate.Error{Kind: gate.ErrExists, Key: "d"}, []string{"d/f", "x"}},
		{"a directory over a new file", []string{"s/a"}, "s", "d", "d",
			gate.Error{Kind: gate.ErrExists, Key: "d"}, []string{"d", "s/a"}},
		{"a directory under a new file", []string{"s/a"}, "s", "p/q", "p",
			gate.Error{Kind: gate.ErrNotDir, Key: "p"}, []string{"p", "s/a"}},
	}
	for _, byCopy := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/byCopy=%v", c.name, byCopy), func(t *testing.T) {
				ctx := t.Context()
				store := &raceStore{Forward: blob.Forward{Inner: mem.New(nil)}, dst: c.to, byCopy: byCopy}
				g, err := gate.New(store, gate.Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, key := range c.files {
					if _, err := g.Create(ctx, key, []byte("content of "+key), false); err != nil {
						t.Fatalf("Create(%q): %v", key, err)
					}
				}
				var rivalErr error
				store.rival = func() { _, rivalErr = g.Create(ctx, c.rival, []byte("rival"), false) }
				err = g.Move(ctx, c.from, c.to)
				if !store.fired.Load() {
					t.Fatal("the rival create never ran")
				}
				if rivalErr != nil {
					t.Fatalf("the rival Create(%q), made before the move wrote: %v", c.rival, rivalErr)
				}
				got, ok := errors.AsType[*gate.Error](err)
				if !ok || got.Kind != c.want.Kind || got.Key != c.want.Key {
					t.Errorf("Move(%q, %q): %v, want the refusal %v about %q", c.from, c.to, err, c.want.Kind, c.want.Key)
				}
				if after := keys(t, g); !slices.Equal(after, c.after) {
					t.Errorf("the files are %v, want %v", after, c.after)
				}
				for _, key := range c.files {
					if data, _, err := g.Get(ctx, key); err != nil || string(data) != "content of "+key {
						t.Errorf("Get(%q): %q, %v; want it unchanged", key, data, err)
					}
				}
			})
		}
	}
}
