package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// actorStore records the actor (blob.Actor) of every Put that reaches it.
type actorStore struct {
	blob.Store
	mu     sync.Mutex
	actors []string
}

func (s *actorStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	s.mu.Lock()
	s.actors = append(s.actors, blob.Actor(ctx))
	s.mu.Unlock()
	return s.Store.Put(ctx, key, data, c)
}

var (
	actorStoresMu sync.Mutex
	actorStores   = map[string]*actorStore{}
)

func init() {
	storeurl.Register("actors", storeurl.Backend{Open: func(_ context.Context, u *url.URL) (blob.Store, error) {
		actorStoresMu.Lock()
		defer actorStoresMu.Unlock()
		s, ok := actorStores[u.Host]
		if !ok {
			s = &actorStore{Store: mem.New(nil)}
			actorStores[u.Host] = s
		}
		return s, nil
	}})
}

// TestExecActor checks that exec runs every command as --actor, and as
// user@host without it.
func TestExecActor(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	store := "actors://" + storeName(t)
	for i, args := range [][]string{{"exec", "--actor", "session 42"}, {"exec"}} {
		edits := fmt.Sprintf(`{"command":"create","path":"/memories/%d.md","file_text":"a"}
{"command":"str_replace","path":"/memories/%d.md","old_str":"a","new_str":"b"}
`, i, i)
		code, stdout, stderr := cloudmem(append(args, "--store", store), edits, nil)
		if code != 0 || stderr != "" || strings.Count(stdout, `"is_error":false`) != 2 {
			t.Fatalf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and two successes", args, code, stdout, stderr)
		}
	}
	want := []string{"session 42", "session 42", u.Username + "@" + host, u.Username + "@" + host}
	got := actorStores[storeName(t)].actors
	if !slices.Equal(got, want) {
		t.Errorf("the writes were made by %q, want %q", got, want)
	}
}
