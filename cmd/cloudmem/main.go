// Command cloudmem runs the commands of Claude's memory tool against a
// store: a local directory by default, or any store a storeurl URL names.
//
// Usage:
//
//	cloudmem [--store URL] COMMAND [ARGS]
//
// The store is --store URL, else $CLOUDMEM_STORE, else ./memories (a local
// directory, created when first written). The commands:
//
//	exec    read memory commands (the input JSON of a tool_use block), one per line, from stdin,
//	        and write one result per line to stdout: {"content": ..., "is_error": ...}
//	demo    run a short scripted session against the store and print each step
//	view    print a memory file or directory: cloudmem view /memories/notes.md --range 1,20
//	ls      list a memory directory with sizes, as the model sees it
//	cat     write a memory file to stdout, byte for byte
//	put     create (--force: replace) a memory file: cloudmem put /memories/notes.md notes.md
//	rm      delete a memory file or directory
//	mv      rename a memory file or directory
//	export  write every memory file to a directory, or a tar stream to stdout (-)
//	import  store the files of a directory, or of a tar stream on stdin (-), as memory files
//	copy    copy a whole store to another (cloudmem copy SRC_URL DST_URL), resumable, verified by SHA-256
//	keygen  write a new age identity file (-o FILE) and print its recipient
//	rekey   re-encrypt every object of an encrypted store to new recipients
//	version print the version
//
// Exit status: 0 on success, 1 when a command fails, 2 for a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	_ "github.com/cloudmem/cloudmem/backends/all" // every store scheme
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Exit codes.
const (
	exitOK    = 0 // success
	exitFail  = 1 // the command failed (a store that cannot be opened, an I/O error, an error result)
	exitUsage = 2 // bad flags or arguments
)

// defaultStore is the store used when neither --store nor $CLOUDMEM_STORE
// names one: a directory next to where cloudmem runs.
const defaultStore = "./memories"

// storeEnv is the environment variable that names the store.
const storeEnv = "CLOUDMEM_STORE"

// A command is one subcommand. Adding one means adding its file and a line
// in commands.
type command struct {
	name    string
	summary string // one line for the global usage
	run     func(c *cli, args []string) int
}

// commands lists the subcommands in the order the usage shows them.
var commands = []command{
	{"exec", "run memory commands read from stdin, one JSON object per line", runExec},
	{"demo", "run a short scripted session against the store, printing each step", runDemo},
	{"view", "print a memory file or directory", runView},
	{"ls", "list a memory directory, with sizes", runLs},
	{"cat", "write a memory file to stdout, byte for byte", runCat},
	{"put", "create a memory file from a file or stdin", runPut},
	{"rm", "delete a memory file or directory", runRm},
	{"mv", "rename a memory file or directory", runMv},
	{"export", "write every memory file to a directory or a tar stream", runExport},
	{"import", "store the files of a directory or a tar stream as memory files", runImport},
	{"copy", "copy a whole store to another store, and verify the copy", runCopy},
	{"keygen", "write a new age identity file and print its recipient", runKeygen},
	{"rekey", "re-encrypt every object of a store to new age recipients", runRekey},
	{"version", "print the version of cloudmem", runVersion},
	{"chat", "chat with Claude, which keeps its memory in the store", runChat},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// cli is what a command runs with: its streams, its environment and the
// global flags.
type cli struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	store  string // the store URL, resolved from --store, $CLOUDMEM_STORE or the default
}

// run is the whole program: it parses the global flags, then runs the
// subcommand, and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c := &cli{ctx: context.Background(), stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	fs := flag.NewFlagSet("cloudmem", flag.ContinueOnError)
	store := fs.String("store", "", "the store `URL` (default $"+storeEnv+", else "+defaultStore+")")
	if code, done := c.parse(fs, args, globalUsage); done {
		return code
	}
	c.store = *store
	if c.store == "" {
		c.store = getenv(storeEnv)
	}
	if c.store == "" {
		c.store = defaultStore
	}
	if fs.NArg() == 0 {
		return c.usageError(fs, globalUsage, errors.New("no command given"))
	}
	name := fs.Arg(0)
	for _, cmd := range commands {
		if cmd.name == name {
			return cmd.run(c, fs.Args()[1:])
		}
	}
	return c.usageError(fs, globalUsage, fmt.Errorf("unknown command %q", name))
}

// globalUsage writes the top-level help.
func globalUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "cloudmem runs the commands of Claude's memory tool against a store.\n\n")
	fmt.Fprintf(w, "Usage:\n  cloudmem [--store URL] COMMAND [ARGS]\n\nCommands:\n")
	for _, cmd := range commands {
		fmt.Fprintf(w, "  %-6s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintf(w, "\nFlags:\n")
	printDefaults(w, fs)
	fmt.Fprintf(w, "\nThe store is --store URL, else $%s, else %s (a local directory).\n", storeEnv, defaultStore)
	fmt.Fprintf(w, "Run 'cloudmem COMMAND --help' for a command's own flags.\n")
}

// parse parses args with fs. When parsing ends the program (help was asked
// for, or the flags are wrong) it reports done and the exit code, having
// written the usage to stdout (help) or the error and the usage to stderr.
func (c *cli) parse(fs *flag.FlagSet, args []string, usage func(io.Writer, *flag.FlagSet)) (code int, done bool) {
	fs.SetOutput(io.Discard) // errors are reported below, once
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, flag.ErrHelp):
		usage(c.stdout, fs)
		return exitOK, true
	default:
		return c.usageError(fs, usage, err), true
	}
}

// parseArgs parses args with fs, letting flags and positional arguments
// come in any order ("put PATH FILE --force"), and returns the positional
// ones, which checkArgs checks against names. Everything after "--" is
// positional. When parsing ends the program (help, bad flags, positional
// arguments that do not fit) it reports done and the exit code, as parse
// does.
func (c *cli) parseArgs(fs *flag.FlagSet, args []string, usage func(io.Writer, *flag.FlagSet), names ...string) (pos []string, code int, done bool) {
	for {
		if code, done := c.parse(fs, args, usage); done {
			return nil, code, true
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	if code, done := c.checkArgs(fs, usage, pos, names...); done {
		return nil, code, true
	}
	return pos, exitOK, false
}

// checkArgs checks a command's positional arguments pos against names,
// those the command takes, in order: NAME is required, [NAME] optional
// (after the required ones), and a name may carry a hint after a space:
// "DIR (- reads a tar stream from stdin)". Too few arguments is a usage
// error naming the missing required ones, then their hints: "no PATH
// given", "no OLD and NEW given". Too many is one naming the first extra
// argument: `unexpected argument "x"`. When the arguments do not fit it
// reports done and the exit code, as parse does.
func (c *cli) checkArgs(fs *flag.FlagSet, usage func(io.Writer, *flag.FlagSet), pos []string, names ...string) (code int, done bool) {
	var missing, hints []string
	for _, name := range names[min(len(pos), len(names)):] {
		if strings.HasPrefix(name, "[") {
			break // optional, and so are the rest
		}
		name, hint, _ := strings.Cut(name, " ")
		missing = append(missing, name)
		if hint != "" {
			hints = append(hints, hint)
		}
	}
	if len(missing) > 0 {
		msg := "no " + strings.Join(missing, " and ") + " given"
		for _, hint := range hints {
			msg += " " + hint
		}
		return c.usageError(fs, usage, errors.New(msg)), true
	}
	if len(pos) > len(names) {
		return c.usageError(fs, usage, fmt.Errorf("unexpected argument %q", pos[len(names)])), true
	}
	return exitOK, false
}

// usageError reports err and the usage on stderr and returns exitUsage.
func (c *cli) usageError(fs *flag.FlagSet, usage func(io.Writer, *flag.FlagSet), err error) int {
	fmt.Fprintf(c.stderr, "%s: %v\n\n", fs.Name(), err) // "cloudmem view: ..."
	usage(c.stderr, fs)
	return exitUsage
}

// printDefaults writes fs's flags, or "  (none)".
func printDefaults(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	if b.Len() == 0 {
		b.WriteString("  (none)\n")
	}
	io.WriteString(w, b.String())
}

// subcommandUsage returns a usage function for a subcommand: its synopsis,
// what it does, and its flags.
func subcommandUsage(synopsis, about string) func(io.Writer, *flag.FlagSet) {
	return func(w io.Writer, fs *flag.FlagSet) {
		fmt.Fprintf(w, "Usage: cloudmem [--store URL] %s\n\n%s\n\nFlags:\n", synopsis, about)
		printDefaults(w, fs)
	}
}

// openHandler opens the configured store and returns a Handler over it.
// Storage failures are logged to stderr.
func (c *cli) openHandler() (*memory.Handler, error) {
	store, err := storeurl.Open(c.ctx, c.store)
	if err != nil {
		return nil, err
	}
	return memory.New(store, memory.Options{
		Logger: slog.New(slog.NewTextHandler(c.stderr, nil)),
	})
}

// fail reports err on stderr under the command's name and returns exitFail.
func (c *cli) fail(name string, err error) int {
	fmt.Fprintf(c.stderr, "cloudmem %s: %v\n", name, err)
	return exitFail
}
