package main

import (
	"context"
	"fmt"
	"log/slog"
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
	// created by the first write, and not before (the file store's
	// Options.CreateOnWrite, which a store URL sets).
	readWrite access = iota
	// readOnly: the command only reads. The store is opened read-only
	// (storeurl.OpenReadOnly) and must exist: a local directory that is
	// missing is an error (file.ErrNoStore), never created.
	readOnly
	// dryRunAccess: the command shows what it would do (--dry-run). The
	// store is opened as for readWrite, under blob.DryRun: the command
	// makes every check and answer of a real run, and nothing it writes
	// reaches the store (a missing directory is not created either).
	dryRunAccess
)

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
	open := storeurl.Open
	if acc == readOnly {
		open = storeurl.OpenReadOnly
	}
	s, err := open(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return a.instrumentStore(forAccess(s, acc), rawURL), nil // otel.go
}

// forAccess wraps s as acc asks: a dry run (storeurl.OpenReadOnly made a
// read-only store read-only).
func forAccess(s blob.Store, acc access) blob.Store {
	if acc == dryRunAccess {
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

// checkBarePath refuses a bare path (a store string without a scheme) that
// holds '?' or '#', and shows the file: URL meant.
func checkBarePath(raw string) error {
	if !storeurl.IsPath(raw) || !strings.ContainsAny(raw, "?#") {
		return nil
	}
	return fmt.Errorf("the store path %q holds '?' or '#': a plain path takes no parameters; "+
		"write the store as a URL, file:%s (and escape a '?' or '#' that is part of the directory's name as %%3F or %%23)",
		raw, raw)
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
