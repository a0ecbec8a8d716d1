package blob

// KeyBudgeter is implemented by stores that hold keys shorter than
// MaxKeyLen, because they add bytes of their own to every key: a store
// returned by Prefix adds the prefix and a '/'. KeyBudget is the longest key,
// in bytes, that the store accepts; a longer one is refused with
// ErrInvalidKey before any call reaches storage.
//
// The memory handler consults it (through KeyBytes) so that a path valid
// by the contract but too long for the store is refused as "too long"
// before any storage call, rather than failing in the store. Wrappers that
// leave keys as they are forward it: Prefix, ReadOnly and Counter do.
type KeyBudgeter interface {
	KeyBudget() int
}

// KeyBytes returns the longest key s accepts: its KeyBudget when it
// implements KeyBudgeter (never more than MaxKeyLen, never below 0), and
// MaxKeyLen otherwise.
func KeyBytes(s Store) int {
	if b, ok := s.(KeyBudgeter); ok {
		return min(max(b.KeyBudget(), 0), MaxKeyLen)
	}
	return MaxKeyLen
}

var (
	_ KeyBudgeter = (*prefixStore)(nil)
	_ KeyBudgeter = readOnlyStore{}
	_ KeyBudgeter = (*Counter)(nil)
)

// KeyBudget is what the inner store accepts, less the prefix and its '/'.
func (p *prefixStore) KeyBudget() int { return KeyBytes(p.inner) - len(p.dir) }

// KeyBudget is the inner store's.
func (r readOnlyStore) KeyBudget() int { return KeyBytes(r.inner) }

// KeyBudget is the inner store's.
func (c *Counter) KeyBudget() int { return KeyBytes(c.inner) }
