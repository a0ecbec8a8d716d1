package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// seedHistory writes a file's life through a history Store over the
// shared store of the test: created by "session 42", edited by the
// default actor, renamed. It returns the store's URL and the versions.
func seedHistory(t *testing.T) (string, []history.Version) {
	t.Helper()
	name := storeName(t)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	hs, err := history.New(sharedStore(name), &history.Options{Actor: "seed",
		Now: func() time.Time { at = at.Add(time.Minute); return at }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(hs, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := blob.WithActor(context.Background(), "session 42")
	for _, r := range []memory.Result{
		h.Create(ctx, "/memories/a.md", "one\ntwo\n"),
		h.StrReplace(context.Background(), "/memories/a.md", "two", "2"),
		h.Rename(ctx, "/memories/a.md", "/memories/b.md"),
	} {
		if r.IsError {
			t.Fatal(r.Text)
		}
	}
	vs, err := hs.History(ctx, "b.md")
	if err != nil || len(vs) != 3 {
		t.Fatalf("seeded history %v, %v", vs, err)
	}
	return "shared://" + name, vs
}

func TestHistoryTable(t *testing.T) {
	store, vs := seedHistory(t)
	code, out, errOut := cloudmem([]string{"history", "/memories/b.md", "--store", store}, "", nil)
	want := fmt.Sprintf(`  VERSION           TIME                  ACTOR       OPERATION  SIZE  PATH
  %s  2026-12-01T09:01:00Z  session 42  created    8     /memories/a.md
  %s  2026-12-01T09:02:00Z  seed        modified   6     /memories/a.md
* %s  2026-12-01T09:03:00Z  session 42  renamed    6     /memories/b.md (from /memories/a.md)
`, vs[0].ID, vs[1].ID, vs[2].ID)
	if code != 0 || out != want || errOut != "" {
		t.Errorf("history: code %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
}

func TestHistoryJSON(t *testing.T) {
	store, vs := seedHistory(t)
	code, out, errOut := cloudmem([]string{"history", "--json", "/memories/b.md", "--store", store}, "", nil)
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, out)
	}
	want := []map[string]any{
		{"version": vs[0].ID, "time": "2026-12-01T09:01:00Z", "actor": "session 42", "operation": "created",
			"path": "/memories/a.md", "size": 8.0, "sha256": sha256Hex("one\ntwo\n"), "current": false},
		{"version": vs[1].ID, "time": "2026-12-01T09:02:00Z", "actor": "seed", "operation": "modified",
			"path": "/memories/a.md", "size": 6.0, "sha256": sha256Hex("one\n2\n"), "current": false},
		{"version": vs[2].ID, "time": "2026-12-01T09:03:00Z", "actor": "session 42", "operation": "renamed",
			"path": "/memories/b.md", "from": "/memories/a.md", "size": 6.0, "sha256": sha256Hex("one\n2\n"), "current": true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("history --json:\n got %v\nwant %v", got, want)
	}
}

func TestShowDiffRestore(t *testing.T) {
	store, vs := seedHistory(t)
	ref := "/memories/b.md@" + vs[0].ID
	if code, out, errOut := cloudmem([]string{"show", ref, "--store", store}, "", nil); code != 0 || out != "one\ntwo\n" || errOut != "" {
		t.Errorf("show: %d %q %q", code, out, errOut)
	}
	wantDiff := "--- /memories/b.md@" + vs[0].ID + "\n+++ /memories/b.md\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
	if code, out, errOut := cloudmem([]string{"diff", ref, "--store", store}, "", nil); code != 0 || out != wantDiff || errOut != "" {
		t.Errorf("diff against current: %d %q %q\nwant %q", code, out, errOut, wantDiff)
	}
	wantDiff = "--- /memories/b.md@" + vs[0].ID + "\n+++ /memories/b.md@" + vs[1].ID + "\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
	if code, out, _ := cloudmem([]string{"diff", ref, "/memories/b.md@" + vs[1].ID, "--store", store}, "", nil); code != 0 || out != wantDiff {
		t.Errorf("diff of two versions: %d %q\nwant %q", code, out, wantDiff)
	}
	code, out, errOut := cloudmem([]string{"restore", ref, "--actor", "ops", "--store", store}, "", nil)
	hs, _ := history.New(sharedStore(strings.TrimPrefix(store, "shared://")), nil)
	after, _ := hs.History(context.Background(), "b.md")
	want := fmt.Sprintf("Restored /memories/b.md to version %s: new version %s.\n", vs[0].ID, after[len(after)-1].ID)
	if code != 0 || out != want || errOut != "" {
		t.Errorf("restore: %d %q %q, want %q", code, out, errOut, want)
	}
	if last := after[len(after)-1]; len(after) != 4 || last.Actor != "ops" || last.RestoredFrom != vs[0].ID || !last.Current {
		t.Errorf("history after restore: %+v", after)
	}
	// Redacting the version restored (now the current content) is refused.
	code, _, errOut = cloudmem([]string{"redact", ref, "--store", store}, "", nil)
	wantErr := fmt.Sprintf("cloudmem redact: history: the version is the file's current content: version %s of \"b.md\" has the content the file holds now; change or delete the file first\n", vs[0].ID)
	if code != 1 || errOut != wantErr {
		t.Errorf("redact of the current content: %d %q, want %q", code, errOut, wantErr)
	}
	// The middle version can be redacted.
	code, out, errOut = cloudmem([]string{"redact", "/memories/b.md@" + vs[1].ID, "--store", store}, "", nil)
	want = fmt.Sprintf("Redacted version %s of /memories/a.md.\nRedacted version %s of /memories/b.md.\n", vs[1].ID, vs[2].ID)
	if code != 0 || out != want || errOut != "" {
		t.Errorf("redact: %d %q %q, want %q", code, out, errOut, want)
	}
}

func TestHistoryBadInput(t *testing.T) {
	store, _ := seedHistory(t)
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"show", "/memories/b.md"}, 2, "cloudmem show: history: malformed PATH@VERSION: \"/memories/b.md\" has no @VERSION\n" +
			"Usage: cloudmem show PATH@VERSION\nRun 'cloudmem show --help' for more.\n"},
		{[]string{"show", "/memories/b.md@0123456789abcdef"}, 1, "cloudmem show: history: no such version \"0123456789abcdef\" in the history of \"b.md\"\n"},
		{[]string{"history", "/memories/none.md"}, 1, "cloudmem history: history: \"none.md\" has no versions: blob: object does not exist\n"},
		{[]string{"audit", "--since", "yesterday"}, 2, "cloudmem audit: --since yesterday: want a time such as 2026-12-01T09:00:00Z, a date such as 2026-12-01, or a duration such as 24h\n" +
			"Usage: cloudmem audit\nRun 'cloudmem audit --help' for more.\n"},
	}
	for _, c := range cases {
		code, out, errOut := cloudmem(append(c.args, "--store", store), "", nil)
		if code != c.code || out != "" || errOut != c.stderr {
			t.Errorf("%q: code %d, stdout %q, stderr\n%q\nwant %d\n%q", c.args, code, out, errOut, c.code, c.stderr)
		}
	}
}

func TestAuditLines(t *testing.T) {
	store, vs := seedHistory(t)
	code, out, errOut := cloudmem([]string{"audit", "--since", "2026-12-01T09:02:00Z", "--actor", "session 42", "--store", store}, "", nil)
	want := fmt.Sprintf(`{"time":"2026-12-01T09:03:00Z","actor":"session 42","operation":"renamed","path":"/memories/b.md","from":"/memories/a.md","version":"%s","size":6,"sha256":"%s"}
`, vs[2].ID, sha256Hex("one\n2\n"))
	if code != 0 || out != want || errOut != "" {
		t.Errorf("audit: %d %q\n%s\nwant\n%s", code, errOut, out, want)
	}
	code, out, _ = cloudmem([]string{"audit", "--store", store}, "", nil)
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Errorf("audit of everything: %d\n%s", code, out)
	}
}

func TestHistoryPrune(t *testing.T) {
	store, _ := seedHistory(t)
	code, out, errOut := cloudmem([]string{"history", "prune", "--keep", "1", "--store", store}, "", nil)
	if code != 0 || out != "Removed 1 version, kept 2.\n" || errOut != "" {
		t.Errorf("prune: %d %q %q", code, out, errOut)
	}
	code, out, _ = cloudmem([]string{"history", "prune", "--store", store}, "", nil)
	if code != 0 || out != "Removed 0 versions, kept 2.\n" {
		t.Errorf("prune with no retention: %d %q", code, out)
	}
}

// TestHistoryParamsOfTheURL: the history commands take the URL's history
// parameters (history_keep here, as prune's default) and refuse them as
// Open does (history_keep without history=on), with the whole error line.
func TestHistoryParamsOfTheURL(t *testing.T) {
	store, _ := seedHistory(t)
	code, out, errOut := cloudmem([]string{"history", "prune", "--store", store + "?history=on&history_keep=1"}, "", nil)
	if code != 0 || out != "Removed 1 version, kept 2.\n" || errOut != "" {
		t.Errorf("prune with history_keep=1: %d %q %q", code, out, errOut)
	}
	code, out, errOut = cloudmem([]string{"history", "prune", "--store", store + "?history_keep=1"}, "", nil)
	if want := "cloudmem history prune: history: history_keep needs history=on\n"; code != 1 || out != "" || errOut != want {
		t.Errorf("history_keep without history=on: %d %q %q, want 1 \"\" %q", code, out, errOut, want)
	}
}

// TestReadOnlyURLHistoryWrites: a URL's readonly=true holds for what the
// history commands write through the history Store itself (prune, redact),
// not only for the memory files: each fails with the one line of
// docs/spec.md "redact and prune on a read-only store" (a dry run too,
// whose store error names a key of the history), and the store, its
// records included, stays as it was.
func TestReadOnlyURLHistoryWrites(t *testing.T) {
	const (
		pruneLine  = "cloudmem history prune: the store is read-only, and prune deletes versions from its history (check readonly= in the store URL)\n"
		redactLine = "cloudmem redact: the store is read-only, and redact rewrites versions in its history (check readonly= in the store URL)\n"
	)
	for _, c := range []struct {
		name string
		args func(vs []history.Version) []string
		want string
	}{
		{"prune", func([]history.Version) []string { return []string{"history", "prune", "--keep", "1"} }, pruneLine},
		{"redact", func(vs []history.Version) []string { return []string{"redact", "b.md@" + vs[0].ID} }, redactLine},
		{"redact --dry-run", func(vs []history.Version) []string { return []string{"redact", "--dry-run", "b.md@" + vs[0].ID} }, redactLine},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, vs := seedHistory(t)
			before := contents(t, strings.TrimPrefix(store, "shared://"))
			args := c.args(vs)
			code, out, errOut := cloudmem(append(args, "--store", store+"?readonly=1"), "", nil)
			if code != 1 || out != "" || errOut != c.want {
				t.Errorf("%q on a readonly=1 URL = %d, %q, %q; want 1, \"\", %q", args, code, out, errOut, c.want)
			}
			if after := contents(t, strings.TrimPrefix(store, "shared://")); !equalMaps(after, before) {
				t.Errorf("%q changed the read-only store:\n got %q\nwant %q", args, after, before)
			}
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestExecRecordsHistory runs the model's commands through exec on a
// store URL with history=on, then reads the history back with the CLI:
// each change is a version by exec's --actor, and the history commands
// read the same records when the URL leaves history off.
func TestExecRecordsHistory(t *testing.T) {
	dir := t.TempDir()
	store := "file://" + dir + "?history=on"
	cmds := `{"command":"create","path":"/memories/a.md","file_text":"x\n"}` + "\n" +
		`{"command":"str_replace","path":"/memories/a.md","old_str":"x","new_str":"y"}` + "\n"
	code, out, errOut := cloudmem([]string{"exec", "--actor", "agent-7", "--store", store}, cmds, nil)
	if code != 0 || errOut != "" || strings.Count(out, `"is_error":false`) != 2 {
		t.Fatalf("exec: %d %q %q", code, out, errOut)
	}
	for _, s := range []string{store, "file://" + dir} {
		code, out, errOut = cloudmem([]string{"history", "--json", "/memories/a.md", "--store", s}, "", nil)
		var vs []versionJSON
		if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &vs) != nil {
			t.Fatalf("history --store %s: %d %q %q", s, code, out, errOut)
		}
		if len(vs) != 2 || vs[0].Operation != history.OpCreated || vs[1].Operation != history.OpModified ||
			vs[0].Actor != "agent-7" || vs[1].Actor != "agent-7" || !vs[1].Current || vs[1].SHA256 != sha256Hex("y\n") {
			t.Errorf("history --store %s: %+v", s, vs)
		}
	}
}

// TestHistoryPruneFailure: a failed prune prints its error and no success
// line before it.
func TestHistoryPruneFailure(t *testing.T) {
	needSchemes(t, "s3")
	code, out, errOut := cloudmem([]string{"history", "prune", "--keep", "1", "--store", "failing://"}, "", nil)
	if want := "cloudmem history prune: " + signatureLine; code != 1 || out != "" || errOut != want {
		t.Errorf("prune on a failing store = %d, %q, %q; want 1, \"\", %q", code, out, errOut, want)
	}
}

// TestVersionPrefix: show, diff, restore and redact take a unique prefix
// of a version; diff takes @V2 after PATH@V1; a prefix that matches no
// version, or is too short, is refused with the reason.
func TestVersionPrefix(t *testing.T) {
	store, vs := seedHistory(t)
	ids := []string{vs[0].ID, vs[1].ID, vs[2].ID}
	p0, p1 := uniquePrefix(ids, 0), uniquePrefix(ids, 1)
	if len(p0) == 16 || len(p1) == 16 {
		t.Fatalf("versions %q have no unique prefix shorter than an id", ids)
	}
	code, out, errOut := cloudmem([]string{"show", "b.md@" + p0, "--store", store}, "", nil)
	if code != 0 || out != "one\ntwo\n" || errOut != "" {
		t.Errorf("show b.md@%s = %d, %q, %q", p0, code, out, errOut)
	}
	wantDiff := "--- /memories/b.md@" + vs[0].ID + "\n+++ /memories/b.md@" + vs[1].ID + "\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
	for _, args := range [][]string{
		{"diff", "/memories/b.md@" + p0, "@" + p1},
		{"diff", "b.md@" + strings.ToUpper(p0), "b.md@" + vs[1].ID},
	} {
		code, out, errOut = cloudmem(append(args, "--store", store), "", nil)
		if code != 0 || out != wantDiff || errOut != "" {
			t.Errorf("%q = %d, %q, %q; want 0,\n%s", args, code, out, errOut, wantDiff)
		}
	}
	code, out, errOut = cloudmem([]string{"restore", "--dry-run", "b.md@" + p0, "--store", store}, "", nil)
	if want := "would restore /memories/b.md to version " + vs[0].ID + "\n"; code != 0 || out != want || errOut != "" {
		t.Errorf("restore --dry-run = %d, %q, %q; want 0, %q", code, out, errOut, want)
	}
	code, out, errOut = cloudmem([]string{"redact", "--dry-run", "b.md@" + p0, "--store", store}, "", nil)
	if want := "would redact version " + vs[0].ID + " of /memories/a.md\n"; code != 0 || out != want || errOut != "" {
		t.Errorf("redact --dry-run = %d, %q, %q; want 0, %q", code, out, errOut, want)
	}
	// The current content (vs[1] and the rename vs[2]) cannot be redacted,
	// in a dry run as in a real one.
	code, _, errOut = cloudmem([]string{"redact", "--dry-run", "b.md@" + p1, "--store", store}, "", nil)
	wantErr := fmt.Sprintf("cloudmem redact: history: the version is the file's current content: version %s of \"b.md\" has the content the file holds now; change or delete the file first\n", vs[1].ID)
	if code != 1 || errOut != wantErr {
		t.Errorf("redact --dry-run of the current content = %d, %q; want 1, %q", code, errOut, wantErr)
	}
	// Nothing changed: the history is as seeded.
	hs, _ := history.New(sharedStore(strings.TrimPrefix(store, "shared://")), nil)
	if after, err := hs.History(context.Background(), "b.md"); err != nil || len(after) != 3 || after[0].Redacted != nil {
		t.Errorf("after the dry runs the history is %+v, %v", after, err)
	}

	// Versions made close together share their first digits (an id
	// starts with its time): four digits name all three.
	short := vs[0].ID[:4]
	code, _, errOut = cloudmem([]string{"show", "b.md@" + short, "--store", store}, "", nil)
	if want := "cloudmem show: version " + short + " of /memories/b.md is ambiguous: " + strings.Join(ids, ", ") + "\n"; code != 1 || errOut != want {
		t.Errorf("show b.md@%s = %d, %q; want 1, %q", short, code, errOut, want)
	}

	none := "ffff"
	if strings.HasPrefix(vs[0].ID, none) || strings.HasPrefix(vs[1].ID, none) || strings.HasPrefix(vs[2].ID, none) {
		none = "0000"
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"show", "b.md@" + none}, 1, "cloudmem show: no version " + none + " of /memories/b.md\n"},
		{[]string{"show", "b.md@abc"}, 2, "cloudmem show: history: malformed PATH@VERSION: \"b.md@abc\": a version is 4 to 16 hexadecimal digits, as history lists them\n" +
			"Usage: cloudmem show PATH@VERSION\nRun 'cloudmem show --help' for more.\n"},
		{[]string{"show", "b.md@xyz1"}, 2, "cloudmem show: history: malformed PATH@VERSION: \"b.md@xyz1\": a version is 4 to 16 hexadecimal digits, as history lists them\n" +
			"Usage: cloudmem show PATH@VERSION\nRun 'cloudmem show --help' for more.\n"},
	} {
		code, out, errOut := cloudmem(append(tc.args, "--store", store), "", nil)
		if code != tc.code || out != "" || errOut != tc.stderr {
			t.Errorf("%q = %d, %q, %q; want %d, %q", tc.args, code, out, errOut, tc.code, tc.stderr)
		}
	}
}

func TestMatchVersion(t *testing.T) {
	ids := []string{"abcd000000000001", "abcd000000000002", "abce000000000003", "abcd000000000001"}
	for _, tc := range []struct{ prefix, id, err string }{
		{"abce", "abce000000000003", ""},
		{"abcd0000000000011", "", "no version abcd0000000000011 of /memories/n.md"},
		{"abcd000000000001", "abcd000000000001", ""}, // repeated in the history (a rename's versions), one id
		{"abcd", "", "version abcd of /memories/n.md is ambiguous: abcd000000000001, abcd000000000002"},
		{"ffff", "", "no version ffff of /memories/n.md"},
	} {
		id, err := matchVersion(ids, tc.prefix, "n.md")
		if id != tc.id || errString(err) != tc.err {
			t.Errorf("matchVersion(%q) = %q, %q; want %q, %q", tc.prefix, id, errString(err), tc.id, tc.err)
		}
	}
}

// uniquePrefix returns the shortest prefix of ids[i], of 4 digits or more,
// that no other id starts with.
func uniquePrefix(ids []string, i int) string {
	for n := 4; n < len(ids[i]); n++ {
		p, unique := ids[i][:n], true
		for j, id := range ids {
			if j != i && strings.HasPrefix(id, p) {
				unique = false
			}
		}
		if unique {
			return p
		}
	}
	return ids[i]
}

// TestRestoreDryRunChecks: a restore's dry run makes the real restore's
// checks (here the file limit of the URL's max_files: b.md took the place
// a.md left) and gives its error; neither changes the store.
func TestRestoreDryRunChecks(t *testing.T) {
	name := storeName(t)
	hs, err := history.New(sharedStore(name), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(hs, memory.Options{MaxFiles: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, r := range []memory.Result{
		h.Create(ctx, "/memories/a.md", "a\n"),
		h.Delete(ctx, "/memories/a.md"),
		h.Create(ctx, "/memories/b.md", "b\n"),
	} {
		if r.IsError {
			t.Fatal(r.Text)
		}
	}
	vs, err := hs.History(ctx, "a.md")
	if err != nil || len(vs) != 2 {
		t.Fatalf("a.md's history: %v, %v", vs, err)
	}
	store := "shared://" + name + "?max_files=1"
	const want = "cloudmem restore: The memory directory is full: it holds 1 files, the limit is 1. Delete or merge files first.\n"
	for _, args := range [][]string{{"restore", "--dry-run", "a.md@" + vs[0].ID}, {"restore", "a.md@" + vs[0].ID}} {
		code, out, errOut := cloudmem(append(args, "--store", store), "", nil)
		if code != 1 || out != "" || errOut != want {
			t.Errorf("%q = %d, %q, %q; want 1, %q", args, code, out, errOut, want)
		}
	}
	files := map[string]string{}
	for k, v := range contents(t, name) {
		if !blob.IsReserved(k) {
			files[k] = v
		}
	}
	if want := map[string]string{"b.md": "b\n"}; !equalMaps(files, want) {
		t.Errorf("the store holds %q, want %q", files, want)
	}
	if after, err := hs.History(ctx, "a.md"); err != nil || len(after) != 2 {
		t.Errorf("a.md's history after: %v, %v; want the 2 versions", after, err)
	}
}
