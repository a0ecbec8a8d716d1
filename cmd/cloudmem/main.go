// Command cloudmem runs the commands of Claude's memory tool against a
// store: a local directory by default, or any store a storeurl URL names.
//
// Usage:
//
//	cloudmem COMMAND [ARGS] [--store URL] [--verbose]
//
// The store is --store URL, else $CLOUDMEM_STORE, else ./memories (a local
// directory, created when first written). "cloudmem help" lists the
// commands; "cloudmem help COMMAND" or "cloudmem COMMAND --help" describes
// one; "cloudmem completion bash|zsh|fish|powershell" prints a shell
// completion script.
//
// Exit status: 0 on success, 1 when a command fails, 2 for a usage error.
//
// # Errors
//
// A failure is one line on stderr, "cloudmem COMMAND: CAUSE", with the cause
// a person can act on (a bucket that does not exist, a secret key the server
// refused, a store that does not exist yet). --verbose adds the full error
// and the details the memory handler logs.
//
// # Why cobra
//
// The command line is built with github.com/spf13/cobra: it parses flags
// anywhere on the line (cloudmem exec --store URL), writes aligned help for
// every command, generates shell completion, suggests the command meant by
// a mistyped one, and gives --version and help; all of it tested and kept by
// a wide community, instead of a hand-written dispatcher.
package main

// Adding a command: put it in a file of its own, NAME.go, that registers a
// constructor from init; no other file changes.
//
//	func init() { register(newNameCmd) }
//
//	func newNameCmd(a *app) *cobra.Command {
//		return &cobra.Command{
//			Use:   "name PATH",           // the synopsis shown in help and usage errors
//			Short: "one line for the command list",
//			Long:  "What it does, for 'cloudmem help name'.",
//			Args:  positional("PATH"),    // "no PATH given", `unexpected argument "x"`
//			RunE: func(cmd *cobra.Command, args []string) error {
//				s, err := a.openStore(cmd.Context(), readOnly) // or a.openHandler
//				if err != nil {
//					return err
//				}
//				defer blob.Close(s)
//				...
//				return nil // or an error: one line on stderr, exit 1
//			},
//		}
//	}
//
// Return usageErrorf(...) for a bad argument (exit 2, with the synopsis);
// write output to a.stdout and a.stderr (cmd.OutOrStdout works too); read
// input from a.stdin and the environment through a.getenv, so that tests
// run the program in-process. The global flags (--store, --verbose) are
// parsed before RunE runs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/config"
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

// constructors are the registered commands, in the order of registration
// (help lists them sorted by name).
var constructors []func(*app) *cobra.Command

// register adds a command to the program. It is meant to be called from
// the init function of the command's file.
func register(newCmd func(*app) *cobra.Command) {
	constructors = append(constructors, newCmd)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := runContext(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// app is what a command runs with: its streams, its environment and the
// global flags. One app serves one run of the program.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string

	storeFlag string   // --store, "" when not given; a name's URL after resolveStore
	mounts    []string // --mount NAME=URL, in order (mount.go); a name's mount table after resolveStore
	verbose   bool     // --verbose

	// The config file (config.go), read at most once.
	cfg            *config.Config
	cfgErr         error
	cfgLoaded      bool
	storeConfig    *config.Store // the config's store the command uses, or nil
	storeByDefault bool          // storeConfig is the config's default, not named by --store or $CLOUDMEM_STORE
}

// run is the whole program: it parses the command line, runs the command
// and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return runContext(context.Background(), args, stdin, stdout, stderr, getenv)
}

// runContext is run with a context that ends the command when done.
func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	defer a.startTelemetry(ctx)() // otel.go: OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set
	root := a.rootCmd()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if cmd == nil {
		cmd = root
	}
	if ue, ok := errors.AsType[*usageError](err); ok {
		fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), ue.err)
		fmt.Fprintf(stderr, "Usage: %s\n", cmd.UseLine())
		fmt.Fprintf(stderr, "Run '%s --help' for more.\n", cmd.CommandPath())
		return exitUsage
	}
	for line := range strings.Lines(a.describe(err)) {
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), strings.TrimSuffix(line, "\n"))
	}
	return exitFail
}

// rootCmd builds the command tree: the global flags and every registered
// command.
func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "cloudmem COMMAND [ARGS]",
		Short: "Run the commands of Claude's memory tool against a store",
		Long: "cloudmem runs the commands of Claude's memory tool against a store: a local directory,\n" +
			"a bucket (s3://, gs://, azblob://), Redis (redis://), optionally encrypted (encrypt=age).\n\n" +
			"The store is --store URL, else $" + storeEnv + ", else the config file's default, else " + defaultStore + "\n" +
			"(a local directory). --store and $" + storeEnv + " take a store's name in the config file too\n" +
			"(a value with no ':' and no '/'): see 'cloudmem help config'.",
		Version: versionLine(buildInfo()),
		// The root runs only when no command matched: it reports what is
		// wrong, with suggestions for a mistyped name.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("no command given")
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
			}
			return usageErrorf("%s", msg)
		},
		// Every command sees a store's URL or mount table, not its name.
		PersistentPreRunE:          func(cmd *cobra.Command, _ []string) error { return a.resolveStore(cmd) },
		SilenceErrors:              true, // runContext reports errors, once
		SilenceUsage:               true,
		DisableFlagsInUseLine:      true,
		SuggestionsMinimumDistance: 2,
	}
	// The root's synopsis is its Use line alone: "cloudmem COMMAND [ARGS]",
	// not also "cloudmem [command]".
	tmpl := root.UsageTemplate()
	tmpl = strings.Replace(tmpl, "Usage:{{if .Runnable}}", "Usage:{{if not .HasParent}}\n  {{.UseLine}}{{else}}{{if .Runnable}}", 1)
	tmpl = strings.Replace(tmpl, "{{.CommandPath}} [command]{{end}}", "{{.CommandPath}} [command]{{end}}{{end}}", 1)
	root.SetUsageTemplate(tmpl)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	flags := root.PersistentFlags()
	flags.StringVar(&a.storeFlag, "store", "", "the store `URL` or name in the config file (default $"+storeEnv+", else the config's default, else "+defaultStore+")")
	flags.BoolVarP(&a.verbose, "verbose", "v", false, "print the full error and the storage details on failure")
	a.addMountFlag(root)
	for _, newCmd := range constructors {
		cmd := newCmd(a)
		cmd.DisableFlagsInUseLine = true
		root.AddCommand(cmd)
	}
	return root
}

// buildInfo returns the binary's build information, or nil.
func buildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}

// usageError is a bad command line: runContext prints it with the
// command's synopsis and exits with exitUsage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf returns a usage error with the formatted message.
func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// positional returns the check of a command's positional arguments against
// names, those the command takes, in order: NAME is required, [NAME]
// optional (after the required ones), and a name may carry a hint after a
// space: "DIR (- reads a tar stream from stdin)". Too few arguments is a
// usage error naming the missing required ones, then their hints: "no PATH
// given", "no OLD and NEW given". Too many is one naming the first extra
// argument: `unexpected argument "x"`.
func positional(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, pos []string) error {
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
			return usageErrorf("%s", msg)
		}
		if len(pos) > len(names) {
			return usageErrorf("unexpected argument %q", pos[len(names)])
		}
		return nil
	}
}
