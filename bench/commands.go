package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// The commands measured, in report order.
const (
	cmdViewFile   = "view file"
	cmdViewDir    = "view dir (200 files)"
	cmdCreate     = "create"
	cmdStrReplace = "str_replace"
	cmdInsert     = "insert"
	cmdDelete     = "delete"
	cmdRenameFile = "rename file"
	cmdRenameDir  = "rename dir (50 files)"
)

var commands = []string{cmdViewFile, cmdViewDir, cmdCreate, cmdStrReplace, cmdInsert, cmdDelete, cmdRenameFile, cmdRenameDir}

// commandsOnly, when set, names the commands to measure, and nothing else
// runs: no contention test, no scale test.
var commandsOnly = flag.String("commands-only", "", "run only the command test, of these commands (comma-separated, from: "+strings.Join(commands, ", ")+")")

// measured returns the commands to measure: commands, or those of
// -commands-only, in commands' order.
func measured() ([]string, error) {
	if *commandsOnly == "" {
		return commands, nil
	}
	want := strings.Split(*commandsOnly, ",")
	for _, w := range want {
		if !slices.Contains(commands, w) {
			return nil, fmt.Errorf("-commands-only: no command %q (the commands: %s)", w, strings.Join(commands, ", "))
		}
	}
	return slices.DeleteFunc(slices.Clone(commands), func(c string) bool { return !slices.Contains(want, c) }), nil
}

// Sizes of the fixture.
const (
	viewDirFiles   = 200
	renameDirFiles = 50
)

// text2K is the memory file every command works on: 2,040 bytes in 40
// lines, with one unique marker line that str_replace replaces (by itself,
// so the file never changes size).
var text2K = func() string {
	var b strings.Builder
	for i := range 40 {
		if i == 20 {
			b.WriteString("MARKER line: unique in the file, replaced in place.\n")
			continue
		}
		fmt.Fprintf(&b, "- %02d the user prefers short answers with examples\n", i)
	}
	return b.String()
}()

// insertedLine is what insert adds after line 20, and text2KInserted the
// file afterwards.
const insertedLine = "an inserted line"

var text2KInserted = func() string {
	lines := strings.SplitAfter(text2K, "\n")
	return strings.Join(lines[:20], "") + insertedLine + "\n" + strings.Join(lines[20:], "")
}()

// quiet discards the handler's log (it logs storage failures, which fail
// the benchmark anyway).
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// cmdResult is the measurement of one command on one target.
type cmdResult struct {
	backend, command string
	handler, floor   stats
	sdk              *stats      // nil when the target has no SDK floor for the command
	table            blob.Counts // the calls the handler's call table allows
	refused          bool        // the store refuses Rename (blob.Counter does not count the refusal)
	err              error       // the measurement failed
}

// ratio is the handler's median latency over the floor's.
func (r *cmdResult) ratio() float64 { return ratio(r.handler.p50, r.floor.p50) }

// target is the ratio r's command should stay within: targetRatio, or
// writeTargetRatio for create and delete, whose floor is the one write
// they need, without the tree's rules and the file count.
func (r *cmdResult) target() float64 {
	if r.command == cmdCreate || r.command == cmdDelete {
		return writeTargetRatio
	}
	return targetRatio
}

// within reports whether r's ratio is within its target.
func (r *cmdResult) within() bool { return r.ratio() <= r.target() }

// overTable names the kinds of call of which the handler made more than
// its call table allows ("" when none).
func (r *cmdResult) overTable() string {
	return exceeds(r.handler.calls, r.table)
}

// exceeds names the kinds of call of which got has more than allowed.
func exceeds(got, allowed blob.Counts) string {
	var over []string
	check := func(name string, g, a int64) {
		if g > a {
			over = append(over, fmt.Sprintf("%s %d > %d", name, g, a))
		}
	}
	check("Get", got.Get, allowed.Get)
	check("Stat", got.Stat, allowed.Stat)
	check("Put", got.Put, allowed.Put)
	check("Delete", got.Delete, allowed.Delete)
	check("List", got.List, allowed.List)
	check("Rename", got.Rename, allowed.Rename)
	check("DeleteTree", got.DeleteTree, allowed.DeleteTree)
	check("Copy", got.Copy, allowed.Copy)
	check("DeleteBatch", got.DeleteBatch, allowed.DeleteBatch)
	return strings.Join(over, ", ")
}

// cmdBench measures the commands on one target. The handler works on the
// files named h, the floor on the same files named f, so the two never
// touch each other's files; both see the same store.
type cmdBench struct {
	t      *target
	hc, fc *blob.Counter // the handler's and the floor's view of t.store
	h      *memory.Handler

	// atomic: t.store renames in one call (blob.Tree). refused: it
	// implements blob.Tree but refuses (the encryption layer), so
	// blob.Counter counts a Rename attempt that makes no storage call
	// before the fallback runs.
	atomic, refused bool
}

func newCmdBench(ctx context.Context, t *target) (*cmdBench, error) {
	b := &cmdBench{t: t, hc: blob.NewCounter(t.store), fc: blob.NewCounter(t.store)}
	var err error
	if b.h, err = memory.New(b.hc, memory.Options{Logger: quiet}); err != nil {
		return nil, err
	}
	if r, ok := t.store.(blob.Tree); ok {
		err := r.Rename(ctx, "bench-probe/missing", "bench-probe/other")
		b.refused = errors.Is(err, errors.ErrUnsupported)
		b.atomic = !b.refused
		if !b.refused && !errors.Is(err, blob.ErrNotExist) {
			return nil, fmt.Errorf("probing Rename: %w", err)
		}
	}
	return b, nil
}

// fixture writes the files the commands work on.
func (b *cmdBench) fixture(ctx context.Context) error {
	var keys []string
	for i := range viewDirFiles {
		keys = append(keys, fmt.Sprintf("dir200/file-%03d.md", i))
	}
	for _, who := range []string{"h", "f"} {
		keys = append(keys, "notes/"+who+".md", "edit/"+who+".md", "ins/"+who+".md", "ren/"+who+"-0.md")
		for i := range renameDirFiles {
			keys = append(keys, fmt.Sprintf("dirs/%s-0/file-%02d.md", who, i))
		}
	}
	data := []byte(text2K)
	if err := parallel(ctx, len(keys), func(ctx context.Context, i int) error {
		_, err := b.t.store.Put(ctx, keys[i], data, blob.Cond{})
		return err
	}); err != nil {
		return fmt.Errorf("writing the fixture: %w", err)
	}
	if b.t.sdk != nil {
		if err := b.t.sdk.setup(ctx, data); err != nil {
			return fmt.Errorf("writing the SDK floor's object: %w", err)
		}
	}
	// The handler's file count, made by one create (and its delete), so that
	// no timed create counts the store.
	for _, in := range [][]byte{
		input("command", "create", "path", "/memories/new/setup.md", "file_text", "x"),
		input("command", "delete", "path", "/memories/new/setup.md"),
	} {
		if err := b.exec(ctx, in); err != nil {
			return fmt.Errorf("making the file count: %w", err)
		}
	}
	return nil
}

// table returns the calls the handler's call table (package memory's
// documentation) allows for cmd on this target.
func (b *cmdBench) table(cmd string) blob.Counts {
	var c blob.Counts
	switch cmd {
	case cmdViewFile:
		c = blob.Counts{Get: 1}
	case cmdViewDir:
		c = blob.Counts{Get: 1, List: 1}
	case cmdCreate: // Put(IfAbsent) and Put of the file count (the count as this handler last wrote it),
		// then the clash check (List beneath + Stat of the ancestor)
		tr := blob.TraitsOf(b.t.store)
		c = blob.Counts{Stat: 1, List: 1, Put: 2}
		switch {
		case tr.ExclusiveNames: // the file store and Redis refuse the clash themselves: no check
			c = blob.Counts{Put: 2}
		case tr.HidesUnderObjects: // MinIO: the ancestor's witness and a Stat of the key's
			c.Put++
			c.Stat++
		}
	case cmdStrReplace, cmdInsert:
		c = blob.Counts{Get: 1, Put: 1}
	case cmdDelete: // Delete alone: the handler just created the file, and trusts the file count
		// it wrote, far from the limit (a delete right after another delete reads it too, at once)
		c = blob.Counts{Delete: 1}
	case cmdRenameFile, cmdRenameDir:
		switch {
		case b.atomic:
			c = blob.Counts{Rename: 1}
		case cmd == cmdRenameFile: // Get + List + Put + Delete
			c = blob.Counts{Get: 1, List: 1, Put: 1, Delete: 1}
		default: // the copy path: probes, then Get + Put of each file, Delete of each, and a List to verify
			n := int64(renameDirFiles)
			c = blob.Counts{Get: 1 + n, List: 3, Stat: 1, Put: n, Delete: n}
			if b.t.versionBatch { // the sources' deletes in one call
				c.Delete, c.DeleteBatch = 0, 1
			}
		}
		look := moveLook(b.t.store, b.atomic, cmd)
		c.Stat += look.Stat
		c.List += look.List
	}
	return c
}

// moveLook is what a rename (cmd) adds to the floor's calls on store:
// where the store lets a name be both a file and a directory, the move
// looks for a racing create once it has written (gate/move.go,
// settleMove): a List beneath a file's new name, a Stat of a directory's;
// after an atomic Rename, which does not say which it moved, a Stat, and
// the List for a file.
func moveLook(store blob.Store, atomic bool, cmd string) blob.Counts {
	switch {
	case blob.TraitsOf(store).ExclusiveNames:
		return blob.Counts{}
	case atomic && cmd == cmdRenameFile:
		return blob.Counts{Stat: 1, List: 1}
	case cmd == cmdRenameFile:
		return blob.Counts{List: 1}
	}
	return blob.Counts{Stat: 1}
}

// exec runs one command through the handler.
func (b *cmdBench) exec(ctx context.Context, input []byte) error {
	if r := b.h.Execute(ctx, input); r.IsError {
		return fmt.Errorf("handler: %s", r.Text)
	}
	return nil
}

// input encodes a command's input object.
func input(fields ...any) []byte {
	m := map[string]any{}
	for i := 0; i < len(fields); i += 2 {
		m[fields[i].(string)] = fields[i+1]
	}
	data, err := json.Marshal(m)
	if err != nil {
		panic(err) // only strings and integers: cannot fail
	}
	return data
}

// variants returns the handler's and the floor's variant of cmd, and the
// SDK floor's when the target has one for cmd.
func (b *cmdBench) variants(cmd string) []*variant {
	s, fs := b.t.store, b.fc // untimed work goes straight to the store
	text := []byte(text2K)
	restore := func(key string) func(ctx context.Context, i int) error {
		return func(ctx context.Context, i int) error {
			_, err := s.Put(ctx, key, text, blob.Cond{})
			return err
		}
	}
	handler := func(in func(i int) []byte) *variant {
		return &variant{name: "cloudmem", run: func(ctx context.Context, i int) error { return b.exec(ctx, in(i)) }}
	}
	fixed := func(in []byte) func(int) []byte { return func(int) []byte { return in } }
	toggle := func(a, b []byte) func(int) []byte {
		return func(i int) []byte {
			if i%2 == 0 {
				return a
			}
			return b
		}
	}
	var h, f, sdk *variant
	switch cmd {
	case cmdViewFile:
		h = handler(fixed(input("command", "view", "path", "/memories/notes/h.md")))
		f = &variant{run: func(ctx context.Context, _ int) error {
			_, _, err := fs.Get(ctx, "notes/f.md", blob.MaxObjectBytes)
			return err
		}}
		if b.t.sdk != nil {
			sdk = &variant{run: func(ctx context.Context, _ int) error { return b.t.sdk.view(ctx) }}
		}
	case cmdViewDir:
		h = handler(fixed(input("command", "view", "path", "/memories/dir200")))
		f = &variant{run: func(ctx context.Context, _ int) error {
			if _, _, err := fs.Get(ctx, "dir200", blob.MaxObjectBytes); !errors.Is(err, blob.ErrNotExist) {
				return fmt.Errorf("Get of the directory: %v", err)
			}
			return drain(fs.List(ctx, "dir200/"))
		}}
	case cmdCreate:
		var in []byte
		h = handler(func(int) []byte { return in })
		h.prepare = func(_ context.Context, i int) error {
			in = input("command", "create", "path", fmt.Sprintf("/memories/new/h-%d.md", i), "file_text", text2K)
			return nil
		}
		h.cleanup = func(ctx context.Context, i int) error { // through the handler, which keeps the file count
			return b.exec(ctx, input("command", "delete", "path", fmt.Sprintf("/memories/new/h-%d.md", i)))
		}
		var key string
		f = &variant{ // the one write a create needs
			prepare: func(_ context.Context, i int) error { key = fmt.Sprintf("new/f-%d.md", i); return nil },
			run: func(ctx context.Context, _ int) error {
				_, err := fs.Put(ctx, key, text, blob.Cond{IfAbsent: true})
				return err
			},
			cleanup: func(ctx context.Context, _ int) error { return s.Delete(ctx, key, blob.Cond{}) },
		}
		if b.t.sdk != nil {
			sdk = &variant{
				prepare: func(ctx context.Context, _ int) error { return b.t.sdk.cleanup(ctx) },
				run:     func(ctx context.Context, _ int) error { return b.t.sdk.create(ctx, text) },
			}
		}
	case cmdStrReplace:
		h = handler(fixed(input("command", "str_replace", "path", "/memories/edit/h.md",
			"old_str", "MARKER line", "new_str", "MARKER line")))
		f = &variant{run: func(ctx context.Context, _ int) error {
			data, info, err := fs.Get(ctx, "edit/f.md", blob.MaxObjectBytes)
			if err == nil {
				_, err = fs.Put(ctx, "edit/f.md", data, blob.Cond{IfVersion: info.Version})
			}
			return err
		}}
		if b.t.sdk != nil {
			sdk = &variant{run: func(ctx context.Context, _ int) error { return b.t.sdk.replace(ctx) }}
		}
	case cmdInsert:
		h = handler(fixed(input("command", "insert", "path", "/memories/ins/h.md", "insert_line", 20, "insert_text", insertedLine)))
		h.cleanup = restore("ins/h.md")
		inserted := []byte(text2KInserted)
		f = &variant{run: func(ctx context.Context, _ int) error {
			_, info, err := fs.Get(ctx, "ins/f.md", blob.MaxObjectBytes)
			if err == nil {
				_, err = fs.Put(ctx, "ins/f.md", inserted, blob.Cond{IfVersion: info.Version})
			}
			return err
		}, cleanup: restore("ins/f.md")}
	case cmdDelete:
		h = handler(fixed(input("command", "delete", "path", "/memories/del/h.md")))
		h.prepare = func(ctx context.Context, _ int) error { // create then delete, as an agent does
			// The first time, the file is the seeded one, made behind the handler: remove it.
			if err := s.Delete(ctx, "del/h.md", blob.Cond{}); err != nil && !errors.Is(err, blob.ErrNotExist) {
				return err
			}
			return b.exec(ctx, input("command", "create", "path", "/memories/del/h.md", "file_text", text2K))
		}
		f = &variant{prepare: restore("del/f.md"), run: func(ctx context.Context, _ int) error { // the one delete
			return fs.Delete(ctx, "del/f.md", blob.Cond{})
		}}
		if b.t.sdk != nil {
			sdk = &variant{
				prepare: func(ctx context.Context, _ int) error { return b.t.sdk.setup(ctx, text) },
				run:     func(ctx context.Context, _ int) error { return b.t.sdk.cleanup(ctx) },
				cleanup: func(ctx context.Context, _ int) error { return b.t.sdk.setup(ctx, text) }, // for the commands after
			}
		}
	case cmdRenameFile, cmdRenameDir:
		from, to := "ren/h-0.md", "ren/h-1.md"
		if cmd == cmdRenameDir {
			from, to = "dirs/h-0", "dirs/h-1"
		}
		h = handler(toggle(
			input("command", "rename", "old_path", "/memories/"+from, "new_path", "/memories/"+to),
			input("command", "rename", "old_path", "/memories/"+to, "new_path", "/memories/"+from)))
		ffrom, fto := strings.Replace(from, "h-", "f-", 1), strings.Replace(to, "h-", "f-", 1)
		f = &variant{run: func(ctx context.Context, i int) error {
			if i%2 == 0 {
				return b.renameFloor(ctx, ffrom, fto, cmd == cmdRenameDir)
			}
			return b.renameFloor(ctx, fto, ffrom, cmd == cmdRenameDir)
		}}
	default:
		panic("unknown command " + cmd)
	}
	h.counter, f.counter = b.hc, b.fc
	f.name = "floor"
	vs := []*variant{h, f}
	if sdk != nil {
		sdk.name = "sdk"
		vs = append(vs, sdk)
	}
	for _, v := range vs {
		v.requests = b.t.requests
	}
	return vs
}

// renameFloor issues the storage calls of a rename: one Rename on a store
// that renames atomically; otherwise those of the handler's copy path.
func (b *cmdBench) renameFloor(ctx context.Context, src, dst string, dir bool) error {
	fs := b.fc
	if b.atomic {
		return fs.Rename(ctx, src, dst)
	}
	absent := func(prefix string) error {
		for _, err := range fs.List(ctx, prefix) {
			if err != nil {
				return err
			}
			return fmt.Errorf("%s exists", prefix)
		}
		return nil
	}
	if !dir {
		data, info, err := fs.Get(ctx, src, blob.MaxObjectBytes)
		if err != nil {
			return err
		}
		if err := absent(dst + "/"); err != nil {
			return err
		}
		if _, err := fs.Put(ctx, dst, data, blob.Cond{IfAbsent: true}); err != nil {
			return err
		}
		return fs.Delete(ctx, src, blob.Cond{IfVersion: info.Version})
	}
	if _, _, err := fs.Get(ctx, src, blob.MaxObjectBytes); !errors.Is(err, blob.ErrNotExist) {
		return fmt.Errorf("Get of the directory: %v", err)
	}
	infos, err := blob.ListAll(ctx, fs, src+"/")
	if err != nil {
		return err
	}
	if _, err := fs.Stat(ctx, dst); !errors.Is(err, blob.ErrNotExist) {
		return fmt.Errorf("Stat of the destination: %v", err)
	}
	if err := absent(dst + "/"); err != nil {
		return err
	}
	// As the handler: a copy on the server where the store has one (else
	// Get and Put(IfAbsent)), then the sources deleted at the versions
	// copied, batched where the store can (else Delete(IfVersion) each).
	froms := make([]blob.Info, len(infos))
	for i, info := range infos {
		from, _, err := blob.Copy(ctx, fs, info.Key, dst+strings.TrimPrefix(info.Key, src), info.Version)
		if err != nil {
			return err
		}
		froms[i] = from
	}
	errs, err := blob.DeleteBatch(ctx, fs, froms)
	if err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return absent(src + "/") // the check that nothing was left behind
}

// drain reads a listing to its end.
func drain(list iter.Seq2[blob.Info, error]) error {
	for _, err := range list {
		if err != nil {
			return err
		}
	}
	return nil
}

// runCommands measures every command on t. A command that fails is
// reported with its error and the others still run.
func runCommands(ctx context.Context, t *target, bud budget, logf func(string, ...any)) ([]cmdResult, error) {
	b, err := newCmdBench(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := b.fixture(ctx); err != nil {
		return nil, err
	}
	var out []cmdResult
	cmds, err := measured()
	if err != nil {
		return nil, err
	}
	for _, cmd := range cmds {
		r := cmdResult{backend: t.name, command: cmd, table: b.table(cmd), refused: b.refused}
		st, err := measure(ctx, b.variants(cmd), bud)
		if err != nil {
			r.err = err
			logf("%s %s: %v", t.name, cmd, err)
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
		} else {
			r.handler, r.floor = st[0], st[1]
			if len(st) > 2 {
				r.sdk = &st[2]
			}
			logf("%-9s %-22s n=%-5d cloudmem p50 %-9s floor p50 %-9s ratio %.2f calls %d",
				t.name, cmd, r.handler.n, fmtDur(r.handler.p50), fmtDur(r.floor.p50), r.ratio(), r.handler.calls.Total())
		}
		out = append(out, r)
	}
	return out, nil
}
