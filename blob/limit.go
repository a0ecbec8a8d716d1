package blob

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxObjectBytes is the limit to pass to Get by a caller that must read an
// object whole whatever it holds (the copy fallback of Rename, tools that
// copy or export a store): 1 GiB. An object beyond it is refused with
// ErrTooLarge rather than read into memory. It is a bound, not a promise
// that every store can hold objects this large.
const MaxObjectBytes int64 = 1 << 30

var (
	// ErrTooLarge means Get found an object larger than the caller's limit.
	// The error is a *TooLargeError, which carries the object's size.
	ErrTooLarge = errors.New("blob: object is larger than the read limit")
	// ErrInvalidLimit means Get was called with a limit that is not
	// positive. Nothing was read.
	ErrInvalidLimit = errors.New("blob: read limit is not positive")
)

// TooLargeError is the error of a Get whose object is larger than the
// limit. errors.Is(err, ErrTooLarge) is true for it.
type TooLargeError struct {
	Key   string // the key as the caller named it
	Size  int64  // the object's size in bytes, or -1 when the store only knows it exceeds Limit
	Limit int64  // the caller's limit
}

func (e *TooLargeError) Error() string {
	size := "more than " + strconv.FormatInt(e.Limit, 10)
	if e.Size >= 0 {
		size = strconv.FormatInt(e.Size, 10)
	}
	return fmt.Sprintf("blob: %q: object is %s bytes, over the read limit of %d bytes", e.Key, size, e.Limit)
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// CheckLimit returns nil when limit is a valid Get limit (positive), and
// otherwise an error wrapping ErrInvalidLimit.
func CheckLimit(limit int64) error {
	if limit <= 0 {
		return fmt.Errorf("%w: %d", ErrInvalidLimit, limit)
	}
	return nil
}

// CheckSize returns a *TooLargeError when an object of size bytes (size < 0:
// unknown) is over limit, and nil otherwise. Backends call it with the size
// the server reports before reading the data.
func CheckSize(key string, size, limit int64) error {
	if size > limit {
		return &TooLargeError{Key: key, Size: size, Limit: limit}
	}
	return nil
}

// ReadLimited reads r to its end, but never more than limit+1 bytes: a
// longer stream yields a *TooLargeError (with Size -1, or size when the
// caller knows it, i.e. size >= 0). A read error is returned as it is, for
// the caller to wrap. size, when known, only sizes the buffer.
func ReadLimited(r io.Reader, key string, size, limit int64) ([]byte, error) {
	if err := CheckSize(key, size, limit); err != nil {
		return nil, err
	}
	var buf []byte
	if size >= 0 {
		buf = make([]byte, 0, size+1)
	}
	buf, err := readAllInto(buf, io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(buf)) > limit {
		return nil, &TooLargeError{Key: key, Size: -1, Limit: limit}
	}
	return buf, nil
}

// readAllInto is io.ReadAll appending to buf.
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
