package main

import (
	"flag"

	"github.com/cloudmem/cloudmem/memory"
)

// runRm implements "cloudmem rm PATH": the handler's delete command, which
// removes a file, or a directory with everything beneath it.
func runRm(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem rm", flag.ContinueOnError)
	usage := subcommandUsage("rm PATH",
		"Deletes the memory file PATH, or the directory PATH with everything beneath it.")
	pos, code, done := c.parseArgs(fs, args, usage, "PATH")
	if done {
		return code
	}
	return c.runMemoryCommand("rm", memory.Options{}, map[string]any{"command": "delete", "path": pos[0]})
}
