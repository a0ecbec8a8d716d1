package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// runCat implements "cloudmem cat PATH": it writes the memory file PATH to
// stdout byte for byte (no line numbers, any content, images too). The path
// goes through the handler's view, so it is validated exactly as the
// model's paths are and errors are the handler's texts.
func runCat(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem cat", flag.ContinueOnError)
	usage := subcommandUsage("cat PATH",
		"Writes the memory file PATH (a path under /memories) to stdout, byte for byte.")
	pos, code, done := c.parseArgs(fs, args, usage, "PATH")
	if done {
		return code
	}
	path := pos[0]
	store, err := c.openStore()
	if err != nil {
		return c.fail("cat", err)
	}
	defer blob.Close(store)
	res, file, err := c.view(store, path)
	switch {
	case err != nil:
		return c.fail("cat", err)
	case file != nil:
		// The view may have refused the content (not UTF-8, too many
		// lines, an image over the limit); cat prints it regardless.
		if _, err := c.stdout.Write(file); err != nil {
			return c.fail("cat", fmt.Errorf("writing stdout: %w", err))
		}
		return exitOK
	case res.IsError:
		fmt.Fprintln(c.stderr, res.Text)
	default: // a directory: the view listed it
		fmt.Fprintf(c.stderr, "Error: The path %s is not a file.\n", path)
	}
	return exitFail
}

// view runs the handler's view of path over s and returns its result and,
// when path names a file, the file's raw bytes (non-nil, possibly empty),
// whatever the view made of them. The handler's own path rules decide which
// key path names: no rule is repeated here.
func (c *cli) view(s blob.Store, path string) (res memory.Result, file []byte, err error) {
	p := &getProbe{Store: s}
	res, err = c.execute(p, memory.Options{}, map[string]any{"command": "view", "path": path})
	if err != nil {
		return memory.Result{}, nil, err
	}
	if p.called && p.err == nil {
		if p.data == nil {
			p.data = []byte{}
		}
		return res, p.data, nil
	}
	return res, nil, nil
}

// getProbe is a Store that passes every call to the Store it embeds and
// records the first Get: its key, data and error. The handler's view of a
// path other than the root makes exactly one Get, of the path's key, before
// anything else, so a probe learns the key the handler validated and, for a
// file, its bytes. A getProbe is not safe for concurrent use.
type getProbe struct {
	blob.Store
	called bool
	key    string
	data   []byte
	err    error
}

func (p *getProbe) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	data, info, err := p.Store.Get(ctx, key, limit)
	if !p.called {
		p.called, p.key, p.data, p.err = true, key, data, err
	}
	return data, info, err
}
