package main

import (
	"flag"
	"fmt"

	"github.com/cloudmem/cloudmem/memory"
)

// runRm implements "cloudmem rm PATH": the handler's delete command, which
// removes a file, or a directory with everything beneath it.
func runRm(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem rm", flag.ContinueOnError)
	usage := subcommandUsage("rm PATH",
		"Deletes the memory file PATH, or the directory PATH with everything beneath it.")
	pos, code, done := c.parseArgs(fs, args, usage)
	if done {
		return code
	}
	switch len(pos) {
	case 0:
		return c.usageError(fs, usage, fmt.Errorf("no PATH given"))
	case 1:
	default:
		return c.usageError(fs, usage, fmt.Errorf("unexpected argument %q", pos[1]))
	}
	return c.runMemoryCommand("rm", memory.Options{}, map[string]any{"command": "delete", "path": pos[0]})
}
