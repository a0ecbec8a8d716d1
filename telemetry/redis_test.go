package telemetry_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	_ "github.com/cloudmem/cloudmem/backends/redis" // the redis:// scheme
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
	"github.com/cloudmem/cloudmem/telemetry"
)

// redisAddr returns the test Redis server's address. A missing server
// fails the test when CI or CLOUDMEM_INTEGRATION is set, and skips it
// otherwise.
func redisAddr(t *testing.T) string {
	t.Helper()
	addr := os.Getenv("CLOUDMEM_TEST_REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") != "" || os.Getenv("CLOUDMEM_INTEGRATION") != "" {
			t.Fatal("CLOUDMEM_TEST_REDIS_ADDR is not set (eval \"$(bash integration/emulators.sh env)\")")
		}
		t.Skip("no Redis server: set CLOUDMEM_TEST_REDIS_ADDR (eval \"$(bash integration/emulators.sh env)\")")
	}
	return addr
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// redisWithPassword opens a store on the test server as a Redis user of its
// own, with a password, from a URL that carries it, as a program would.
// The user and the store's keys are removed when the test ends.
func redisWithPassword(t *testing.T, password string) blob.Store {
	t.Helper()
	ctx := context.Background()
	addr := redisAddr(t)
	admin := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { _ = admin.Close() })
	user, prefix := "cloudmem-telemetry-"+randomHex(t), "telemetry-test-"+randomHex(t)
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">"+password, "~*", "&*", "+@all").Err(); err != nil {
		t.Fatalf("creating a Redis user: %v", err)
	}
	t.Cleanup(func() {
		keys, _ := admin.Keys(ctx, "cm:{"+prefix+"}:*").Result()
		if len(keys) > 0 {
			admin.Del(ctx, keys...)
		}
		admin.Do(ctx, "ACL", "DELUSER", user)
	})
	s, err := storeurl.Open(ctx, "redis://"+user+":"+password+"@"+addr+"/?prefix="+prefix)
	if err != nil {
		t.Fatalf("opening the store: %v", err)
	}
	return s
}

// The same spans and attributes on a server: every command on Redis, with
// the storage calls the handler's call table gives (a create probes and
// keeps the file count; Redis refuses a clash itself, so no look follows
// its put; a directory delete
// reads the count; Redis renames and deletes trees in one call), a failure when the connection is gone, and no
// trace of the password anywhere.
func TestRedis(t *testing.T) {
	const password = "PLANTED-redis-password-5f3a"
	s := redisWithPassword(t, password)
	r := newRig(t, telemetry.Options{Backend: "redis"})
	h := r.handler(t, s, memory.Options{})

	for _, c := range []struct {
		input   string
		command string
		storage []string // name and result of each storage span
	}{
		{`{"command":"create","path":"/memories/a/notes.md","file_text":"PLANTED-1\nPLANTED-2\n"}`, "create_memory ok", []string{
			// the file count (absent), the probes, a recount, the reservation, the file, its confirmation
			"storage get not_found", "storage stat not_found", "storage stat not_found", "storage list ok", "storage list ok",
			"storage put ok", "storage put ok", "storage put ok"}},
		{`{"command":"view","path":"/memories/a/notes.md"}`, "search_memory ok", []string{"storage get ok"}},
		{`{"command":"str_replace","path":"/memories/a/notes.md","old_str":"PLANTED-2","new_str":"2"}`, "update_memory ok", []string{"storage get ok", "storage put ok"}},
		{`{"command":"insert","path":"/memories/a/notes.md","insert_line":2,"insert_text":"PLANTED-3"}`, "update_memory ok", []string{"storage get ok", "storage put ok"}},
		{`{"command":"rename","old_path":"/memories/a","new_path":"/memories/b"}`, "update_memory ok", []string{"storage rename ok"}},
		{`{"command":"view","path":"/memories/b"}`, "search_memory ok", []string{"storage get not_found", "storage list ok"}},
		{`{"command":"create","path":"/memories/b/notes.md","file_text":"x"}`, "create_memory error", []string{
			// the file refused and the count raised at once, the count taken back, the probes
			"storage put precondition_failed", "storage put ok", "storage put ok", "storage stat ok", "storage stat not_found"}},
		{`{"command":"delete","path":"/memories/b"}`, "delete_memory ok", []string{"storage get ok", "storage delete not_found", "storage list ok", "storage delete_tree ok", "storage list ok"}},
		{`{"command":"view","path":"/memories/b"}`, "search_memory error", []string{"storage get not_found", "storage list ok"}},
	} {
		res, parent, spans := r.run(t, h, c.input)
		got := slices.Collect(func(yield func(string) bool) {
			for _, s := range spans {
				result := ""
				for _, kv := range s.Attributes() {
					if kv.Key == "cloudmem.storage.result" || kv.Key == "cloudmem.memory.result" {
						result = kv.Value.AsString()
					}
				}
				if !yield(s.Name() + " " + result) {
					return
				}
			}
		})
		want := append(slices.Clone(c.storage), c.command)
		// Calls made at once end in any order: compared in byte order.
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) || got[len(got)-1] != c.command {
			t.Errorf("%s (%q): spans %q, want %q", c.input, res.Text, got, want)
			continue
		}
		cmd := spans[len(spans)-1]
		if cmd.Parent().SpanID() != parent.SpanID() {
			t.Errorf("%s: the command span is not the caller's child", c.input)
		}
		for _, s := range spans[:len(spans)-1] {
			if s.Parent().SpanID() != cmd.SpanContext().SpanID() {
				t.Errorf("%s: %s is not the command span's child", c.input, s.Name())
			}
		}
	}

	// A store whose client is closed fails every call.
	if err := blob.Close(s); err != nil {
		t.Fatal(err)
	}
	res, _, spans := r.run(t, h, `{"command":"view","path":"/memories/b"}`)
	if !errors.Is(res.Err, memory.ErrStorage) || len(spans) != 2 {
		t.Fatalf("view after Close: %q, %d spans; want a storage failure in 2 spans", res.Text, len(spans))
	}
	want := "storage get [client] cloudmem.storage.backend=redis cloudmem.storage.bytes=0 cloudmem.storage.operation=get cloudmem.storage.result=error error.type=_OTHER status=Error(the storage backend returned an error)"
	if got := describeSpan(spans[0]); got != want {
		t.Errorf("failed call:\n got %s\nwant %s", got, want)
	}

	m := r.metrics(t)
	wantMetrics := map[string][]string{
		telemetry.MetricBytesWritten:  {"cloudmem.storage.backend=redis cloudmem.storage.operation=put: 352"}, // 54 of the file, the rest the file count
		telemetry.MetricBytesRead:     {"cloudmem.storage.backend=redis cloudmem.storage.operation=get: 106"}, // 52 of the file, the rest the file count
		telemetry.MetricStorageErrors: {"cloudmem.storage.backend=redis cloudmem.storage.operation=get error.type=_OTHER: 1"},
		telemetry.MetricCommandDuration: {
			"cloudmem.memory.command=create cloudmem.memory.result=error cloudmem.storage.backend=redis error.type=exists gen_ai.operation.name=create_memory: 1",
			"cloudmem.memory.command=create cloudmem.memory.result=ok cloudmem.storage.backend=redis gen_ai.operation.name=create_memory: 1",
			"cloudmem.memory.command=delete cloudmem.memory.result=ok cloudmem.storage.backend=redis gen_ai.operation.name=delete_memory: 1",
			"cloudmem.memory.command=insert cloudmem.memory.result=ok cloudmem.storage.backend=redis gen_ai.operation.name=update_memory: 1",
			"cloudmem.memory.command=rename cloudmem.memory.result=ok cloudmem.storage.backend=redis gen_ai.operation.name=update_memory: 1",
			"cloudmem.memory.command=str_replace cloudmem.memory.result=ok cloudmem.storage.backend=redis gen_ai.operation.name=update_memory: 1",
			"cloudmem.memory.command=view cloudmem.memory.result=error cloudmem.storage.backend=redis error.type=not_found gen_ai.operation.name=search_memory: 1",
			"cloudmem.memory.command=view cloudmem.memory.result=error cloudmem.storage.backend=redis error.type=storage gen_ai.operation.name=search_memory: 1",
			"cloudmem.memory.command=view cloudmem.memory.result=ok cloudmem.storage.backend=redis gen_ai.operation.name=search_memory: 2",
		},
	}
	for name, w := range wantMetrics {
		if got := points(m[name]); !slices.Equal(got, w) {
			t.Errorf("%s: %q, want %q", name, got, w)
		}
	}

	out := r.exported(t)
	for _, leak := range []string{password, "cloudmem-telemetry-", "telemetry-test-", redisAddr(t), "PLANTED"} {
		if strings.Contains(out, leak) {
			t.Errorf("%q appears in the exported telemetry:\n%s", leak, out)
		}
	}
}
