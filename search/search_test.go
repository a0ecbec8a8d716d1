package search_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/search"
)

// put writes files (key -> text) straight into s.
func put(t *testing.T, s blob.Store, files map[string]string) {
	t.Helper()
	for k, v := range files {
		if _, err := s.Put(context.Background(), k, []byte(v), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
}

// notes is the corpus of the ranking tests.
var notes = map[string]string{
	"deploy.md":         "# Deploy\nThe deploy key lives in the vault.\nRotate the deploy key every month.\n",
	"notes/keys.md":     "Key rotation\nkeys: deploy, signing\nThe signing key is kept offline.\n",
	"notes/cafe.md":     "Meeting at the Café Zürich.\nCAFÉ au lait for everyone.\n",
	"notes/tokyo.md":    "出張: 東京 and 大阪\n東京タワー visit on Friday.\n",
	"notes/long.md":     "intro\n" + "x deploy y\n",
	".hidden/secret.md": "deploy key hidden",
	"node_modules/a.md": "deploy",
	".cloudmem/files":   "deploy",
	"img.png":           "\x89PNG\r\n\x1a\n\xff\xfe deploy",
	"projects/plan.txt": "Plan: migrate the database, then deploy.\nDeployment window: Friday.\n",
}

func search1(t *testing.T, x *search.Index, req search.Request) search.Results {
	t.Helper()
	res, err := x.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("Search(%+v): %v", req, err)
	}
	return res
}

// want is a Search and its whole expected text.
type want struct {
	req  search.Request
	text string
}

func check(t *testing.T, x *search.Index, cases []want) {
	t.Helper()
	for _, c := range cases {
		res, err := x.Search(context.Background(), c.req)
		got := ""
		if err != nil {
			got = search.ErrorText(err)
		} else {
			got = res.Text()
		}
		if got != c.text {
			t.Errorf("Search(%+v):\n%s\nwant:\n%s", c.req, got, c.text)
		}
	}
}

// TestRanking checks whole result lists: BM25 order, phrases, prefixes,
// folding, scripts without spaces, a directory, and what is never found
// (hidden names, node_modules, reserved keys, files that are not text).
func TestRanking(t *testing.T) {
	s := mem.New(nil)
	put(t, s, notes)
	x := search.New(s, nil)
	check(t, x, []want{
		{search.Request{Query: "deploy key"}, `Found 4 files for "deploy key" in /memories:
/memories/deploy.md (lines 1, 2, 3)
     2	The «deploy» «key» lives in the vault.
/memories/notes/keys.md (lines 1, 2, 3)
     1	«Key» rotation
/memories/notes/long.md (line 2)
     2	x «deploy» y
/memories/projects/plan.txt (line 1)
     1	Plan: migrate the database, then «deploy».`},
		{search.Request{Query: "deploy key", Limit: 2}, `Found 4 files for "deploy key" in /memories; the best 2:
/memories/deploy.md (lines 1, 2, 3)
     2	The «deploy» «key» lives in the vault.
/memories/notes/keys.md (lines 1, 2, 3)
     1	«Key» rotation`},
		{search.Request{Query: "deploy key", Dir: "/memories/notes/"}, `Found 2 files for "deploy key" in /memories/notes:
/memories/notes/keys.md (lines 1, 2, 3)
     1	«Key» rotation
/memories/notes/long.md (line 2)
     2	x «deploy» y`},
		{search.Request{Query: "deploy", Dir: "/memories/deploy.md"}, `Found 1 file for "deploy" in /memories/deploy.md:
/memories/deploy.md (lines 1, 2, 3)
     1	# «Deploy»`},
		{search.Request{Query: `"deploy key"`}, `Found 1 file for "\"deploy key\"" in /memories:
/memories/deploy.md (lines 2, 3)
     2	The «deploy key» lives in the vault.`},
		{search.Request{Query: "deploy*"}, `Found 4 files for "deploy*" in /memories:
/memories/projects/plan.txt (lines 1, 2)
     1	Plan: migrate the database, then «deploy».
/memories/deploy.md (lines 1, 2, 3)
     1	# «Deploy»
/memories/notes/long.md (line 2)
     2	x «deploy» y
/memories/notes/keys.md (line 2)
     2	keys: «deploy», signing`},
		{search.Request{Query: "CAFE zurich"}, `Found 1 file for "CAFE zurich" in /memories:
/memories/notes/cafe.md (lines 1, 2)
     1	Meeting at the «Café» «Zürich».`},
		{search.Request{Query: "東京"}, `Found 1 file for "東京" in /memories:
/memories/notes/tokyo.md (lines 1, 2)
     1	出張: «東京» and 大阪`},
		{search.Request{Query: "京タ"}, `Found 1 file for "京タ" in /memories:
/memories/notes/tokyo.md (line 2)
     2	東«京タ»ワー visit on Friday.`},
		{search.Request{Query: "hidden png"}, `No file matches "hidden png" in /memories.`},
		{search.Request{Query: "deploy", Dir: "/memories/.hidden"}, `No file matches "deploy" in /memories/.hidden.`},
		{search.Request{Query: "  * \" "}, `Error: The query has no words to search for.`},
		{search.Request{Query: "a", Limit: 101}, `Error: The limit must be between 1 and 100; got 101.`},
		{search.Request{Query: "a", Limit: -1}, `Error: The limit must be between 1 and 100; got -1.`},
		{search.Request{Query: "a", Dir: "/etc"}, `Error: Path must start with /memories, got: /etc`},
		{search.Request{Query: strings.Repeat("w ", 33)}, `Error: The query is too long: at most 32 words and 1000 bytes.`},
		{search.Request{Query: `"` + strings.Repeat("w ", 33) + `"`}, `Error: The query is too long: at most 32 words and 1000 bytes.`},
		{search.Request{Query: strings.Repeat("x", 1001)}, `Error: The query is too long: at most 32 words and 1000 bytes.`},
	})
	if n := x.Files(); n != 6 {
		t.Errorf("Files() = %d, want the 6 text files that are neither hidden nor reserved", n)
	}
}

// TestResultsJSON checks the structured form, whole.
func TestResultsJSON(t *testing.T) {
	s := mem.New(nil)
	put(t, s, notes)
	res := search1(t, search.New(s, nil), search.Request{Query: `"signing key"`})
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"query":"\"signing key\"","dir":"/memories","total":1,"hits":[{"path":"/memories/notes/keys.md","score":1.511,"lines":[3],"line":3,"snippet":"The «signing key» is kept offline."}]}`
	if string(js) != wantJSON {
		t.Errorf("JSON:\n%s\nwant:\n%s", js, wantJSON)
	}
}

// TestLongLine checks that a snippet is cut around its first match.
func TestLongLine(t *testing.T) {
	s := mem.New(nil)
	line := strings.Repeat("word ", 60) + "needle " + strings.Repeat("tail ", 60)
	put(t, s, map[string]string{"long.md": "first\n" + line + "\n"})
	res := search1(t, search.New(s, nil), search.Request{Query: "needle"})
	want := "…word word word word word word word word «needle» " + strings.Repeat("tail ", 22) + "tai…"
	if len(res.Hits) != 1 || res.Hits[0].Snippet != want || res.Hits[0].Line != 2 {
		t.Errorf("hits %+v, want one on line 2 with snippet %q", res.Hits, want)
	}
}
