// Command tshandler measures cloudmem's memory handler on a local directory
// (the file store) beside the official TypeScript SDK's local-filesystem
// handler (BetaLocalFilesystemMemoryTool of @anthropic-ai/sdk, pinned in
// package.json), command by command, in one run, the two interleaved round
// by round. It needs Node.js; it installs the SDK with npm ci into
// node_modules beside this file when it is missing. From bench/:
//
//	go run ./tshandler -n 200 -rounds 5
//
// # The round
//
// Each side gets a new directory under -tmp and runs, one call after the
// other: n creates of /memories/c/f{i}.md (five short lines each), n views
// of f0, n str_replaces on f0 (each flips one line, so each succeeds), n
// inserts at line 1 of f1, then renames of f2..f{n-1} to /memories/r/ and
// deletes of those. cloudmem runs each command through Handler.Execute
// with the JSON a model sends (prepared before the clock starts) and its
// default options (so the file count is kept); the SDK's handler gets the
// command objects its tool runner passes it. Both fsync a file they write.
//
// It prints a Markdown table: per command, the median and 90th percentile
// of every call of every round, on each side, and cloudmem's median over
// the SDK's (below 1 is faster).
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/memory"
)

// commands are the measured commands, in the order a round runs them.
var commands = []string{"create", "view", "str_replace", "insert", "rename", "delete"}

func main() {
	n := flag.Int("n", 200, "files per round (at least 3)")
	rounds := flag.Int("rounds", 5, "rounds per side, interleaved")
	dir := flag.String("dir", "tshandler", "the directory of bench.mjs and package.json")
	tmp := flag.String("tmp", os.TempDir(), "where each round's directory is made (the file system measured)")
	flag.Parse()
	if *n < 3 || *rounds < 1 {
		log.Fatal("tshandler: want -n 3 or more and -rounds 1 or more")
	}
	if err := installSDK(*dir); err != nil {
		log.Fatal(err)
	}
	ours, theirs := map[string][]float64{}, map[string][]float64{}
	for r := range *rounds {
		sides := []func() (map[string][]float64, error){
			func() (map[string][]float64, error) { return runOurs(*tmp, *n) },
			func() (map[string][]float64, error) { return runTheirs(*dir, *tmp, *n) },
		}
		into := []map[string][]float64{ours, theirs}
		if r%2 == 1 { // alternate who goes first
			slices.Reverse(sides)
			slices.Reverse(into)
		}
		for i, side := range sides {
			times, err := side()
			if err != nil {
				log.Fatal(err)
			}
			for c, t := range times {
				into[i][c] = append(into[i][c], t...)
			}
		}
	}
	fmt.Printf("| command | cloudmem p50 µs | cloudmem p90 µs | TS SDK p50 µs | TS SDK p90 µs | cloudmem / TS (p50) |\n")
	fmt.Printf("| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range commands {
		o, t := ours[c], theirs[c]
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f | %.2f |\n", c,
			quantile(o, 0.5), quantile(o, 0.9), quantile(t, 0.5), quantile(t, 0.9), quantile(o, 0.5)/quantile(t, 0.5))
	}
	fmt.Printf("\n%d rounds of %d files on each side, in %s\n", *rounds, *n, *tmp)
}

// installSDK runs npm ci in dir unless its node_modules holds the SDK.
func installSDK(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk")); err == nil {
		return nil
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("tshandler: installing the TypeScript SDK (npm ci in %s): %w", dir, err)
	}
	return nil
}

// runTheirs runs one round through the SDK's handler (bench.mjs).
func runTheirs(dir, tmp string, n int) (map[string][]float64, error) {
	root, err := os.MkdirTemp(tmp, "tshandler-ts-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	cmd := exec.Command("node", "bench.mjs", root, fmt.Sprint(n))
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("tshandler: node bench.mjs: %w", err)
	}
	var times map[string][]float64
	if err := json.Unmarshal(out, &times); err != nil {
		return nil, fmt.Errorf("tshandler: bench.mjs's output: %w", err)
	}
	return times, nil
}

// runOurs runs one round through cloudmem's handler on the file store.
func runOurs(tmp string, n int) (map[string][]float64, error) {
	root, err := os.MkdirTemp(tmp, "tshandler-go-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	ctx := context.Background()
	store, err := file.Open(ctx, root, nil)
	if err != nil {
		return nil, err
	}
	h, err := memory.New(store, memory.Options{})
	if err != nil {
		return nil, err
	}
	path := func(i int) string { return fmt.Sprintf("/memories/c/f%d.md", i) }
	inputs := map[string][][]byte{}
	add := func(c string, v map[string]any) {
		v["command"] = c
		b, err := json.Marshal(v)
		if err != nil {
			panic(err) // maps of strings and ints always marshal
		}
		inputs[c] = append(inputs[c], b)
	}
	for i := range n {
		add("create", map[string]any{"path": path(i), "file_text": fmt.Sprintf("note %d\nstate: even\nline three\nline four\nline five\n", i)})
		add("view", map[string]any{"path": path(0)})
		from, to := "state: even", "state: odd"
		if i%2 == 1 {
			from, to = to, from
		}
		add("str_replace", map[string]any{"path": path(0), "old_str": from, "new_str": to})
		add("insert", map[string]any{"path": path(1), "insert_line": 1, "insert_text": fmt.Sprintf("inserted %d", i)})
	}
	for i := 2; i < n; i++ {
		renamed := fmt.Sprintf("/memories/r/f%d.md", i)
		add("rename", map[string]any{"old_path": path(i), "new_path": renamed})
		add("delete", map[string]any{"path": renamed})
	}
	times := map[string][]float64{}
	for _, c := range commands {
		for _, in := range inputs[c] {
			start := time.Now()
			res := h.Execute(ctx, in)
			times[c] = append(times[c], float64(time.Since(start).Nanoseconds())/1000)
			if res.IsError {
				return nil, fmt.Errorf("tshandler: cloudmem %s failed: %s", c, res.Text)
			}
		}
	}
	return times, nil
}

// quantile returns the q-quantile of xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.SortedFunc(slices.Values(xs), cmp.Compare)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}
