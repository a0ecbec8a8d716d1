package redis

import (
	"fmt"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

// DefaultPrefix is the store name used when Options.Prefix is empty.
const DefaultPrefix = "cloudmem"

// keys names the Redis keys of one store. Every name has the form
//
//	cm:{PREFIX}:KIND
//
// where PREFIX is the store's prefix, which contains neither '{' nor '}', and
// KIND is one of
//
//	o:KEY    the object with blob key KEY (a hash: d data, v version, s size, m mtime)
//	idx      the index: a sorted set of every blob key, all scores 0
//	seq      the version counter, INCR'd on every write
//	w:ID     the outcome of the write with id ID, kept briefly so that a
//	         client's retry of that write is answered, not re-run
//	l:KEY    the lock on blob key KEY (a string: its holder's token, with
//	         an expiry), while someone holds it, and l:KEY\xffwake the
//	         list that wakes its waiters (see Lock)
//
// Because PREFIX contains no '}', the first '}' of a name ends it, so the
// prefix can be read back from any name: two different prefixes never
// produce the same name. The KINDs are told apart by what follows the
// "}:" ("o:", "idx", "seq", "w:", "l:"), so no two kinds collide either. And since
// Redis Cluster hashes only the text between the first '{' and the next
// '}', every key of one store hashes to the same slot, which makes the
// multi-key Lua scripts legal on a cluster.
type keys struct {
	obj   string // "cm:{PREFIX}:o:", the object names' common start
	idx   string
	seq   string
	write string // "cm:{PREFIX}:w:"
	lock  string // "cm:{PREFIX}:l:", the lock names' common start
}

func newKeys(prefix string) keys {
	base := "cm:{" + prefix + "}:"
	return keys{obj: base + "o:", idx: base + "idx", seq: base + "seq", write: base + "w:", lock: base + "l:"}
}

func (k keys) object(key string) string { return k.obj + key }

func (k keys) writeMark(id string) string { return k.write + id }

func (k keys) lockName(key string) string { return k.lock + key }

// checkPrefix normalises and validates a store prefix: "" becomes
// DefaultPrefix; surrounding '/' are dropped (as blob.Prefix does, so that
// "agents/a1/" and "agents/a1" name the same store); what remains must be a
// valid blob key (see package blob) without '{' or '}'.
func checkPrefix(prefix string) (string, error) {
	p := strings.Trim(prefix, "/")
	if p == "" {
		if prefix != "" {
			return "", fmt.Errorf("redis: prefix %q: %w: nothing but '/'", prefix, blob.ErrInvalidKey)
		}
		return DefaultPrefix, nil
	}
	if err := blob.CheckKey(p); err != nil {
		return "", fmt.Errorf("redis: prefix %q: %w", prefix, err)
	}
	if strings.ContainsAny(p, "{}") {
		return "", fmt.Errorf("redis: prefix %q: %w: '{' and '}' are reserved for the cluster hash tag", prefix, blob.ErrInvalidKey)
	}
	return p, nil
}

// lexRange returns the ZRANGEBYLEX bounds of every index member that starts
// with prefix: "[prefix" inclusive to "(prefix\xff" exclusive. No valid key
// contains the byte 0xFF (it never occurs in UTF-8), so every member that
// starts with prefix sorts below prefix+"\xff" and nothing else lies in
// between. The empty prefix spans the whole index.
func lexRange(prefix string) (lo, hi string) {
	if prefix == "" {
		return "-", "+"
	}
	return "[" + prefix, "(" + prefix + "\xff"
}
