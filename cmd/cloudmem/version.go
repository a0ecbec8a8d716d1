package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

// newVersionCmd is "cloudmem version" (also "cloudmem --version"): one line
// with the module version, the VCS revision the binary was built from (when
// the build recorded it) and the Go version.
func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Annotations: map[string]string{noStoreAnnotation: "yes"},
		Use:         "version",
		Short:       "Print the version of cloudmem",
		Long:        "Prints the version of cloudmem, the revision it was built from, and the Go version.",
		Args:        positional(),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(a.stdout, versionLine(buildInfo()))
			return err
		},
	}
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
