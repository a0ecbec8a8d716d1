package main

import (
	"flag"
	"fmt"

	"github.com/cloudmem/cloudmem/memory"
)

// demoDir is the directory the demo works in; it is removed when the demo
// ends, so the next run starts from the same state.
const demoDir = "/memories/cloudmem-demo"

// demoSteps is the demo's session: the commands a model might send, in order.
var demoSteps = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"create","path":"` + demoDir + `/notes.md","file_text":"# Project notes\n- Build with Go 1.26\n- Tests: bash integration/run-tests.sh\n"}`,
	`{"command":"str_replace","path":"` + demoDir + `/notes.md","old_str":"Go 1.26","new_str":"Go 1.26 or newer"}`,
	`{"command":"insert","path":"` + demoDir + `/notes.md","insert_line":1,"insert_text":"- Owner: the storage team\n"}`,
	`{"command":"view","path":"` + demoDir + `/notes.md"}`,
	`{"command":"rename","old_path":"` + demoDir + `/notes.md","new_path":"` + demoDir + `/project.md"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"delete","path":"` + demoDir + `"}`,
}

// runDemo implements "cloudmem demo": it runs demoSteps against the store,
// printing each command and its result. A directory left by an interrupted
// earlier run is deleted first (and that step printed). Any error result
// stops the demo with exit 1.
func runDemo(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem demo", flag.ContinueOnError)
	usage := subcommandUsage("demo",
		"Runs a short memory session (view, create, str_replace, insert, view, rename, view, delete)\n"+
			"in "+demoDir+" of the store, printing each command and its result.\n"+
			"The directory is deleted at the end, so the demo can run again.")
	if code, done := c.parse(fs, args, usage); done {
		return code
	}
	if code, done := c.checkArgs(fs, usage, fs.Args()); done {
		return code
	}
	h, err := c.openHandler()
	if err != nil {
		return c.fail("demo", err)
	}

	fmt.Fprintf(c.stdout, "cloudmem demo: a memory session against the store %s\n", c.store)
	steps := demoSteps
	// A quiet look first: a view of the demo directory that succeeds means
	// an earlier run stopped half way; delete it, visibly.
	if res := h.Execute(c.ctx, []byte(`{"command":"view","path":"`+demoDir+`"}`)); !res.IsError {
		fmt.Fprintf(c.stdout, "\n(%s is left from an earlier run that did not finish; deleting it first)\n", demoDir)
		steps = append([]string{demoSteps[len(demoSteps)-1]}, steps...)
	}
	for _, step := range steps {
		res := h.Execute(c.ctx, []byte(step))
		fmt.Fprintf(c.stdout, "\n> %s\n%s\n", step, resultText(res))
		if res.IsError {
			return c.fail("demo", fmt.Errorf("the step %s failed", step))
		}
	}
	fmt.Fprintf(c.stdout, "\nDone; the demo deleted what it created.\n")
	return exitOK
}

// resultText renders a result for a reader: its text, or a line describing
// an image.
func resultText(res memory.Result) string {
	if res.Image != nil {
		return fmt.Sprintf("[%s image, %d bytes]", res.Image.MediaType, len(res.Image.Data))
	}
	return res.Text
}
