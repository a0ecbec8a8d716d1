package crypt

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// The known-answer test reads stores written by an earlier version of this
// package (crypt/testdata/<kind>/store, one file per object) with the
// test-only identities committed next to them, so a format change that
// would strand existing stores fails here. Regenerate the fixtures only for
// a deliberate format change, with:
//
//	go test ./crypt -run TestKnownAnswer -update-fixtures
var updateFixtures = flag.Bool("update-fixtures", false, "rewrite crypt/testdata (a format change: old stores will no longer read)")

// katContent is the expected plaintext of each fixture object.
func katContent() map[string][]byte {
	big := make([]byte, ageChunk+100) // two age chunks
	for i := range big {
		big[i] = byte(i * 7 % 251)
	}
	return map[string][]byte{
		"notes/preferences.md": []byte("The user prefers tabs to spaces.\nAlways answer in French.\n"),
		"empty.md":             {},
		"unicode/日本語.md":       []byte("こんにちは\n"),
		"binary/big.bin":       big,
	}
}

var katKinds = []struct {
	dir      string
	generate func() (string, string, error)
	keys     []string // the objects of katContent this kind's fixture holds
}{
	{"x25519", GenerateIdentity, []string{"binary/big.bin", "empty.md", "notes/preferences.md", "unicode/日本語.md"}},
	{"hybrid", GenerateHybridIdentity, []string{"notes/preferences.md"}},
}

func TestKnownAnswer(t *testing.T) {
	content := katContent()
	for _, kind := range katKinds {
		t.Run(kind.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", kind.dir)
			if *updateFixtures {
				writeFixture(t, dir, kind.generate, kind.keys, content)
			}
			cfg := fixtureConfig(t, dir)
			inner := mem.New(nil)
			loadFixture(t, inner, filepath.Join(dir, "store"))
			if pin := legacyPin(t, dir); pin != "" {
				// A store from before the key object carried vouchers: its
				// key is trusted only once pinned.
				_, _, err := wrap(t, inner, cfg).Get(t.Context(), kind.keys[0], blob.MaxObjectBytes)
				if !errors.Is(err, ErrUntrustedKey) {
					t.Fatalf("Get from the unpinned legacy store: %v, want ErrUntrustedKey", err)
				}
				cfg.KeyFingerprint = pin
			}
			s := wrap(t, inner, cfg)
			wantListed(t, s, "", kind.keys...)
			wantListed(t, inner, "", append([]string{keyObject}, kind.keys...)...)
			kr, err := cfg.compile(true, true)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range kind.keys {
				want := content[key]
				if got := get(t, s, key); !bytes.Equal(got, want) {
					t.Errorf("%s: Get = %q..., want %q...", key, got[:min(len(got), 40)], want[:min(len(want), 40)])
				}
				st, err := s.Stat(t.Context(), key)
				if err != nil || st.Size != int64(len(want)) {
					t.Errorf("%s: Stat = Size %d, %v; want %d", key, st.Size, err, len(want))
				}
				stored, err := inner.Stat(t.Context(), key)
				if err != nil || stored.Size != storedSize(int64(len(want)), len(key), kr.kind.prelude()) {
					t.Errorf("%s: stored size %d is not what this version writes (%d)", key, stored.Size, storedSize(int64(len(want)), len(key), kr.kind.prelude()))
				}
			}
			// The store keeps working: new objects verify with the old
			// integrity key, and old ones still read.
			put(t, s, "new.md", []byte("written now"))
			if got := get(t, wrap(t, inner, cfg), "new.md"); string(got) != "written now" {
				t.Fatalf("Get(new.md) = %q", got)
			}
		})
	}
}

// fixtureConfig reads dir/TEST-ONLY-identities.txt and encrypts to every
// identity in it.
func fixtureConfig(t *testing.T, dir string) Config {
	t.Helper()
	ids, err := LoadIdentities(filepath.Join(dir, "TEST-ONLY-identities.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Identities: ids}
	for _, id := range ids {
		switch id := id.(type) {
		case *age.X25519Identity:
			cfg.Recipients = append(cfg.Recipients, id.Recipient())
		case *age.HybridIdentity:
			cfg.Recipients = append(cfg.Recipients, id.Recipient())
		}
	}
	return cfg
}

// legacyPin returns the fingerprint kept in dir/key-fingerprint.txt, the
// pin of a fixture written before key objects carried vouchers, or "" when
// there is none (a fixture written by this version, whose identities vouch
// for its key).
func legacyPin(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "key-fingerprint.txt"))
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// loadFixture puts every file under root into inner, keyed by its path.
func loadFixture(t *testing.T, inner blob.Store, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		_, err = inner.Put(t.Context(), filepath.ToSlash(rel), data, blob.Cond{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writeFixture replaces dir with a new test-only identity pair (application
// and escrow) and a store holding keys, written by this version.
func writeFixture(t *testing.T, dir string, generate func() (string, string, error), keys []string, content map[string][]byte) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "# TEST ONLY. These private keys are published in the repository: never\n" +
		"# encrypt anything real to them. They decrypt the fixtures of crypt's\n" +
		"# known-answer test (an application key, then an escrow key).\n"
	for range 2 {
		id, _, err := generate()
		if err != nil {
			t.Fatal(err)
		}
		text += id
	}
	if err := os.WriteFile(filepath.Join(dir, "TEST-ONLY-identities.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	inner := mem.New(nil)
	s := wrap(t, inner, fixtureConfig(t, dir))
	for _, key := range keys {
		put(t, s, key, content[key])
	}
	infos, err := blob.ListAll(t.Context(), inner, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		path := filepath.Join(dir, "store", filepath.FromSlash(info.Key))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw(t, inner, info.Key), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.IsSorted(keys) || strings.Contains(strings.Join(keys, ""), "..") {
		t.Fatal("fixture keys must be sorted plain keys")
	}
}
