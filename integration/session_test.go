package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Every server's SameOutputAsFile test runs one agent session through
// memory.Handler over a local-directory store and over the server's store
// (sameOutputAsFile), and requires the same results, byte for byte, and the
// same final contents: moving an agent's memory from a directory to a
// bucket, a container or a database changes nothing it sees.
//
// The session has two parts. sessionFromEmpty starts on an empty store;
// then sessionSeed is written: 1,005 files in one directory, so that
// listing it takes two pages on every server (1,000 keys a page), and names
// that some server orders or escapes differently; then sessionSeeded runs.
// Together they touch every command and every error text the handler gives
// for them, hidden names and node_modules, unicode (above U+FFFF too),
// brackets, an empty, a binary and an image file, and malformed input.

// sessionFromEmpty is the first part of the session, on an empty store.
var sessionFromEmpty = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"create","path":"/memories/notes.md","file_text":"hello\nworld\n"}`,
	`{"command":"create","path":"/memories/notes.md","file_text":"again"}`,
	`{"command":"create","path":"/memories/projects/cloudmem/plan.md","file_text":"# Plan\n- redis\n- s3\n- gcs\n"}`,
	`{"command":"create","path":"/memories/projects/cloudmem/.draft","file_text":"hidden"}`,
	`{"command":"create","path":"/memories/projects/cloudmem/deep/er/x.md","file_text":"deep"}`,
	`{"command":"create","path":"/memories/projects/other.txt","file_text":""}`,
	`{"command":"create","path":"/memories/projects/café/日本語.md","file_text":"unicode ✓\n"}`,
	`{"command":"create","path":"/memories/.hidden/secret.md","file_text":"hidden"}`,
	`{"command":"create","path":"/memories/café/naïve ☕.md","file_text":"unicode\n"}`,
	`{"command":"create","path":"/memories/node_modules/x.js","file_text":"skip me"}`,
	`{"command":"create","path":"/memories/notes.md/child.md","file_text":"x"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/projects"}`,
	`{"command":"view","path":"/memories/notes.md"}`,
	`{"command":"view","path":"/memories/projects/other.txt"}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md","view_range":[2,3]}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md","view_range":[2,-1]}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md","view_range":[9,10]}`,
	`{"command":"view","path":"/memories/missing.md"}`,
	`{"command":"str_replace","path":"/memories/notes.md","old_str":"world","new_str":"there"}`,
	`{"command":"str_replace","path":"/memories/notes.md","old_str":"absent","new_str":"x"}`,
	`{"command":"str_replace","path":"/memories/projects","old_str":"a","new_str":"b"}`,
	`{"command":"str_replace","path":"/memories/projects/cloudmem/plan.md","old_str":"- s3","new_str":"- s3 (MinIO)"}`,
	`{"command":"str_replace","path":"/memories/projects/cloudmem/plan.md","old_str":"- ","new_str":"* "}`,
	`{"command":"insert","path":"/memories/notes.md","insert_line":1,"insert_text":"inserted\n"}`,
	`{"command":"insert","path":"/memories/notes.md","insert_line":99,"insert_text":"x"}`,
	`{"command":"insert","path":"/memories/projects/cloudmem/plan.md","insert_line":1,"insert_text":"Owner: me"}`,
	`{"command":"view","path":"/memories/notes.md"}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md"}`,
	`{"command":"rename","old_path":"/memories/notes.md","new_path":"/memories/people/me.md"}`,
	`{"command":"rename","old_path":"/memories/projects/cloudmem","new_path":"/memories/archive/cloudmem"}`,
	`{"command":"rename","old_path":"/memories/projects","new_path":"/memories/old-projects"}`,
	`{"command":"rename","old_path":"/memories/old-projects","new_path":"/memories/people/me.md"}`,
	`{"command":"rename","old_path":"/memories/old-projects","new_path":"/memories/archive"}`,
	`{"command":"rename","old_path":"/memories/old-projects","new_path":"/memories/old-projects/inside"}`,
	`{"command":"rename","old_path":"/memories/gone","new_path":"/memories/x"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"delete","path":"/memories/old-projects/café/日本語.md"}`,
	`{"command":"view","path":"/memories/old-projects"}`,
	`{"command":"delete","path":"/memories/old-projects"}`,
	`{"command":"delete","path":"/memories/old-projects"}`,
	`{"command":"delete","path":"/memories/people/me.md"}`,
	`{"command":"view","path":"/memories/people/me.md"}`,
	`{"command":"view","path":"/memories/../etc"}`,
	`{"command":"frobnicate"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/archive/cloudmem/plan.md"}`,
}

// sessionSeed is what the store holds, on top of what sessionFromEmpty
// left, before sessionSeeded runs.
func sessionSeed(t *testing.T) map[string][]byte {
	t.Helper()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	seed := map[string][]byte{
		"projects/alpha/notes.md":     []byte("# Alpha\n\n- kickoff on Monday\n- owner: Dana\n"),
		"projects/alpha/.draft":       []byte("hidden draft\n"),
		"projects/beta/todo.txt":      []byte("one\ntwo\nthree\n"),
		"projects/notes [draft].md":   []byte("bracketed\n"),
		"node_modules/pkg/x.js":       []byte("module.exports = 1\n"),
		"emoji/\U0001F600 smile.md":   []byte("a character above U+FFFF\n"),
		"emoji/\uFF01 fullwidth.md":   []byte("a character in U+E000..U+FFFF\n"),
		"emoji/\U0001F600/nested.txt": []byte("under an emoji directory\n"),
		"bin/blob.dat":                {0x00, 0xff, 0xfe, 'x', '\n'},
		"img/pixel.png":               img.Bytes(),
	}
	for i := range 1005 {
		seed[fmt.Sprintf("log/%04d.md", i)] = fmt.Appendf(nil, "entry %d\n", i)
	}
	return seed
}

// sessionSeeded is the second part of the session, over the seed.
var sessionSeeded = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/projects"}`,
	`{"command":"view","path":"/memories/emoji"}`,
	`{"command":"view","path":"/memories/projects/alpha/notes.md"}`,
	`{"command":"view","path":"/memories/projects/notes [draft].md"}`,
	`{"command":"view","path":"/memories/projects/beta/todo.txt","view_range":[2,3]}`,
	`{"command":"view","path":"/memories/log/0999.md"}`,
	`{"command":"view","path":"/memories/bin/blob.dat"}`,
	`{"command":"view","path":"/memories/img/pixel.png"}`,
	`{"command":"view","path":"/memories/missing.md"}`,
	`{"command":"create","path":"/memories/projects/alpha/notes.md","file_text":"clobber"}`,
	`{"command":"create","path":"/memories/new/deep/file.md","file_text":"first line\nsecond line\n"}`,
	`{"command":"create","path":"/memories/unicode/日本語 ファイル.md","file_text":"héllo wörld\n"}`,
	`{"command":"create","path":"/memories/[brackets]/[[x]].md","file_text":"escaped twice\n"}`,
	`{"command":"create","path":"/memories/projects/alpha/notes.md/child","file_text":"x"}`,
	`{"command":"create","path":"/memories/projects","file_text":"x"}`,
	`{"command":"create","path":"/memories/../etc/passwd","file_text":"x"}`,
	`{"command":"create","path":"/memories/back\\slash.md","file_text":"x"}`,
	`{"command":"create","path":"/memories/.cloudmem/key","file_text":"x"}`,
	`{"command":"str_replace","path":"/memories/projects/alpha/notes.md","old_str":"Monday","new_str":"Tuesday"}`,
	`{"command":"str_replace","path":"/memories/projects/alpha/notes.md","old_str":"absent","new_str":"x"}`,
	`{"command":"str_replace","path":"/memories/projects/beta/todo.txt","old_str":"o","new_str":"0"}`,
	`{"command":"insert","path":"/memories/projects/beta/todo.txt","insert_line":1,"insert_text":"one and a half"}`,
	`{"command":"insert","path":"/memories/projects/beta/todo.txt","insert_line":99,"insert_text":"x"}`,
	`{"command":"view","path":"/memories/projects/beta/todo.txt"}`,
	`{"command":"rename","old_path":"/memories/projects/beta","new_path":"/memories/archive/beta"}`,
	`{"command":"rename","old_path":"/memories/new/deep/file.md","new_path":"/memories/unicode/moved.md"}`,
	`{"command":"rename","old_path":"/memories/unicode/moved.md","new_path":"/memories/projects/alpha/notes.md"}`,
	`{"command":"rename","old_path":"/memories/emoji","new_path":"/memories/[brackets]/emoji"}`,
	`{"command":"rename","old_path":"/memories/nothing","new_path":"/memories/else"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/[brackets]"}`,
	`{"command":"view","path":"/memories/[brackets]/[[x]].md"}`,
	`{"command":"delete","path":"/memories/log"}`,
	`{"command":"delete","path":"/memories/archive/beta/todo.txt"}`,
	`{"command":"delete","path":"/memories/archive"}`,
	`{"command":"delete","path":"/memories"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"frobnicate","path":"/memories"}`,
	`not json`,
}

// sessionErrors is how many commands of the session fail: the session
// checks this on the file store, so that it keeps testing the errors it was
// written for.
const sessionErrors = 32

// sessionShows are texts the session's results must hold, for the same
// reason: every error the handler can give here, and what the successes
// were written to reach.
var sessionShows = []string{
	// Errors.
	"already exists", "is a file, not a directory", "does not exist", "Invalid `view_range` parameter: [9, 10]",
	"is not a file", "did not appear verbatim", "Multiple occurrences", "Invalid `insert_line` parameter: 99",
	"The destination /memories/people/me.md already exists", "The destination /memories/archive already exists",
	"into itself", "Cannot delete the /memories directory itself", "would escape /memories directory",
	"is reserved", "is not a UTF-8 text file", "Unknown memory command", "Invalid memory command input",
	// Successes.
	"node_modules:\n0B\t/memories\n", "Tuesday", "one and a half", "- s3 (MinIO)", "Owner: me",
	// The 1,005 log files: the directory's total needs every page of the listing, and the root's listing is cut
	// at the view limit (docs/spec.md "view").
	"9.7K\t/memories/log/\n", " entries. View a subdirectory to see the rest.]",
	"\U0001F600 smile.md", "[[x]].md", "escaped twice", "/memories/old-projects/other.txt",
}

// sameOutputAsFile runs the session through a Handler over a new
// local-directory store and over s, which must be empty, and fails the test
// unless every result and the final contents are the same. name names s's
// server in failures.
func sameOutputAsFile(t *testing.T, name string, s blob.Store) {
	t.Helper()
	fileStore, err := file.Open(t.Context(), t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fileResults, fileContents := runSession(t, fileStore)
	results, contents := runSession(t, s)
	commands := slices.Concat(sessionFromEmpty, sessionSeeded)
	failures, images := 0, 0
	var all strings.Builder
	for i, cmd := range commands {
		want, got := fileResults[i], results[i]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("command %d %s:\nfile store:\n%s\n%s store:\n%s", i, cmd, showResult(want), name, showResult(got))
		}
		if strings.Contains(got.Text, "storage failed") {
			t.Errorf("command %d %s: %s store: %s", i, cmd, name, got.Text)
		}
		if want.IsError {
			failures++
		}
		if want.Image != nil {
			images++
		}
		all.WriteString(want.Text + "\n")
	}
	// The handler's file count holds a random token: its number of files
	// must agree, the rest is its own. A store whose racing deletes may
	// all succeed (S3) takes no deleted file off the count, which stays
	// too high by the files deleted: there it must not be below the file
	// store's.
	files := func(c map[string]string) int {
		var count struct{ Files int }
		_ = json.Unmarshal([]byte(c[fileCountKey]), &count)
		return count.Files
	}
	if blob.TraitsOf(s).DeletesMayRepeat {
		if got, want := files(contents), files(fileContents); got < want {
			t.Errorf("%s store: the file count is %d, below the file store's %d", name, got, want)
		}
		contents[fileCountKey] = fileContents[fileCountKey]
	}
	for _, c := range []map[string]string{fileContents, contents} {
		if _, ok := c[fileCountKey]; ok {
			c[fileCountKey] = fmt.Sprintf("%d files", files(c))
		}
	}
	if !maps.Equal(fileContents, contents) {
		t.Errorf("final contents differ:\nfile store: %q\n%s store: %q", fileContents, name, contents)
	}

	// Guard against a session that proves nothing.
	if failures != sessionErrors || images != 1 {
		t.Errorf("on the file store %d commands failed and %d returned an image, want %d and 1: "+
			"the session no longer tests what it says", failures, images, sessionErrors)
	}
	for _, want := range sessionShows {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the results do not contain %q:\n%s", want, all.String())
		}
	}
}

// runSession runs sessionFromEmpty over s, writes sessionSeed, runs
// sessionSeeded, and returns every result and the final contents of s.
func runSession(t *testing.T, s blob.Store) (results []memory.Result, contents map[string]string) {
	t.Helper()
	ctx := t.Context()
	h, err := memory.New(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range sessionFromEmpty {
		results = append(results, h.Execute(ctx, []byte(cmd)))
	}
	putAll(t, s, sessionSeed(t))
	for _, cmd := range sessionSeeded {
		results = append(results, h.Execute(ctx, []byte(cmd)))
	}
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	contents = map[string]string{}
	for _, info := range infos {
		if memory.IsBookkeeping(info.Key) && info.Key != fileCountKey {
			continue // only stores whose listing hides keys hold them (MinIO)
		}
		data, _, err := s.Get(ctx, info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		contents[info.Key] = string(data)
	}
	return results, contents
}

// putAll writes every key of data into s, 16 at a time, and fails the test
// on the first error.
func putAll(t *testing.T, s blob.Store, data map[string][]byte) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(data))
	sem := make(chan struct{}, 16)
	for k, v := range data {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := s.Put(t.Context(), k, v, blob.Cond{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// showResult spells a result out for a failure message.
func showResult(r memory.Result) string {
	s := fmt.Sprintf("is_error=%t\n%s", r.IsError, r.Text)
	if r.Image != nil {
		s += fmt.Sprintf("\nimage %s %x", r.Image.MediaType, r.Image.Data)
	}
	return s
}
