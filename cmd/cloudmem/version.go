package main

import (
	"flag"
	"fmt"
	"runtime/debug"
	"strings"
)

// runVersion implements "cloudmem version": one line with the module
// version, the VCS revision the binary was built from (when the build
// recorded it) and the Go version.
func runVersion(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem version", flag.ContinueOnError)
	usage := plainUsage("version", "Prints the version of cloudmem, the revision it was built from, and the Go version.")
	if _, code, done := c.parseArgs(fs, args, usage); done {
		return code
	}
	info, _ := debug.ReadBuildInfo() // nil when the binary has none
	fmt.Fprintln(c.stdout, versionLine(info))
	return exitOK
}

// versionLine describes a build: "cloudmem v1.2.0 (go1.26.0)", or for a
// build from a checkout "cloudmem (devel) revision 0123456789ab, modified
// (go1.26.0)". A nil info (a binary without build information) gives
// "cloudmem (unknown version)".
func versionLine(info *debug.BuildInfo) string {
	if info == nil {
		return "cloudmem (unknown version)"
	}
	var b strings.Builder
	b.WriteString("cloudmem ")
	if v := info.Main.Version; v != "" {
		b.WriteString(v)
	} else {
		b.WriteString("(devel)")
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" {
		b.WriteString(" revision ")
		b.WriteString(revision[:min(len(revision), 12)])
		if modified == "true" {
			b.WriteString(", modified")
		}
	}
	if info.GoVersion != "" {
		b.WriteString(" (")
		b.WriteString(info.GoVersion)
		b.WriteString(")")
	}
	return b.String()
}
