package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/config"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// access says what a command does with a store.
type access int

const (
	// readWrite: the command may write; a missing local directory is
	// created by the first write, and not before (lazyStore).
	readWrite access = iota
	// readOnly: the command only reads. The store is opened read-only
	// (blob.ReadOnly) and must exist: a local directory that is missing is
	// an error (errNoStore), never created.
	readOnly
	// dryRunAccess: the command shows what it would do (--dry-run). The
	// store is opened as for readWrite, under blob.DryRun: the command
	// makes every check and answer of a real run, and nothing it writes
	// reaches the store (a missing directory is not created either).
	dryRunAccess
)

// errNoStore is the error of a read-only use of a local directory that does
// not exist.
var errNoStore = errors.New("the store does not exist")

// storeURL returns the configured store: --store, else $CLOUDMEM_STORE,
// else defaultStore.
func (a *app) storeURL() string {
	switch {
	case len(a.mounts) > 0:
		return a.mountsName() // mount.go
	case a.storeFlag != "":
		return a.storeFlag
	case a.getenv(storeEnv) != "":
		return a.getenv(storeEnv)
	}
	return defaultStore
}

// openStore opens the configured store (see storeURL) for acc. The caller
// closes it with blob.Close.
func (a *app) openStore(ctx context.Context, acc access) (blob.Store, error) {
	if len(a.mounts) > 0 {
		return a.openMounts(ctx, acc) // mount.go
	}
	return a.openURL(ctx, a.storeURL(), acc)
}

// openURL opens the store rawURL names for acc (see access). The caller
// closes it with blob.Close. A bare path holding '?' or '#' is refused:
// storeurl takes a bare path literally, so its parameters would be silently
// ignored (a plain store where encrypt=age was meant).
//
// A name (config.IsName) is the store of that name in the config file.
func (a *app) openURL(ctx context.Context, rawURL string, acc access) (blob.Store, error) {
	if config.IsName(rawURL) {
		return a.openNamed(ctx, rawURL, acc)
	}
	if err := checkBarePath(rawURL); err != nil {
		return nil, err
	}
	if dir, ok := localDir(rawURL); ok {
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			if acc == readOnly {
				return nil, fmt.Errorf("%w: no directory %s (the first write creates it)", errNoStore, dir)
			}
			if err := checkParams(ctx, rawURL); err != nil {
				return nil, err // now, not at the first write
			}
			limits, _ := storeurl.Limits(rawURL) // checked by checkParams
			lazy := &lazyStore{dir: dir, limits: limits, open: func(ctx context.Context) (blob.Store, error) {
				return storeurl.Open(ctx, rawURL)
			}}
			if p, _ := storeurl.Policy(rawURL); p != nil { // a nil *policy.Policy is no policy
				lazy.policy = p
			}
			return a.instrumentStore(forAccess(lazy, acc), rawURL), nil
		}
	}
	s, err := storeurl.Open(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return a.instrumentStore(forAccess(s, acc), rawURL), nil // otel.go
}

// forAccess wraps s as acc asks: read-only, or a dry run.
func forAccess(s blob.Store, acc access) blob.Store {
	switch acc {
	case readOnly:
		return blob.ReadOnly(s)
	case dryRunAccess:
		return blob.DryRun(s)
	}
	return s
}

// openHandler opens the configured store for acc and returns a Handler over
// it with opts (its Logger set to a.logger()), and the function that closes
// the store.
func (a *app) openHandler(ctx context.Context, acc access, opts memory.Options) (*memory.Handler, func(), error) {
	s, err := a.openStore(ctx, acc)
	if err != nil {
		return nil, nil, err
	}
	h, err := a.handler(s, opts)
	if err != nil {
		blob.Close(s)
		return nil, nil, err
	}
	return h, func() { blob.Close(s) }, nil
}

// handler returns a Handler over s with opts and the app's logger.
func (a *app) handler(s blob.Store, opts memory.Options) (*memory.Handler, error) {
	opts = a.instrumentOptions(opts) // otel.go
	opts.Logger = a.logger()
	return memory.New(s, opts)
}

// logger returns where the memory handler logs the details of storage
// failures: stderr with --verbose, nowhere otherwise (the error line says
// what failed).
func (a *app) logger() *slog.Logger {
	if a.verbose {
		return slog.New(slog.NewTextHandler(a.stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// checkParams checks the parameters of rawURL, a file: URL of a directory
// that does not exist, without creating it: it opens the same parameters
// over an empty temporary directory, which it then removes. A bare path,
// or a URL without parameters, has nothing to check.
func checkParams(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.RawQuery == "" {
		return nil // a bare path; or storeurl reports the malformed URL when it opens it
	}
	tmp, err := os.MkdirTemp("", "cloudmem-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	probe := &url.URL{Scheme: "file", Path: filepath.ToSlash(tmp), RawQuery: u.RawQuery}
	s, err := storeurl.Open(ctx, probe.String())
	if err != nil {
		return err
	}
	return blob.Close(s)
}

// checkBarePath refuses a bare path (a store string without a scheme) that
// holds '?' or '#', and shows the file: URL meant.
func checkBarePath(raw string) error {
	if hasScheme(raw) || !strings.ContainsAny(raw, "?#") {
		return nil
	}
	return fmt.Errorf("the store path %q holds '?' or '#': a plain path takes no parameters; "+
		"write the store as a URL, file:%s (and escape a '?' or '#' that is part of the directory's name as %%3F or %%23)",
		raw, raw)
}

// localDir returns the directory of a store on the local file system: a
// bare path, or the path of a file: URL (file:rel, file:///abs). ok is
// false for every other store, and for a file: URL that does not parse
// (storeurl reports that).
func localDir(raw string) (dir string, ok bool) {
	if !hasScheme(raw) {
		return raw, raw != ""
	}
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "file") {
		return "", false
	}
	if u.Opaque != "" {
		dir, err := url.PathUnescape(u.Opaque)
		return dir, err == nil && dir != ""
	}
	return u.Path, u.Path != ""
}

// hasScheme reports whether s starts with a URL scheme and ':', the rule by
// which storeurl tells a URL from a plain path: a letter, then letters,
// digits, '+', '-' or '.'.
func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	for j, r := range s[:i] {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case j > 0 && ('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// printResult prints the text of a successful command result on stdout and
// returns nil, or returns the error of a failed one (the handler's text,
// which runContext prints under the command's name).
func (a *app) printResult(res memory.Result) error {
	if res.IsError {
		return res.Err
	}
	_, err := fmt.Fprintln(a.stdout, resultText(res))
	return err
}

// resultText renders a result for a reader: its text, or a line describing
// an image.
func resultText(res memory.Result) string {
	if res.Image != nil {
		return fmt.Sprintf("[%s image, %d bytes]", res.Image.MediaType, len(res.Image.Data))
	}
	return res.Text
}
