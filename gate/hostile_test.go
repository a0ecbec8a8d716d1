package gate_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

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
