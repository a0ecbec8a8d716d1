package mount_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/mount"
)

// The contract's golden cases pass through one mount of a table, byte for
// byte: the store seen through the mount is an ordinary store.
func TestMemoryConformance(t *testing.T) {
	newStore := func(t *testing.T) blob.Store {
		return inside(t, newTable(t, mount.Mount{Name: "m", Store: mem.New(nil)}), "m")
	}
	memorytest.Run(t, newStore)
	memorytest.RunConcurrency(t, newStore)
}

// A single mount answers every command exactly as the store alone does. Each
// golden case of the contract is moved under /memories/m (its files and the
// paths it sends), then run twice over two stores that hold the files under
// m/: once over the store alone (through the case's Wrap), and once over a
// table whose one mount m is that store's keys under m/ (Wrap over
// blob.Prefix(store, "m"), so that both leave a wrapping prefix the same
// key budget), where the handler sees the table (blob.Traits.Mounts) and applies
// the mount rules. The two Results must be byte-identical, and so must the
// two stores afterwards.
//
// Cases whose moved path names the mount point itself are left out, except
// views of a mount that holds files: there the table differs on purpose (the
// mount point always exists and cannot be deleted, created, edited or
// renamed), which TestMountRules checks. So are the few inputs the move
// cannot rewrite (a path spelled twice).
func TestSingleMountIsTheStoreAlone(t *testing.T) {
	var ran, moved int
	for _, c := range memorytest.Cases() {
		if strings.HasPrefix(c.Name, "paths/key budget:") {
			// A store of a fixed key budget holds keys of the same length
			// inside a mount as alone, so the mount's name moves the
			// boundary by design; TestMemoryConformance runs these cases.
			continue
		}
		input, mountPoint, ok := moveInput(c.Input)
		if !ok || mountPoint && (!holdsMemoryFiles(c.Files) || !strings.Contains(input, `"command":"view"`)) {
			continue
		}
		if input != c.Input {
			moved++
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			alone, raw := mem.New(nil), mem.New(nil)
			for path, content := range c.Files {
				key := strings.TrimPrefix(movePath(path), "/memories/")
				put(t, alone, key, content)
				put(t, raw, key, content)
			}
			wrap := func(s blob.Store) blob.Store { return s }
			if c.Wrap != nil {
				wrap = c.Wrap
			}
			tab := newTable(t, mount.Mount{Name: "m", Store: wrap(inside(t, raw, "m"))})
			if blob.Mounts(tab) == nil {
				t.Fatal("the table is not a blob.Traits.Mounts")
			}
			want := execute(t, wrap(alone), c.Options, input)
			got := execute(t, tab, c.Options, input)
			if diff := compareResults(got, want); diff != "" {
				t.Fatalf("input %s\n%s", input, diff)
			}
			// The handler's file count lies at each one's root (and its
			// token is random): the memory files must match.
			gotFiles, wantFiles := contents(t, raw), contents(t, alone)
			maps.DeleteFunc(gotFiles, func(k, _ string) bool { return memory.IsBookkeeping(k) })
			maps.DeleteFunc(wantFiles, func(k, _ string) bool { return memory.IsBookkeeping(k) })
			if !maps.Equal(gotFiles, wantFiles) {
				t.Fatalf("input %s\nthe table's mount holds %q\nthe store alone holds %q", input, gotFiles, wantFiles)
			}
		})
	}
	// All but the few cases above must have run, most with a moved path.
	if total := len(memorytest.Cases()); ran < total*9/10 || moved < total*3/4 {
		t.Errorf("ran %d of %d cases, %d with a moved path", ran, total, moved)
	}
}

// holdsMemoryFiles reports whether some file is not bookkeeping.
func holdsMemoryFiles(files map[string]string) bool {
	for path := range files {
		if !blob.IsReserved(path) {
			return true
		}
	}
	return false
}

// movePath moves a memory path under /memories/m; other strings stay.
func movePath(path string) string {
	if rest, ok := strings.CutPrefix(path, "/memories"); ok && (rest == "" || rest[0] == '/') {
		return "/memories/m" + rest
	}
	return path
}

// moveInput moves the paths of a command input under /memories/m, replacing
// each path's JSON text in place so that everything else stays byte for
// byte. mountPoint reports whether a moved path names the mount point m
// itself; ok is false for an input it cannot move.
func moveInput(input string) (moved string, mountPoint, ok bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(input), &fields); err != nil {
		return input, false, true // never reaches a path
	}
	for _, name := range []string{"path", "old_path", "new_path"} {
		raw, present := fields[name]
		var path string
		if !present || json.Unmarshal(raw, &path) != nil {
			continue
		}
		to := movePath(path)
		if key, err := memory.Resolve(to); err == nil && key == "m" {
			mountPoint = true
		}
		if to == path {
			continue
		}
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(false)
		if err := e.Encode(to); err != nil || strings.Count(input, string(raw)) != 1 {
			return "", false, false
		}
		input = strings.Replace(input, string(raw), strings.TrimSuffix(enc.String(), "\n"), 1)
	}
	return input, mountPoint, true
}

// execute runs one input through a new Handler over s.
func execute(t *testing.T, s blob.Store, opts memory.Options, input string) memory.Result {
	t.Helper()
	opts.Logger = slog.New(slog.DiscardHandler)
	h, err := memory.New(s, opts)
	if err != nil {
		t.Fatalf("memory.New: %v", err)
	}
	return h.Execute(t.Context(), []byte(input))
}

// compareResults returns "" when got and want are the same Result (text,
// error flag, image and kind of error), and otherwise what differs.
func compareResults(got, want memory.Result) string {
	var b strings.Builder
	if got.Text != want.Text {
		b.WriteString("text:\n got " + quote(got.Text) + "\nwant " + quote(want.Text) + "\n")
	}
	if got.IsError != want.IsError {
		b.WriteString("is_error differs\n")
	}
	if (got.Image == nil) != (want.Image == nil) ||
		got.Image != nil && (got.Image.MediaType != want.Image.MediaType || !bytes.Equal(got.Image.Data, want.Image.Data)) {
		b.WriteString("image differs\n")
	}
	if kindOf(got.Err) != kindOf(want.Err) {
		b.WriteString("kind of error differs\n")
	}
	return b.String()
}

func kindOf(err error) error {
	var e *memory.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return err
}

func quote(s string) string {
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// contents returns every key of s with its content.
func contents(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, key := range keys(t, s, "") {
		data, _, err := s.Get(t.Context(), key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatalf("Get %q: %v", key, err)
		}
		out[key] = string(data)
	}
	return out
}
