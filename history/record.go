package history

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// Namespace is the key prefix under which the version records live. Keys
// under it are reserved (blob.IsReserved), so the memory handler never
// shows or counts them, and the Store hides them from its own callers.
const Namespace = blob.ReservedName + "/history/"

// recordFormat is the format number written in every record header.
const recordFormat = 1

// fromSep separates a record's id from the hash of the path a rename moved
// the file from, in the record's name: ID ".from." HASH.
const fromSep = ".from."

// idLen is the length of a version id: 11 hex digits of Unix milliseconds
// and 5 of randomness.
const idLen = 16

// header is the JSON line that starts every record object. The content of
// the version (for created, modified and renamed records that are not
// redacted) follows the newline.
type header struct {
	Format       int        `json:"format"`
	ID           string     `json:"id"`
	Op           Op         `json:"op"`
	Path         string     `json:"path"`
	From         string     `json:"from,omitempty"`
	Time         time.Time  `json:"time"`
	Actor        string     `json:"actor"`
	Size         int64      `json:"size"`
	SHA256       string     `json:"sha256,omitempty"`
	RestoredFrom string     `json:"restored_from,omitempty"`
	Policy       string     `json:"policy,omitempty"` // what a write policy did (blob.PolicyAction)
	Prev         string     `json:"prev,omitempty"`   // the store version the change was conditioned on; "" for absent
	Ver          string     `json:"ver,omitempty"`    // the store version the change produced; "" for a deletion
	Redacted     *Redaction `json:"redacted,omitempty"`
}

// record is one stored version record, as read back.
type record struct {
	header
	key     string // the record object's key in the inner store
	version string // the record object's own store version
	content []byte // nil for deletions and redacted versions
}

// hasContent reports whether the record's version has content to show.
func (r *record) hasContent() bool { return r.Op != OpDeleted && r.Redacted == nil }

// pathHash names the record directory of a path.
func pathHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// recordKey is where the record with this id for path lives; from is the
// path a rename moved the file from, or "".
func recordKey(path, id, from string) string {
	k := Namespace + pathHash(path) + "/" + id
	if from != "" {
		k += fromSep + pathHash(from)
	}
	return k
}

// recordName is a record key taken apart.
type recordName struct {
	key      string
	dir      string // hash of the record's path
	id       string
	fromHash string // hash of the path a rename moved from, or ""
}

// parseRecordKey takes a record key apart; ok is false for a key that is
// not a record's.
func parseRecordKey(key string) (recordName, bool) {
	rest, ok := strings.CutPrefix(key, Namespace)
	if !ok {
		return recordName{}, false
	}
	dir, name, ok := strings.Cut(rest, "/")
	if !ok || len(dir) != 32 || len(name) < idLen {
		return recordName{}, false
	}
	n := recordName{key: key, dir: dir, id: name[:idLen]}
	if tail := name[idLen:]; tail != "" {
		h, ok := strings.CutPrefix(tail, fromSep)
		if !ok || len(h) != 32 {
			return recordName{}, false
		}
		n.fromHash = h
	}
	return n, validID(n.id)
}

// newID returns a fresh version id for a record written at now.
func newID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	r := binary.BigEndian.Uint32(b[:]) & 0xfffff
	return fmt.Sprintf("%011x%05x", uint64(now.UnixMilli())&0xfffffffffff, r)
}

// validID reports whether s has the form of a version id.
func validID(s string) bool {
	if len(s) != idLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// encodeRecord returns the stored form of a record: its header, a newline,
// then content.
func encodeRecord(h *header, content []byte) ([]byte, error) {
	line, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("history: encoding a record: %w", err)
	}
	out := make([]byte, 0, len(line)+1+len(content))
	out = append(out, line...)
	out = append(out, '\n')
	return append(out, content...), nil
}

// errCorruptRecord is wrapped by errors about records that do not decode.
var errCorruptRecord = errors.New("history: corrupt version record")

// decodeRecord parses a stored record.
func decodeRecord(data []byte) (header, []byte, error) {
	line, content, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return header{}, nil, fmt.Errorf("%w: no header line", errCorruptRecord)
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return header{}, nil, fmt.Errorf("%w: %w", errCorruptRecord, err)
	}
	if h.Format != recordFormat {
		return header{}, nil, fmt.Errorf("%w: format %d, want %d", errCorruptRecord, h.Format, recordFormat)
	}
	if h.Op == OpDeleted || h.Redacted != nil {
		content = nil
	}
	h.Prev, h.Ver = unquoteVersion(h.Prev), unquoteVersion(h.Ver)
	return h, content, nil
}

// unquoteVersion returns a recorded store version without double quotes.
// The S3 store of earlier releases spelled a version's ETag in the quotes
// of its HTTP form ("0b2d..."#id); it now spells it without them, and no
// store's version holds a quote. Without this, a record written before
// would never equal the store's version of the same object again: the
// file's current version would show as unrecorded and the records would
// lose the order their versions give them.
func unquoteVersion(v string) string { return strings.ReplaceAll(v, `"`, "") }

func sum256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// loadRecord reads and decodes one record object.
func (s *Store) loadRecord(ctx context.Context, key string) (*record, error) {
	data, info, err := s.inner.Get(ctx, key, blob.MaxObjectBytes)
	if err != nil {
		return nil, err
	}
	h, content, err := decodeRecord(data)
	if err != nil {
		return nil, err
	}
	return &record{header: h, key: key, version: info.Version, content: content}, nil
}

// recordNames lists every record name in the store.
func (s *Store) recordNames(ctx context.Context) ([]recordName, error) {
	var out []recordName
	for info, err := range s.inner.List(ctx, Namespace) {
		if err != nil {
			return nil, fmt.Errorf("history: listing the version records: %w", err)
		}
		if n, ok := parseRecordKey(info.Key); ok {
			out = append(out, n)
		}
	}
	return out, nil
}
