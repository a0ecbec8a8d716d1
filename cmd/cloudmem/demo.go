package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newDemoCmd) }

// demoDirName returns the directory a demo works in: a fresh name under
// parent, cloudmem-demo-XXXXXXXX with eight random hex digits, so that the
// demo never touches a file it did not create. Tests replace it.
var demoDirName = func(parent string) string {
	var b [4]byte
	rand.Read(b[:]) // never fails
	return fmt.Sprintf("%s/cloudmem-demo-%x", parent, b)
}

// demoParent returns the directory the demo's directory goes in: /memories,
// or on a mount table (--mount) the first writable mount point, since the
// top level outside every mount holds nothing. It fails when every mount is
// read-only.
func demoParent(s blob.Store) (string, error) {
	mounts := blob.Mounts(s)
	if mounts == nil {
		return memory.PathOf(""), nil
	}
	for _, m := range mounts {
		if !m.ReadOnly {
			return memory.PathOf(m.Name), nil
		}
	}
	return "", errors.New("every mount is read-only; the demo needs a writable one")
}

// demoSteps returns the demo's session in dir: the commands a model might
// send, in order. The last deletes dir, which holds only what the steps
// before created.
func demoSteps(dir string) []string {
	steps := []string{
		`{"command":"view","path":"/memories"}`,
		`{"command":"create","path":"DIR/notes.md","file_text":"# Project notes\n- Build with Go 1.26\n- Tests: bash integration/run-tests.sh\n"}`,
		`{"command":"str_replace","path":"DIR/notes.md","old_str":"Go 1.26","new_str":"Go 1.26 or newer"}`,
		`{"command":"insert","path":"DIR/notes.md","insert_line":1,"insert_text":"- Owner: the storage team\n"}`,
		`{"command":"view","path":"DIR/notes.md"}`,
		`{"command":"rename","old_path":"DIR/notes.md","new_path":"DIR/project.md"}`,
		`{"command":"view","path":"/memories"}`,
		`{"command":"delete","path":"DIR"}`,
	}
	for i := range steps {
		steps[i] = strings.ReplaceAll(steps[i], "DIR", dir)
	}
	return steps
}

// newDemoCmd is "cloudmem demo": it runs demoSteps in a fresh directory of
// the store, printing each command (the JSON a model sends) and its result.
// The directory must not exist; the demo creates it and deletes it at the
// end, and so removes only what it made. Any error result stops the demo
// with exit 1.
func newDemoCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Run a short scripted session against the store, printing each step",
		Long: "Runs a short memory session (view, create, str_replace, insert, view, rename, view, delete)\n" +
			"in a new directory /memories/cloudmem-demo-XXXXXXXX of the store (with --mount, in the first\n" +
			"writable mount), printing each command and its result. The demo deletes the directory at the\n" +
			"end and touches nothing else.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := a.openStore(ctx, readWrite)
			if err != nil {
				return err
			}
			defer blob.Close(s)
			parent, err := demoParent(s)
			if err != nil {
				return err
			}
			h, err := a.handler(s, memory.Options{})
			if err != nil {
				return err
			}
			dir := demoDirName(parent)
			switch _, err := h.Files(ctx, dir); {
			case errors.Is(err, memory.ErrNotFound): // a new directory, as it should be
			case err == nil || errors.Is(err, memory.ErrNotDir):
				return fmt.Errorf("%s already exists in the store; the demo works only in a new directory", dir)
			default:
				return err
			}
			fmt.Fprintf(a.stdout, "cloudmem demo: a memory session against the store %s, in %s\n", maskStore(a.storeURL()), dir)
			for _, step := range demoSteps(dir) {
				res := h.Execute(ctx, []byte(step))
				fmt.Fprintf(a.stdout, "\n> %s\n%s\n", step, resultText(res))
				if res.IsError {
					return fmt.Errorf("the step %s failed", step)
				}
			}
			fmt.Fprintf(a.stdout, "\nDone; the demo deleted what it created.\n")
			return nil
		},
	}
}
