package dirsync_test

import (
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/dirsync/dirsynctest"
	"github.com/cloudmem/cloudmem/history"
)

// The scenarios through the history wrapper, which hides its records from
// the listing sync sees.
func TestScenariosHistory(t *testing.T) {
	dirsynctest.Run(t, func(t *testing.T) blob.Store {
		hs, err := history.New(mem.New(nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		return hs
	})
}

// The scenarios through an encrypted store (history above encryption, as
// storeurl stacks them).
func TestScenariosEncrypted(t *testing.T) {
	identity, recipient, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := crypt.ParseIdentities(identity)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := crypt.ParseRecipients(recipient)
	if err != nil {
		t.Fatal(err)
	}
	dirsynctest.Run(t, func(t *testing.T) blob.Store {
		enc, err := crypt.Wrap(mem.New(nil), crypt.Config{Recipients: rs, Identities: ids})
		if err != nil {
			t.Fatal(err)
		}
		hs, err := history.New(enc, nil)
		if err != nil {
			t.Fatal(err)
		}
		return hs
	})
}

// Every store write of a sync is a version whose actor is the machine.
func TestSyncWritesAreVersionedWithTheMachine(t *testing.T) {
	hs, err := history.New(mem.New(nil), &history.Options{Actor: "store default"})
	if err != nil {
		t.Fatal(err)
	}
	laptop, desktop := dirsynctest.NewMachine(t, "laptop"), dirsynctest.NewMachine(t, "desktop")
	laptop.Write(t, map[string]string{"n.md": "1"})
	laptop.MustSync(t, hs)
	desktop.MustSync(t, hs)
	desktop.Write(t, map[string]string{"n.md": "2"})
	desktop.MustSync(t, hs)
	desktop.Remove(t, "n.md")
	desktop.MustSync(t, hs)

	vs, err := hs.History(t.Context(), "n.md")
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		actor string
		op    history.Op
		size  int64
	}
	var got []rec
	for _, v := range vs {
		got = append(got, rec{v.Actor, v.Op, v.Size})
	}
	want := []rec{{"laptop", history.OpCreated, 1}, {"desktop", history.OpModified, 1}, {"desktop", history.OpDeleted, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("history of n.md: %+v, want %+v", got, want)
	}
}
