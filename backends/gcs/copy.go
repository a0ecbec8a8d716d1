package gcs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"cloud.google.com/go/storage"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/objmeta"
)

var _ blob.Copier = (*store)(nil)

// copyProbe remembers whether the server enforces the conditions of a
// rewrite: real GCS does; fake-gcs-server (v1.56.1) ignores both the
// create-only and the source generation condition there, so a copy on the
// server could overwrite a key or copy a newer generation. The zero value
// has not looked yet; it is safe for concurrent use.
type copyProbe struct {
	mu       sync.Mutex
	known    bool
	honoured bool
}

// probeKey is the name, under the reserved directory, of the object the
// probe writes, copies and deletes; a random suffix keeps probes apart.
const probeKey = blob.ReservedName + "/probe-copy-"

// conditionalCopy reports whether the server refuses a rewrite onto an
// existing object with ifGenerationMatch=0 and one whose source fails
// ifSourceGenerationMatch, finding out once per store with four requests
// (a write, two refused rewrites, a delete), plus a delete for each
// rewrite the server wrongly made. A failed probe is not remembered.
func (s *store) conditionalCopy(ctx context.Context) (bool, error) {
	p := &s.copyMode
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known {
		return p.honoured, nil
	}
	id := objmeta.NewWriteID()
	probe := s.bucket.Object(s.dir + probeKey + id)
	other := s.bucket.Object(s.dir + probeKey + id + "-copy")
	attrs, err := write(ctx, probe.If(storage.Conditions{DoesNotExist: true}), []byte("cloudmem probe: safe to delete\n"), id)
	if err != nil {
		return false, fmt.Errorf("gcs: probing rewrites: %w", mapErr(probeKey, err))
	}
	cleanup := context.WithoutCancel(ctx)
	defer func() { _ = probe.Delete(cleanup) }()
	_, err1 := probe.If(storage.Conditions{DoesNotExist: true}).CopierFrom(probe).Run(ctx)
	_, err2 := other.CopierFrom(probe.If(storage.Conditions{GenerationMatch: attrs.Generation + 1})).Run(ctx)
	if err2 == nil {
		_ = other.Delete(cleanup)
	}
	for _, err := range []error{err1, err2} {
		if err != nil && !isPrecondition(err) {
			return false, fmt.Errorf("gcs: probing rewrites: %w", mapErr(probeKey, err))
		}
	}
	p.known, p.honoured = true, err1 != nil && err2 != nil
	return p.honoured, nil
}

// Copy implements blob.Copier, on a server that enforces the conditions of
// a rewrite (see copyProbe), with one rewrite request: the source pinned
// with ifSourceGenerationMatch (the generation srcVersion names), the
// destination created only when absent (ifGenerationMatch=0), and a fresh
// write id in the copy's metadata, so that the copy has a generation and a
// write id of its own. The server checks both conditions. The library
// retries the request on transient errors; a retry whose first attempt
// landed fails the create-only condition against our own copy, which the
// write id recognises, as for Put. On a server that does not enforce them
// it returns errors.ErrUnsupported, and blob.Copy reads and writes instead.
//
// The store has no blob.BatchDeleter: blob.DeleteBatch's fallback, one
// Delete request each, up to blob.DeleteParallel at once, serves batches.
func (s *store) Copy(ctx context.Context, src, dst, srcVersion string) (blob.Info, error) {
	from, err := s.object(ctx, src)
	if err != nil {
		return blob.Info{}, err
	}
	to, err := s.object(ctx, dst)
	if err != nil {
		return blob.Info{}, err
	}
	if ok, err := s.conditionalCopy(ctx); err != nil || !ok {
		return blob.Info{}, errors.Join(errors.ErrUnsupported, err)
	}
	gen, ok := parseVersion(srcVersion)
	if !ok {
		return blob.Info{}, fmt.Errorf("gcs: %q: %w: %q is no version of this store", src, blob.ErrPrecondition, srcVersion)
	}
	id := objmeta.NewWriteID()
	c := to.If(storage.Conditions{DoesNotExist: true}).CopierFrom(from.If(storage.Conditions{GenerationMatch: gen}))
	c.Metadata = map[string]string{metaWriteID: id}
	attrs, err := c.Run(ctx)
	if err == nil {
		return newInfo(dst, attrs), nil
	}
	if !isPrecondition(err) {
		return blob.Info{}, fmt.Errorf("gcs: copying to %q: %w", dst, mapErr(src, err))
	}
	if cur, aerr := to.Attrs(ctx); aerr == nil && cur.Metadata[metaWriteID] == id {
		return newInfo(dst, cur), nil
	}
	return blob.Info{}, fmt.Errorf("gcs: copying %q to %q: %w", src, dst, mapErr(src, err))
}
