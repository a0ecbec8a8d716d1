package gate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
)

// A file count that another party planted (or that a handler whose clock
// runs far ahead wrote) with reservations dated in the future does not keep
// the store full for ever: a recount drops a reservation dated further
// ahead than any create waits, as it drops one too old, and the creates the
// limit allows succeed.
func TestCountReservationsFromTheFuture(t *testing.T) {
	ctx := t.Context()
	store := mem.New(nil)
	type pending struct {
		Key string `json:"key"`
		ID  string `json:"id"`
		At  int64  `json:"at"`
	}
	planted := struct {
		Files   int       `json:"files"`
		Token   string    `json:"token"`
		Pending []pending `json:"pending"`
	}{Files: 3, Token: "planted"}
	future := time.Now().AddDate(100, 0, 0).UnixNano()
	for i := range 3 {
		planted.Pending = append(planted.Pending, pending{Key: fmt.Sprintf("ghost%d", i), ID: fmt.Sprintf("%016x", i), At: future})
	}
	data, err := json.Marshal(planted)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, blob.ReservedName+"/files", data, blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(store, gate.Options{MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "b", "c"} {
		if _, err := g.Create(ctx, key, []byte("x"), false); err != nil {
			t.Fatalf("Create(%q) in a store that holds no file: %v", key, err)
		}
	}
	if _, err := g.Create(ctx, "d", []byte("x"), false); !isFull(err, 3, 3) {
		t.Errorf("the fourth Create: %v, want full at 3 of 3", err)
	}
}

func isFull(err error, n, limit int64) bool {
	e, ok := err.(*gate.Error)
	return ok && e.Kind == gate.ErrFull && e.Size == n && e.Limit == limit
}

// Whatever another party planted as the file count (not JSON, negative,
// out of range, of the wrong type, over the count's read limit, a name that
// is also a directory), creates recount and keep the limit, and nothing
// panics; names that are both a file and a directory are edited, moved and
// deleted as files without losing what lies beneath.
func TestHostileBucket(t *testing.T) {
	ctx := t.Context()
	counts := map[string][]byte{
		"not JSON":      []byte("{files"),
		"negative":      []byte(`{"files":-5,"token":"t"}`),
		"out of range":  []byte(`{"files":1e400,"token":"t"}`),
		"wrong type":    []byte(`{"files":"two","pending":7}`),
		"over the read": append([]byte(`{"files":0,"token":"t","pending":[`), make([]byte, 2<<20)...),
		"empty":         nil,
	}
	for name, planted := range counts {
		t.Run(name, func(t *testing.T) {
			store := mem.New(nil)
			for _, key := range []string{"x", "y"} {
				if _, err := store.Put(ctx, key, []byte("x"), blob.Cond{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := store.Put(ctx, blob.ReservedName+"/files", planted, blob.Cond{}); err != nil {
				t.Fatal(err)
			}
			g, err := gate.New(store, gate.Options{MaxFiles: 3})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Create(ctx, "a", []byte("x"), false); err != nil {
				t.Errorf("the third file: %v", err)
			}
			if _, err := g.Create(ctx, "b", []byte("x"), false); !isFull(err, 3, 3) {
				t.Errorf("the fourth file: %v, want full at 3 of 3", err)
			}
		})
	}
	t.Run("a count that is also a directory", func(t *testing.T) {
		store := mem.New(nil)
		if _, err := store.Put(ctx, blob.ReservedName+"/files/x", []byte("x"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
		g, err := gate.New(store, gate.Options{MaxFiles: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Create(ctx, "a", []byte("x"), false); err != nil {
			t.Errorf("the first file: %v", err)
		}
		if _, err := g.Create(ctx, "b", []byte("x"), false); !isFull(err, 1, 1) {
			t.Errorf("the second file: %v, want full at 1 of 1", err)
		}
	})
	t.Run("a name that is both a file and a directory", func(t *testing.T) {
		store := mem.New(nil)
		for _, key := range []string{"t/a", "t/a/b"} {
			if _, err := store.Put(ctx, key, []byte("content of "+key), blob.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		g, err := gate.New(store, gate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Create(ctx, "t/a", []byte("x"), false); !errors.Is(err, gate.ErrExists) {
			t.Errorf("Create(t/a): %v, want ErrExists", err)
		}
		if _, err := g.Create(ctx, "t/a/c", []byte("x"), false); !errors.Is(err, gate.ErrNotDir) {
			t.Errorf("Create(t/a/c): %v, want ErrNotDir", err)
		}
		if _, err := g.Edit(ctx, "t/a", func(b []byte) ([]byte, error) { return append(b, '!'), nil }); err != nil {
			t.Errorf("Edit(t/a): %v", err)
		}
		if err := g.Move(ctx, "t/a/b", "u"); err != nil {
			t.Errorf("Move(t/a/b, u): %v", err)
		}
		if err := g.Remove(ctx, "t", blob.Cond{}, true); err != nil {
			t.Errorf("Remove(t): %v", err)
		}
		if got := keys(t, g); !slices.Equal(got, []string{"u"}) {
			t.Errorf("files %v, want u alone", got)
		}
		if data, _, err := g.Get(ctx, "u"); err != nil || string(data) != "content of t/a/b" {
			t.Errorf("Get(u): %q, %v", data, err)
		}
	})
}

// On a store that keeps names exclusive (the file store), a directory that
// another party put at the file count's key blocks every write of the
// count: a create fails at once with a storage error that says so, rather
// than retrying for half a minute and answering that another writer
// changed the file.
func TestCountBlockedByADirectory(t *testing.T) {
	ctx := t.Context()
	store, err := file.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, blob.ReservedName+"/files/x", []byte("x"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(store, gate.Options{MaxFiles: 1, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = g.Create(ctx, "a", []byte("x"), false)
	const want = `gate: the file count cannot be written: a directory holds its key ".cloudmem/files"`
	if err == nil || err.Error() != want || errors.Is(err, gate.ErrConflict) {
		t.Errorf("Create: %v, want the storage failure %q", err, want)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Create took %v, want it to fail at once", took)
	}
	if got := keys(t, g); len(got) != 0 {
		t.Errorf("files %v, want none", got)
	}
}
