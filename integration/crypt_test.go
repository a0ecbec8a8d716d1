package integration

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

// The encrypted store (package crypt) over every cloud backend: the
// handler's SPEC and concurrency suites pass through it, and what lands in
// the bucket holds no plaintext. The SPEC suite runs through history above
// crypt (history=on&encrypt=age, in storeurl's order), which proves both
// layers in one run: crypt sees every call the handler makes, plus the
// records, except a tree delete, which history makes key by key; crypt
// forwards that to the server's own (as crypt's tests prove), which the
// server's plain SPEC run proves.

// cloudStores are the backends' store constructors: bucket is a store over
// a whole new bucket (or container, or Redis prefix), so that the SPEC
// suite's longest paths fit; prefixed is a store under a unique prefix of
// the shared one, for the races.
var cloudStores = []struct {
	name             string
	bucket, prefixed func(t *testing.T) blob.Store
}{
	{"S3", newS3BucketStore, newS3Store},
	{"GCS", newGCSBucketStore, newGCSStore},
	{"Azure", newAzureContainerStore, newAzureStore},
	{"Redis", func(t *testing.T) blob.Store { return newRedisStore(t, redisClient(t)) },
		func(t *testing.T) blob.Store { return newRedisStore(t, redisClient(t)) }},
}

// cryptConfig returns a configuration with a new X25519 identity, made once
// per test.
func cryptConfig(t *testing.T) crypt.Config {
	t.Helper()
	identity, recipient, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := crypt.ParseIdentities(identity)
	if err != nil {
		t.Fatal(err)
	}
	rcpts, err := crypt.ParseRecipients(recipient)
	if err != nil {
		t.Fatal(err)
	}
	return crypt.Config{Recipients: rcpts, Identities: ids}
}

// encrypted returns newStore's stores wrapped with crypt under cfg.
func encrypted(cfg crypt.Config, newStore func(t *testing.T) blob.Store) func(t *testing.T) blob.Store {
	return func(t *testing.T) blob.Store {
		t.Helper()
		s, err := crypt.Wrap(newStore(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// TestEncryptedHandler runs, on every server, the SPEC suite through
// history above crypt (the stack storeurl builds for history=on&encrypt=age,
// which proves both layers in one run) and 16 writers inserting into one
// file through history and crypt (its version records equal the
// acknowledged edits). The handler's concurrency suite is not rerun here:
// each server's plain run (TestS3HandlerConcurrency, ...) proves it on the
// server, crypt's own suite proves it through crypt, and the race subtest
// proves that crypt keeps the server's conditional writes exact under
// contention; through crypt on a server it cost 190-420 s a server.
func TestEncryptedHandler(t *testing.T) {
	for _, cs := range cloudStores {
		t.Run(cs.name, func(t *testing.T) {
			cfg := cryptConfig(t)
			t.Run("spec", func(t *testing.T) {
				memorytest.RunWith(t, withHistory(encrypted(cfg, cs.bucket)), wrappedSpecSkips)
			})
			t.Run("race", func(t *testing.T) { historyRace(t, encrypted(cfg, cs.prefixed)(t)) })
		})
	}
}

// TestEncryptedNoPlaintext writes memories through the encrypted store and
// reads every raw object of the bucket: none holds the plaintext, or the
// file's name, in the clear inside its content; the memories read back.
func TestEncryptedNoPlaintext(t *testing.T) {
	const secret = "the launch code is 0451, tell no one"
	for _, cs := range cloudStores {
		t.Run(cs.name, func(t *testing.T) {
			ctx := context.Background()
			inner := cs.prefixed(t)
			s, err := crypt.Wrap(inner, cryptConfig(t))
			if err != nil {
				t.Fatal(err)
			}
			h, err := memory.New(s, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ in, want string }{
				{`{"command":"create","path":"/memories/notes/secret.md","file_text":"` + secret + `\n"}`,
					"File created successfully at: /memories/notes/secret.md"},
				{`{"command":"str_replace","path":"/memories/notes/secret.md","old_str":"0451","new_str":"0451 (rotated)"}`,
					"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
						"     1\tthe launch code is 0451 (rotated), tell no one\n     2\t"},
				{`{"command":"rename","old_path":"/memories/notes/secret.md","new_path":"/memories/archive/secret.md"}`,
					"Successfully renamed /memories/notes/secret.md to /memories/archive/secret.md"},
				{`{"command":"view","path":"/memories/archive/secret.md"}`,
					"Here's the content of /memories/archive/secret.md with line numbers:\n" +
						"     1\tthe launch code is 0451 (rotated), tell no one\n     2\t"},
				{`{"command":"view","path":"/memories"}`,
					"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
						"47B\t/memories\n47B\t/memories/archive/\n47B\t/memories/archive/secret.md"},
			} {
				if got := h.Execute(ctx, []byte(c.in)); got.IsError || got.Text != c.want {
					t.Fatalf("%s\ngot  %q (error %v)\nwant %q", c.in, got.Text, got.IsError, c.want)
				}
			}
			raw, err := blob.ListAll(ctx, inner, "")
			if err != nil {
				t.Fatal(err)
			}
			// The witnesses of the handler's create protocol on MinIO are no memory.
			raw = slices.DeleteFunc(raw, func(info blob.Info) bool { return memory.IsBookkeeping(info.Key) && info.Key != fileCountKey })
			var keys []string
			for _, info := range raw {
				keys = append(keys, info.Key)
			}
			// The key object, the handler's file count (encrypted like the
			// memories, and read below like them) and the memory file.
			if want := []string{blob.EncryptionKeyName, fileCountKey, "archive/secret.md"}; !slices.Equal(keys, want) {
				t.Fatalf("the bucket holds %q, want %q", keys, want)
			}
			for _, info := range raw {
				data, _, err := inner.Get(ctx, info.Key, blob.MaxObjectBytes)
				if err != nil {
					t.Fatal(err)
				}
				for _, clear := range []string{"launch code", "0451", "tell no one"} {
					if bytes.Contains(data, []byte(clear)) {
						t.Errorf("raw object %q contains %q in the clear", info.Key, clear)
					}
				}
			}
		})
	}
}
