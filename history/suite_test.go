package history_test

import (
	"log/slog"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

// wrap returns a history Store over inner that logs nowhere.
func wrap(t testing.TB, inner blob.Store, opts *history.Options) *history.Store {
	t.Helper()
	var o history.Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	hs, err := history.New(inner, &o)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

func newFile(t testing.TB) blob.Store {
	t.Helper()
	s, err := file.Open(t.Context(), t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newCrypt returns an age-encrypting store over inner, with a fresh key.
func newCrypt(t testing.TB, inner blob.Store) blob.Store {
	t.Helper()
	id, rcpt, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := crypt.ParseIdentities(id)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := crypt.ParseRecipients(rcpt)
	if err != nil {
		t.Fatal(err)
	}
	s, err := crypt.Wrap(inner, crypt.Config{Recipients: rs, Identities: ids})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBlobSuiteMem(t *testing.T) {
	t.Parallel()
	blobtest.Run(t, func(t *testing.T) blob.Store { return wrap(t, mem.New(nil), nil) })
}

func TestBlobSuiteFile(t *testing.T) {
	t.Parallel()
	blobtest.Run(t, func(t *testing.T) blob.Store { return wrap(t, newFile(t), nil) })
}

func TestBlobSuiteCryptMem(t *testing.T) {
	t.Parallel()
	blobtest.Run(t, func(t *testing.T) blob.Store { return wrap(t, newCrypt(t, mem.New(nil)), nil) })
}

func TestBlobSuiteCryptFile(t *testing.T) {
	t.Parallel()
	skips := blobtest.Options{Skip: map[string]string{
		"ListMany": "TestBlobSuiteFile and TestBlobSuiteCryptMem page over 1,000 keys through history over each of the two layers beneath",
	}}
	blobtest.RunWith(t, func(t *testing.T) blob.Store { return wrap(t, newCrypt(t, newFile(t)), nil) }, skips)
}

func TestSpecSuiteMem(t *testing.T) {
	t.Parallel()
	memorytest.Run(t, func(t *testing.T) blob.Store { return wrap(t, mem.New(nil), nil) })
	memorytest.RunConcurrency(t, func(t *testing.T) blob.Store { return wrap(t, mem.New(nil), nil) })
}

func TestSpecSuiteFile(t *testing.T) {
	t.Parallel()
	memorytest.Run(t, func(t *testing.T) blob.Store { return wrap(t, newFile(t), nil) })
}

// fullStoreSkip leaves the 2,000-file case (2,000 encryptions, then 4,000
// reads) out of the runs through history over crypt: TestSpecSuiteMem and
// TestSpecSuiteFile pass it through history, crypt's TestMemorySuite through
// crypt, and the small-MaxFiles cases prove through both layers that
// neither's keys count.
var fullStoreSkip = memorytest.Options{Skip: map[string]string{
	memorytest.FullStoreCase: "TestSpecSuiteMem and TestSpecSuiteFile pass it through history, crypt's TestMemorySuite through crypt",
}}

// TestSpecSuiteCryptFile runs the SPEC suite through the whole stack that
// history=on&encrypt=age builds, over the file store. It is the one run
// through both layers: over mem it would prove nothing more (history over
// mem and crypt over mem each have their own run).
func TestSpecSuiteCryptFile(t *testing.T) {
	t.Parallel()
	memorytest.RunWith(t, func(t *testing.T) blob.Store { return wrap(t, newCrypt(t, newFile(t)), nil) }, fullStoreSkip)
}
