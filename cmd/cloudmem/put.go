package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/memory"
)

// runPut implements "cloudmem put PATH [FILE|-] [--force]": it creates the
// memory file PATH with the content of FILE, or of stdin when FILE is "-"
// or missing, through the handler's create command, so the model's rules
// and limits apply (size, file count, a file where a directory should be).
// With --force an existing file is replaced (memory.Options.Overwrite).
// The content must be UTF-8 text, as the model's files are; import stores
// any bytes.
func runPut(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem put", flag.ContinueOnError)
	force := fs.Bool("force", false, "replace PATH if it is already a file")
	usage := subcommandUsage("put PATH [FILE|-] [--force]",
		"Creates the memory file PATH with the content of FILE, or of stdin when FILE is - or missing.\n"+
			"The content must be UTF-8 text, within the memory tool's limits.")
	pos, code, done := c.parseArgs(fs, args, usage, "PATH", "[FILE]")
	if done {
		return code
	}
	path, file := pos[0], "-"
	if len(pos) == 2 {
		file = pos[1]
	}

	var (
		content []byte
		err     error
	)
	if file == "-" {
		content, err = io.ReadAll(c.stdin)
		file = "stdin"
	} else {
		content, err = os.ReadFile(file)
	}
	if err != nil {
		return c.fail("put", fmt.Errorf("reading the content: %w", err))
	}
	if !utf8.Valid(content) {
		return c.fail("put", fmt.Errorf("%s is not UTF-8 text; memory files are text (import stores any bytes)", file))
	}
	input := map[string]any{"command": "create", "path": path, "file_text": string(content)}
	return c.runMemoryCommand("put", memory.Options{Overwrite: *force}, input)
}
