package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// runView implements "cloudmem view PATH [--range A,B]": it runs the view
// command and prints the result text to stdout, or, for an error result, to
// stderr with exit 1.
func runView(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem view", flag.ContinueOnError)
	rng := fs.String("range", "", "show only lines `A,B` of a file (B = -1: to the end)")
	usage := subcommandUsage("view PATH [--range A,B]",
		"Prints the memory file or directory PATH (/memories or a path under it), as the model sees it.")
	if code, done := c.parse(fs, args, usage); done {
		return code
	}
	// Flags may also follow PATH: view /memories/a.md --range 1,5.
	pos := fs.Args()
	if len(pos) > 0 {
		if code, done := c.parse(fs, pos[1:], usage); done {
			return code
		}
		pos = append(pos[:1:1], fs.Args()...)
	}
	if code, done := c.checkArgs(fs, usage, pos, "PATH"); done {
		return code
	}
	path := pos[0]

	input := map[string]any{"command": "view", "path": path}
	if *rng != "" {
		r, err := parseRange(*rng)
		if err != nil {
			return c.usageError(fs, usage, err)
		}
		input["view_range"] = r
	}
	cmd, err := json.Marshal(input)
	if err != nil {
		return c.fail("view", err)
	}
	h, err := c.openHandler()
	if err != nil {
		return c.fail("view", err)
	}
	res := h.Execute(c.ctx, cmd)
	if res.IsError {
		fmt.Fprintln(c.stderr, res.Text)
		return exitFail
	}
	fmt.Fprintln(c.stdout, resultText(res))
	return exitOK
}

// parseRange parses "A,B" into two integers.
func parseRange(s string) ([2]int64, error) {
	a, b, ok := strings.Cut(s, ",")
	if ok {
		first, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		last, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if err1 == nil && err2 == nil {
			return [2]int64{first, last}, nil
		}
	}
	return [2]int64{}, fmt.Errorf("--range %q: want two integers A,B, such as 1,20", s)
}
