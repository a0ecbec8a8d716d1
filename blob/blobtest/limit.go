package blobtest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// limitTests check Get's limit: an object of exactly limit bytes is read,
// one byte more is refused with a *blob.TooLargeError that names the key
// and the limit (and the size, when the store reports it), and a limit that
// is not positive is refused before anything is read.
var limitTests = []test{
	{"GetLimit", testGetLimit},
	{"GetInvalidLimit", testGetInvalidLimit},
}

// limitSize is over one 64 KiB chunk, so that framed or chunked stores
// (the encryption layer) are checked across a chunk boundary.
const limitSize = 70_000

func testGetLimit(t *testing.T, s blob.Store) {
	data := bytes.Repeat([]byte("0123456789"), limitSize/10)
	put(t, s, "big", data)
	for _, limit := range []int64{limitSize, limitSize + 1, blob.MaxObjectBytes} {
		got, info, err := s.Get(t.Context(), "big", limit)
		if err != nil {
			t.Fatalf("Get with limit %d of a %d-byte object: %v", limit, limitSize, err)
		}
		if !bytes.Equal(got, data) || info.Size != limitSize {
			t.Fatalf("Get with limit %d: %d bytes, Info.Size %d; want %d", limit, len(got), info.Size, limitSize)
		}
	}
	for _, limit := range []int64{limitSize - 1, limitSize / 2, 1} {
		wantTooLarge(t, s, "big", limitSize, limit)
	}
	put(t, s, "empty", nil)
	if got, _, err := s.Get(t.Context(), "empty", 1); err != nil || len(got) != 0 {
		t.Fatalf("Get with limit 1 of an empty object = %q, %v; want no data", got, err)
	}
}

// wantTooLarge checks that Get(key, limit) of an object of size bytes fails
// with a *blob.TooLargeError for key and limit.
func wantTooLarge(t *testing.T, s blob.Store, key string, size, limit int64) {
	t.Helper()
	got, _, err := s.Get(t.Context(), key, limit)
	if !errors.Is(err, blob.ErrTooLarge) {
		t.Fatalf("Get(%q) with limit %d of a %d-byte object = %d bytes, %v; want ErrTooLarge", key, limit, size, len(got), err)
	}
	tl, ok := errors.AsType[*blob.TooLargeError](err)
	if !ok {
		t.Fatalf("Get(%q) with limit %d: %v is not a *blob.TooLargeError", key, limit, err)
	}
	if tl.Key != key || tl.Limit != limit || tl.Size != size && tl.Size != -1 {
		t.Fatalf("Get(%q) with limit %d: TooLargeError{Key: %q, Size: %d, Limit: %d}; want key %q, size %d (or -1), limit %d",
			key, limit, tl.Key, tl.Size, tl.Limit, key, size, limit)
	}
	if got != nil {
		t.Fatalf("Get(%q) with limit %d returned %d bytes with its error", key, limit, len(got))
	}
}

func testGetInvalidLimit(t *testing.T, s blob.Store) {
	put(t, s, "k", []byte("data"))
	for _, limit := range []int64{0, -1} {
		got, _, err := s.Get(t.Context(), "k", limit)
		if !errors.Is(err, blob.ErrInvalidLimit) || got != nil {
			t.Fatalf("Get with limit %d = %q, %v; want ErrInvalidLimit", limit, got, err)
		}
	}
}
