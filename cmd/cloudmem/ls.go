package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// runLs implements "cloudmem ls [PATH]": the listing the model gets from
// view of the directory PATH (default /memories), without its header line:
// two levels deep, hidden names and node_modules left out, each line a size
// and a path. PATH must be a directory; errors are the handler's texts.
func runLs(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem ls", flag.ContinueOnError)
	usage := subcommandUsage("ls [PATH]",
		"Lists the memory directory PATH (default /memories) as the model sees it: two levels deep,\n"+
			"without hidden names and node_modules, each line a size and a path (a directory's size\n"+
			"is the total of every file beneath it).")
	pos, code, done := c.parseArgs(fs, args, usage, "[PATH]")
	if done {
		return code
	}
	path := "/memories"
	if len(pos) == 1 {
		path = pos[0]
	}
	store, err := c.openStore()
	if err != nil {
		return c.fail("ls", err)
	}
	defer blob.Close(store)
	res, file, err := c.view(store, path)
	switch {
	case err != nil:
		return c.fail("ls", err)
	case res.IsError:
		fmt.Fprintln(c.stderr, res.Text)
		return exitFail
	case file != nil:
		return c.fail("ls", fmt.Errorf("%s is a file, not a directory (cat prints a file)", path))
	}
	_, listing, _ := strings.Cut(res.Text, "\n") // drop the header meant for the model
	fmt.Fprintln(c.stdout, listing)
	return exitOK
}

// openStore opens the store --store names. The caller closes it with
// blob.Close.
func (c *cli) openStore() (blob.Store, error) {
	return storeurl.Open(c.ctx, c.store)
}

// handler returns a Handler over s with opts, logging storage failures to
// stderr.
func (c *cli) handler(s blob.Store, opts memory.Options) (*memory.Handler, error) {
	opts.Logger = slog.New(slog.NewTextHandler(c.stderr, nil))
	return memory.New(s, opts)
}

// execute runs the memory command input (a JSON object) with a Handler over
// s, so that the command obeys every rule and limit it obeys for the model.
func (c *cli) execute(s blob.Store, opts memory.Options, input map[string]any) (memory.Result, error) {
	h, err := c.handler(s, opts)
	if err != nil {
		return memory.Result{}, err
	}
	cmd, err := json.Marshal(input)
	if err != nil {
		return memory.Result{}, err
	}
	return h.Execute(c.ctx, cmd), nil
}

// runMemoryCommand opens the store, runs one writing memory command, and
// prints its result text: to stdout on success, to stderr with exit 1 for an
// error result.
func (c *cli) runMemoryCommand(name string, opts memory.Options, input map[string]any) int {
	store, err := c.openStore()
	if err != nil {
		return c.fail(name, err)
	}
	defer blob.Close(store)
	res, err := c.execute(store, opts, input)
	if err != nil {
		return c.fail(name, err)
	}
	if res.IsError {
		fmt.Fprintln(c.stderr, res.Text)
		return exitFail
	}
	fmt.Fprintln(c.stdout, res.Text)
	return exitOK
}
