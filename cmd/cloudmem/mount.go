package main

// Mounts: --mount NAME=URL, repeatable, places several stores in one
// /memories (package mount). Each URL is an ordinary store URL, opened on its
// own with its own prefix, encryption and readonly parameter; a trailing
// ":ro" makes the mount read-only too. --mount replaces --store.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/config"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/storeurl"
)

// readOnlySuffix, at the end of a --mount value, makes the mount read-only.
const readOnlySuffix = ":ro"

// addMountFlag registers the global --mount flag on root.
func (a *app) addMountFlag(root *cobra.Command) {
	root.PersistentFlags().StringArrayVar(&a.mounts, "mount", nil,
		"place the store `NAME=URL` at /memories/NAME; repeatable; a trailing "+readOnlySuffix+
			" (or readonly=true in the URL) makes it read-only; replaces --store")
}

// mountsScheme starts the name of a configured mount table (mountsName).
const mountsScheme = "mounts:"

// mountsName names the configured mount table where one string names the
// store (the state file of a sync, the store a demo reports): "mounts:"
// and the --mount values in order. It is no store URL: a command that needs
// one store URL (rekey) refuses it.
func (a *app) mountsName() string {
	return mountsScheme + strings.Join(a.mounts, " ")
}

// mountSpec is one parsed --mount value.
type mountSpec struct {
	name     string
	url      string
	readOnly bool
}

// parseMount parses NAME=URL[:ro]. A bad value is a usage error.
func parseMount(value string) (mountSpec, error) {
	name, rawURL, ok := strings.Cut(value, "=")
	if !ok || rawURL == "" {
		return mountSpec{}, usageErrorf("--mount %q: want NAME=URL", value)
	}
	if err := mount.CheckName(name); err != nil {
		return mountSpec{}, usageErrorf("--mount %q: %s", value, reason(err))
	}
	spec := mountSpec{name: name, url: rawURL}
	if u, ro := strings.CutSuffix(rawURL, readOnlySuffix); ro {
		spec.url, spec.readOnly = u, true
	}
	if spec.url == "" {
		return mountSpec{}, usageErrorf("--mount %q: want NAME=URL", value)
	}
	return spec, nil
}

// openMounts opens the store of every --mount for acc and returns the table
// of them. On failure it closes what it opened.
func (a *app) openMounts(ctx context.Context, acc access) (blob.Store, error) {
	if a.storeFlag != "" {
		return nil, usageErrorf("--store and --mount cannot be used together: put the store under a --mount too")
	}
	specs, err := parseMounts(a.mounts)
	if err != nil {
		return nil, err
	}
	return a.openMountSpecs(ctx, specs, acc)
}

// parseMounts parses every --mount value (parseMount).
func parseMounts(values []string) ([]mountSpec, error) {
	specs := make([]mountSpec, len(values))
	for i, value := range values {
		spec, err := parseMount(value)
		if err != nil {
			return nil, err
		}
		specs[i] = spec
	}
	return specs, nil
}

// configSpecs returns the mounts of st, a config store with a mount table.
func configSpecs(st config.Store) []mountSpec {
	specs := make([]mountSpec, len(st.Mounts))
	for i, m := range st.Mounts {
		specs[i] = mountSpec{name: m.Name, url: m.URL, readOnly: m.ReadOnly}
	}
	return specs
}

// openMountSpecs opens the store of every spec for acc and returns the
// table of them. It refuses specs whose stores overlap before it opens any
// (checkOverlap). On failure it closes what it opened.
func (a *app) openMountSpecs(ctx context.Context, specs []mountSpec, acc access) (blob.Store, error) {
	if err := a.checkOverlap(specs); err != nil {
		return nil, err
	}
	var mounts []mount.Mount
	closeAll := func() {
		for _, m := range mounts {
			blob.Close(m.Store)
		}
	}
	for _, spec := range specs {
		s, err := a.openURL(ctx, spec.url, acc)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("mount %s: %w", spec.name, err)
		}
		mounts = append(mounts, mount.Mount{Name: spec.name, Store: s, ReadOnly: spec.readOnly})
	}
	table, err := mount.New(mounts)
	if err != nil {
		closeAll()
		return nil, usageErrorf("--mount: %s", reason(err))
	}
	return table, nil
}

// checkOverlap refuses specs when the stores of two of them overlap: one
// place, or one inside the other (docs/spec.md "--mount"), as their URLs
// name them (storeurl.PlaceOf): nothing is opened. A write through one
// would change the files the other lists and counts, past its limits and
// its read-only flag. A URL whose place cannot be read is left out here:
// opening it reports what is wrong with it.
func (a *app) checkOverlap(specs []mountSpec) error {
	places := make([][]storeurl.Place, len(specs))
	for i, spec := range specs {
		places[i] = a.places(spec.url)
	}
	for i := range specs {
		for j := i + 1; j < len(specs); j++ {
			if specs[i].name == specs[j].name {
				continue // mount.New refuses the name
			}
			for _, p := range places[i] {
				for _, q := range places[j] {
					if p.Overlaps(q) {
						return overlapError(specs[i].name, specs[j].name, p, q)
					}
				}
			}
		}
	}
	return nil
}

// overlapError is the error of checkOverlap for the mounts first (given
// first) and later, whose places p and q overlap.
func overlapError(first, later string, p, q storeurl.Place) error {
	const advice = "a write through one would change the files of the other; give each a directory or prefix of its own"
	switch {
	case p == q:
		return fmt.Errorf("mounts %q and %q are one store: %s", first, later, advice)
	case len(p.Prefix) < len(q.Prefix): // q lies beneath p
		return fmt.Errorf("mount %q lies inside mount %q: %s", later, first, advice)
	default:
		return fmt.Errorf("mount %q lies inside mount %q: %s", first, later, advice)
	}
}

// places returns the places of the store raw names (a --mount URL): one,
// or one per mount for a config store with a mount table, or none when raw
// cannot be read (or names a store that overlaps nothing, as mem:// does).
func (a *app) places(raw string) []storeurl.Place {
	urls := []string{raw}
	if config.IsName(raw) {
		st, err := a.namedStore(raw)
		if err != nil {
			return nil
		}
		urls = []string{st.URL}
		if st.URL == "" {
			urls = urls[:0]
			for _, m := range st.Mounts {
				urls = append(urls, m.URL)
			}
		}
	}
	var out []storeurl.Place
	for _, u := range urls {
		if checkBarePath(u) != nil {
			continue
		}
		if p, err := storeurl.PlaceOf(u); err == nil && !p.IsZero() {
			out = append(out, p)
		}
	}
	return out
}

// reason is why package mount refused a table: a *mount.TableError's
// Reason, else the error's text.
func reason(err error) string {
	if te, ok := errors.AsType[*mount.TableError](err); ok {
		return te.Reason
	}
	return err.Error()
}
