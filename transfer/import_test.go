package transfer

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestImportProblems checks the kind of each problem Import reports, that
// input problems come before any look at the store, and that a refused
// import writes nothing.
func TestImportProblems(t *testing.T) {
	ctx := context.Background()
	before := map[string]string{"a.md": "old", "d/x": "x", "e/f": "f"}
	s := storeWith(t, before)
	_, err := Import(ctx, s, []File{
		{Name: "ok.md", Data: []byte("fine")},
		{Name: "link", Invalid: "a link (import takes regular files only)"},
		{Name: "../x", Data: []byte("escape")},
		{Name: "dup", Data: []byte("1")},
		{Name: "dup", Data: []byte("2")},
	}, nil)
	pe, ok := errors.AsType[*ProblemsError](err)
	want := []Problem{
		{Key: "link", Reason: "a link (import takes regular files only)", Kind: ErrInvalidInput},
		{Key: "../x", Reason: "Path /memories/../x would escape /memories directory", Kind: ErrInvalidInput},
		{Key: "dup", Reason: "appears twice in the input", Kind: ErrInvalidInput},
	}
	if !ok || !errors.Is(err, ErrProblems) || !slices.Equal(pe.Problems, want) {
		t.Errorf("Import of a bad input = %v\nwant the problems %v", err, want)
	}

	stats, err := Import(ctx, s, []File{
		{Name: "a.md", Data: []byte("new")},
		{Name: "e", Data: []byte("over a directory")},
		{Name: "d/x/z", Data: []byte("beneath a file")},
		{Name: "n.md", Data: []byte("new file")},
	}, nil)
	pe, ok = errors.AsType[*ProblemsError](err)
	want = []Problem{
		{Key: "a.md", Reason: "the store holds other content", Kind: ErrDiffers},
		{Key: "e", Reason: "a file in the input, a directory in the store", Kind: ErrClash},
		{Key: "d/x/z", Reason: "d/x is a file in the store, not a directory", Kind: ErrClash},
	}
	if !ok || stats != (ImportStats{}) || !slices.Equal(pe.Problems, want) {
		t.Errorf("Import of clashes = %+v, %v\nwant the problems %v", stats, err, want)
	}
	if got := contents(t, s); !mapsEqual(got, before) {
		t.Errorf("a refused import changed the store to %q", got)
	}

	stats, err = Import(ctx, s, []File{{Name: "a.md", Data: []byte("new")}, {Name: "n.md", Data: []byte("n")}},
		&ImportOptions{Overwrite: true, Jobs: 1})
	if err != nil || stats != (ImportStats{New: 1, Replaced: 1, Written: 2}) {
		t.Errorf("Import with Overwrite = %+v, %v", stats, err)
	}
}
