package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

// typedCall runs the command of a golden case's input through the typed
// method. ok is false when the input does not decode to a well-typed command
// (those cases test Execute's decoding, which the typed API has no need of).
func typedCall(ctx context.Context, h *memory.Handler, input string) (res memory.Result, ok bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(input), &fields) != nil {
		return res, false
	}
	str := func(name string) (string, bool) {
		raw, found := fields[name]
		var s string
		return s, found && json.Unmarshal(raw, &s) == nil && string(raw) != "null"
	}
	name, _ := str("command")
	path, hasPath := str("path")
	switch name {
	case "view":
		var r []int
		if raw, found := fields["view_range"]; found && json.Unmarshal(raw, &r) != nil {
			return res, false
		}
		return h.View(ctx, path, r), hasPath
	case "create":
		text, hasText := str("file_text")
		return h.Create(ctx, path, text), hasPath && hasText
	case "str_replace":
		old, hasOld := str("old_str")
		repl, _ := str("new_str")
		return h.StrReplace(ctx, path, old, repl), hasPath && hasOld
	case "insert":
		var line int64
		raw, found := fields["insert_line"]
		if !found || json.Unmarshal(raw, &line) != nil {
			return res, false
		}
		text, hasText := str("insert_text")
		return h.Insert(ctx, path, line, text), hasPath && hasText
	case "delete":
		return h.Delete(ctx, path), hasPath
	case "rename":
		oldPath, hasOld := str("old_path")
		newPath, hasNew := str("new_path")
		return h.Rename(ctx, oldPath, newPath), hasOld && hasNew
	}
	return res, false
}

// Every golden case whose input is a well-typed command gives the same
// whole Result through the typed method as through Execute, on a fresh
// store each.
func TestTypedMatchesExecute(t *testing.T) {
	ctx := t.Context()
	run := func(c memorytest.Case, typed bool) (memory.Result, bool) {
		store := blob.Store(mem.New(nil))
		for path, content := range c.Files {
			if _, err := store.Put(ctx, path[len("/memories/"):], []byte(content), blob.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		if c.Wrap != nil {
			store = c.Wrap(store)
		}
		opts := c.Options
		opts.Logger = slog.New(slog.DiscardHandler)
		h, err := memory.New(store, opts)
		if err != nil {
			t.Fatal(err)
		}
		if typed {
			return typedCall(ctx, h, c.Input)
		}
		return h.Execute(ctx, []byte(c.Input)), true
	}
	compared := 0
	for _, c := range memorytest.Cases() {
		want := func() memory.Result { r, _ := run(c, false); return r }()
		if errors.Is(want.Err, memory.ErrInvalidInput) && want.Err.Error() != "No replacement was performed, old_str must not be empty." {
			continue // a decoding error: no typed call has it
		}
		got, ok := run(c, true)
		if !ok {
			continue
		}
		compared++
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: typed call\n got %+v (Err %v)\nwant %+v (Err %v)", c.Name, got, got.Err, want, want.Err)
		}
	}
	if compared < 200 {
		t.Errorf("compared only %d cases through the typed API", compared)
	}
}

// Every golden case cites a section of docs/spec.md that exists.
func TestCasesCiteSpec(t *testing.T) {
	doc, err := os.ReadFile("../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings[h] = true
		}
	}
	for _, c := range memorytest.Cases() {
		if !headings[c.Section] {
			t.Errorf("%s cites docs/spec.md %q, which has no such section", c.Name, c.Section)
		}
	}
}
