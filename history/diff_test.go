package history_test

import (
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/history"
)

func TestUnifiedDiff(t *testing.T) {
	lines := func(n ...string) string { return strings.Join(n, "\n") + "\n" }
	cases := []struct {
		name, a, b, want string
	}{
		{"equal", "x\n", "x\n", ""},
		{"one line changed", lines("a", "b", "c"), lines("a", "B", "c"),
			"--- A\n+++ B\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"added to empty", "", "new\n",
			"--- A\n+++ B\n@@ -0,0 +1 @@\n+new\n"},
		{"no newline at end", "a\nb", "a\nc",
			"--- A\n+++ B\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"two hunks", lines("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"),
			lines("one", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "twelve"),
			"--- A\n+++ B\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n"},
		{"close changes share a hunk", lines("1", "2", "3", "4", "5", "6", "7", "8"),
			lines("one", "2", "3", "4", "5", "6", "7", "eight"),
			"--- A\n+++ B\n@@ -1,8 +1,8 @@\n-1\n+one\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+eight\n"},
		{"line removed", lines("a", "b"), lines("a"),
			"--- A\n+++ B\n@@ -1,2 +1 @@\n a\n-b\n"},
	}
	for _, c := range cases {
		if got := history.UnifiedDiff("A", "B", []byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestDiff compares two versions, and a version with the current content.
func TestDiff(t *testing.T) {
	hs := wrap(t, mem.New(nil), nil)
	h := newHandler(t, hs)
	ctx := t.Context()
	must(t, h.Create(ctx, "/memories/a", "x\ny\n"))
	must(t, h.StrReplace(ctx, "/memories/a", "y", "z"))
	must(t, h.Insert(ctx, "/memories/a", 2, "w\n"))
	vs, _ := hs.History(ctx, "a")
	got, err := hs.Diff(ctx, "a", vs[0].ID, vs[1].ID)
	want := "--- a@" + vs[0].ID + "\n+++ a@" + vs[1].ID + "\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
	if err != nil || got != want {
		t.Errorf("Diff(v1, v2) = %q, %v\nwant %q", got, err, want)
	}
	got, err = hs.Diff(ctx, "a", vs[0].ID, "")
	want = "--- a@" + vs[0].ID + "\n+++ a\n@@ -1,2 +1,3 @@\n x\n-y\n+z\n+w\n"
	if err != nil || got != want {
		t.Errorf("Diff(v1, current) = %q, %v\nwant %q", got, err, want)
	}
}
