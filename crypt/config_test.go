package crypt

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/backends/mem"
)

// opaqueRecipient is an age.Recipient of a type the package does not know.
type opaqueRecipient struct{ age.Recipient }

func TestConfigValidate(t *testing.T) {
	app, escrow, other := newX25519Key(t), newX25519Key(t), newX25519Key(t)
	pq, pqEscrow := newHybridKey(t), newHybridKey(t)
	many := func(n int, newKey func(testing.TB) testKey) []testKey {
		keys := make([]testKey, n)
		for i := range keys {
			keys[i] = newKey(t)
		}
		return keys
	}
	nineX, tenX := many(9, newX25519Key), many(10, newX25519Key)
	fivePQ, sixPQ := many(5, newHybridKey), many(6, newHybridKey)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"app and escrow", config([]testKey{app}, app, escrow), ""},
		{"escrow reads", config([]testKey{escrow}, app, escrow), ""},
		{"post-quantum", config([]testKey{pq}, pq, pqEscrow), ""},
		{"identities of both kinds", config([]testKey{other, pq}, pq, pqEscrow), ""},
		{"nine X25519", config(nineX[:1], nineX...), ""},
		{"five post-quantum", config(fivePQ[:1], fivePQ...), ""},
		{"zero", Config{}, "crypt: no identities: one is needed to read objects"},
		{"no recipients", config([]testKey{app}), "crypt: no recipients: one is needed to write objects"},
		{"no identities", config(nil, app), "crypt: no identities: one is needed to read objects"},
		{"nil identity", Config{Recipients: config(nil, app).Recipients, Identities: []age.Identity{nil}}, "crypt: identity 1 is nil"},
		{"mixed kinds", config([]testKey{app}, app, pq),
			"crypt: recipients mix X25519 (age1...) and post-quantum (age1pq1...) keys, which age refuses to encrypt to at once: rekey everything to one kind"},
		{"repeated", config([]testKey{app}, app, escrow, app), "crypt: recipient 3 repeats recipient 1"},
		{"ten X25519", config(tenX[:1], tenX...), "crypt: 10 recipients of this kind, over the limit of 9"},
		{"six post-quantum", config(sixPQ[:1], sixPQ...), "crypt: 6 recipients of this kind, over the limit of 5"},
		{"identity of no recipient", config([]testKey{other}, app, escrow),
			"crypt: none of the identities is the private key of a recipient: the store could not read what it writes"},
		{"unknown recipient type", Config{Recipients: []age.Recipient{opaqueRecipient{app.recipient}}, Identities: config([]testKey{app}).Identities},
			"crypt: recipient 1: unsupported type crypt.opaqueRecipient (want an X25519 or post-quantum hybrid age key)"},
	} {
		err := tc.cfg.Validate()
		if got := errText(err); got != tc.want {
			t.Errorf("%s: Validate() = %q, want %q", tc.name, got, tc.want)
		}
		s, err := Wrap(mem.New(nil), tc.cfg)
		if got := errText(err); got != tc.want || (err == nil) != (s != nil) {
			t.Errorf("%s: Wrap = %v, %q; want error %q", tc.name, s, got, tc.want)
		}
	}
	if _, err := Wrap(nil, config([]testKey{app}, app)); errText(err) != "crypt: nil store" {
		t.Errorf("Wrap(nil) error = %v", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestParseRecipients(t *testing.T) {
	x, pq := newX25519Key(t), newHybridKey(t)
	rs, err := ParseRecipients(" "+x.public+"\n", pq.public)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].(*age.X25519Recipient).String() != x.public || rs[1].(*age.HybridRecipient).String() != pq.public {
		t.Fatalf("ParseRecipients = %v", rs)
	}
	// A private key pasted by mistake, a typo: the error never repeats them.
	typo := x.public[:len(x.public)-1] + "q" // one changed character breaks the checksum
	if strings.HasSuffix(x.public, "q") {
		typo = x.public[:len(x.public)-1] + "p"
	}
	for i, bad := range []string{x.secret, typo, "age1pq1" + x.public[4:], ""} {
		_, err := ParseRecipients(pq.public, bad)
		want := "crypt: recipient 2 is not a valid age public key (age1... or age1pq1...)"
		if errText(err) != want {
			t.Errorf("bad recipient %d: error = %v, want %q", i, err, want)
		}
	}
}

func TestParseIdentities(t *testing.T) {
	x, pq := newX25519Key(t), newHybridKey(t)
	text := "# a comment\n\n  " + x.secret + "  \r\n# public key: " + pq.public + "\n" + pq.secret
	ids, err := ParseIdentities(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || ids[0].(*age.X25519Identity).String() != x.secret || ids[1].(*age.HybridIdentity).String() != pq.secret {
		t.Fatal("ParseIdentities returned other identities")
	}
	swap := "Z" // a character of the key's alphabet other than the one it replaces
	if x.secret[20] == 'Z' {
		swap = "Q"
	}
	damaged := x.secret[:20] + swap + x.secret[21:]
	for _, tc := range []struct{ text, want string }{
		{"", "crypt: no age identity found"},
		{"# only a comment\n", "crypt: no age identity found"},
		{"\n" + damaged + "\n", "crypt: identities line 2 is not a valid age identity"},
		{pq.secret + "\n" + x.public, "crypt: identities line 2 is not a valid age identity"},
		{"AGE-SECRET-KEY-PQ-1" + damaged[16:], "crypt: identities line 1 is not a valid age identity"},
	} {
		_, err := ParseIdentities(tc.text)
		if errText(err) != tc.want {
			t.Errorf("ParseIdentities(...) error = %v, want %q", err, tc.want)
		}
	}
}

func TestLoadIdentities(t *testing.T) {
	x := newX25519Key(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "identity.txt")
	if err := os.WriteFile(path, []byte(x.secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ids, err := LoadIdentities(path)
	if err != nil || len(ids) != 1 || ids[0].(*age.X25519Identity).String() != x.secret {
		t.Fatalf("LoadIdentities = %v, %v", ids, err)
	}
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte(x.secret[:30]), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadIdentities(bad)
	if want := "crypt: identities line 1 is not a valid age identity (in " + bad + ")"; errText(err) != want {
		t.Fatalf("LoadIdentities(bad) error = %v, want %q", err, want)
	}
	_, err = LoadIdentities(filepath.Join(dir, "missing"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadIdentities(missing) error = %v, want a not-exist error", err)
	}
}

func TestIdentitiesFromEnv(t *testing.T) {
	x := newX25519Key(t)
	t.Setenv(EnvIdentity, "# test\n"+x.secret+"\n")
	ids, err := IdentitiesFromEnv()
	if err != nil || len(ids) != 1 || ids[0].(*age.X25519Identity).String() != x.secret {
		t.Fatalf("IdentitiesFromEnv = %v, %v", ids, err)
	}
	t.Setenv(EnvIdentity, " \n")
	if _, err := IdentitiesFromEnv(); errText(err) != "crypt: CLOUDMEM_AGE_IDENTITY is not set" {
		t.Fatalf("IdentitiesFromEnv with an empty variable: %v", err)
	}
	t.Setenv(EnvIdentity, x.public)
	if _, err := IdentitiesFromEnv(); errText(err) != "crypt: identities line 1 is not a valid age identity (in CLOUDMEM_AGE_IDENTITY)" {
		t.Fatalf("IdentitiesFromEnv with a public key: %v", err)
	}
}

func TestGenerateIdentity(t *testing.T) {
	for _, tc := range []struct {
		name     string
		generate func() (string, string, error)
		format   string
	}{
		{"X25519", GenerateIdentity, `^# public key: (age1[02-9ac-hj-np-z]{58})\nAGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}\n$`},
		{"Hybrid", GenerateHybridIdentity, `^# public key: (age1pq1[02-9ac-hj-np-z]+)\nAGE-SECRET-KEY-PQ-1[02-9AC-HJ-NP-Z]+\n$`},
	} {
		identity, recipient, err := tc.generate()
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(tc.format).FindStringSubmatch(identity)
		if m == nil || m[1] != recipient {
			t.Fatalf("%s: identity file %q does not match %s with recipient %q", tc.name, identity, tc.format, recipient)
		}
		ids, err := ParseIdentities(identity)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := ParseRecipients(recipient)
		if err != nil {
			t.Fatal(err)
		}
		if err := (Config{Recipients: rs, Identities: ids}).Validate(); err != nil {
			t.Fatalf("%s: the generated pair does not make a valid Config: %v", tc.name, err)
		}
		if again, _, _ := tc.generate(); again == identity || strings.Contains(again, recipient) {
			t.Fatalf("%s: two generated identities share a key", tc.name)
		}
	}
}
