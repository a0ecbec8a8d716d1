package blob

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// The preambles of a Store's methods: what each must check before it
// reaches storage, in one place, so that every backend refuses the same
// calls with the same errors and sends no request for them.

// CheckCall returns the error a Get, Stat or Put of key must return before
// it reaches storage: ctx's error once ctx is done, or CheckKey's.
func CheckCall(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return CheckKey(key)
}

// CheckDelete returns the error a Delete of key under c must return before
// it reaches storage: CheckCall's, c.Validate's, or, for IfAbsent, which a
// Delete can never meet, an error wrapping ErrPrecondition (see
// Store.Delete). A backend's Delete calls it first, so it handles IfVersion
// and the zero Cond only.
func CheckDelete(ctx context.Context, key string, c Cond) error {
	if err := CheckCall(ctx, key); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if c.IfAbsent {
		return fmt.Errorf("blob: Delete %q: %w: IfAbsent can only fail", key, ErrPrecondition)
	}
	return nil
}

// CheckList returns the error a List with ctx and prefix must yield before
// it reaches storage: ctx's error once ctx is done, or CheckPrefix's. It is
// the one preamble of every backend's List.
func CheckList(ctx context.Context, prefix string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return CheckPrefix(prefix)
}

// YieldSorted is the end of a List that collects its Infos before it yields
// them: it sorts infos by key, in place, and yields each, stopping when
// yield returns false, or with ctx's error once ctx is done.
func YieldSorted(ctx context.Context, infos []Info, yield func(Info, error) bool) {
	slices.SortFunc(infos, func(a, b Info) int { return strings.Compare(a.Key, b.Key) })
	for _, info := range infos {
		if err := ctx.Err(); err != nil {
			yield(Info{}, err)
			return
		}
		if !yield(info, nil) {
			return
		}
	}
}

// CheckedList is the one preamble of every backend's List: it returns a
// listing that yields CheckList's error alone when there is one, and
// otherwise what list yields.
func CheckedList(ctx context.Context, prefix string, list iter.Seq2[Info, error]) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		if err := CheckList(ctx, prefix); err != nil {
			yield(Info{}, err)
			return
		}
		list(yield)
	}
}
