package main

import (
	"flag"

	"github.com/cloudmem/cloudmem/memory"
)

// runMv implements "cloudmem mv OLD NEW": the handler's rename command, for
// a file or a whole directory. NEW must not exist.
func runMv(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem mv", flag.ContinueOnError)
	usage := subcommandUsage("mv OLD NEW",
		"Renames the memory file or directory OLD to NEW, which must not exist.")
	pos, code, done := c.parseArgs(fs, args, usage, "OLD", "NEW")
	if done {
		return code
	}
	input := map[string]any{"command": "rename", "old_path": pos[0], "new_path": pos[1]}
	return c.runMemoryCommand("mv", memory.Options{}, input)
}
