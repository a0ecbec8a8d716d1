package main

import (
	"context"
	"fmt"
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
	if !blob.IsReserved(key) { // the handler's file count aside: memory files only
		s.mu.Lock()
		s.actors = append(s.actors, blob.Actor(ctx))
		s.mu.Unlock()
	}
	return s.Store.Put(ctx, key, data, c)
}

// written returns the actors recorded so far.
func (s *actorStore) written() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.actors)
}

// actorStoreNamed returns the store actors://name opened.
func actorStoreNamed(name string) *actorStore {
	actorStoresMu.Lock()
	defer actorStoresMu.Unlock()
	return actorStores[name]
}

var (
	actorStoresMu sync.Mutex
	actorStores   = map[string]*actorStore{}
)

func init() {
	storeurl.Register("actors", storeurl.Backend{Open: func(_ context.Context, loc *storeurl.Location) (blob.Store, error) {
		actorStoresMu.Lock()
		defer actorStoresMu.Unlock()
		s, ok := actorStores[loc.URL.Host]
		if !ok {
			s = &actorStore{Store: mem.New(nil)}
			actorStores[loc.URL.Host] = s
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
	got := actorStoreNamed(storeName(t)).written()
	if !slices.Equal(got, want) {
		t.Errorf("the writes were made by %q, want %q", got, want)
	}
}

// TestChatActor checks that chat makes the model's changes as --actor, and
// as user@host without it.
func TestChatActor(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		actor string
	}{
		{[]string{"--actor", "alice's laptop"}, "alice's laptop"},
		{nil, u.Username + "@" + host},
	} {
		url, _ := chatPlayback(t, 200, chatResponses)
		name := fmt.Sprintf("%s-%d", storeName(t), len(tc.flags))
		args := append([]string{"chat", "--store", "actors://" + name}, tc.flags...)
		code, _, stderr := cloudmem(args, "I prefer tea. Remember that.\nWhat do I prefer?", map[string]string{apiKeyEnv: "test-key", baseURLEnv: url})
		if code != 0 || stderr != "" {
			t.Fatalf("cloudmem %q = %d, stderr %q", args, code, stderr)
		}
		if got := actorStoreNamed(name).written(); !slices.Equal(got, []string{tc.actor}) {
			t.Errorf("chat %q made its writes as %q, want [%q]", tc.flags, got, tc.actor)
		}
	}
}
