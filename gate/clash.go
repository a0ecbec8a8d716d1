package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

// settle makes sure the file key, just written with data as version, did not make
// a name both a file and a directory: another writer may have created a
// file beneath key, or a file at one of its ancestors, between the survey
// and the write. It looks for both (one List of key's directory, up to its
// first memory file, and one Stat per ancestor); if it finds either, it
// withdraws its own write with a Delete conditional on version and asks
// for a retry, whose survey then finds the other name and reports it.
//
// Two writers that race this way cannot both keep their names: each writes
// before it looks, so the later of the two looks finds the other's write.
// Both may withdraw; then the retry decides (at most Options.Retries times).
// This holds on stores whose listing shows every key written before it. On
// a store whose listing hides keys under an object (blob.Traits.HidesUnderObjects: MinIO),
// the file's look beneath itself would find nothing, so settleHidden runs
// instead.
func (g *Tree) settle(ctx context.Context, key string, data []byte, version string) (string, bool, error) {
	traits := blob.TraitsOf(g.store)
	if traits.ExclusiveNames {
		return version, false, nil // the store refused the write that would clash
	}
	if traits.HidesUnderObjects {
		return g.settleHidden(ctx, key, data, version)
	}
	clash, err := g.clashes(ctx, key)
	if err == nil && !clash {
		return version, false, nil
	}
	return g.retract(ctx, key, version, err)
}

// retract deletes the file key, written with version, because it made (or
// may have made) a name both a file and a directory, and asks for a retry;
// cause is the error that kept the check from finishing, or nil. On a store
// whose listing hides keys under objects it first writes key's witness (see
// settleHidden). It withdraws even when ctx is done: a name must not stay
// both.
func (g *Tree) retract(ctx context.Context, key, version string, cause error) (string, bool, error) {
	if err := errors.Join(cause, g.withdraw(ctx, key, version)); err != nil {
		return "", false, err
	}
	return "", true, nil
}

// markWithdrawal is rule 2 of settleHidden, for every create that deletes
// the file it just wrote (retract, and undoCreate when the file count
// fails): on a store whose listing hides keys under objects it writes
// key's witness, before the Delete. Elsewhere it does nothing.
func (g *Tree) markWithdrawal(ctx context.Context, key string) error {
	if !blob.ListHidesUnderObjects(g.store) {
		return nil
	}
	_, err := g.touch(ctx, withdrawn, key)
	return err
}

// clashes reports whether a memory file lies beneath key or a file is at
// one of key's ancestors.
func (g *Tree) clashes(ctx context.Context, key string) (bool, error) {
	return g.anyClash(ctx, key, nil)
}

// anyClash is clashes with, before the Stat of each ancestor A, a call of
// before(A) when it is not nil. Every look is made at once: one List and
// one Stat per ancestor, each after its before. A clash found is reported
// even when another look failed.
func (g *Tree) anyClash(ctx context.Context, key string, before func(ancestor string) error) (bool, error) {
	anc := ancestors(key)
	found := make([]bool, len(anc)+1)
	err := parallel(ctx, len(anc)+1, false, func(i int) error {
		if i == len(anc) {
			dir, err := g.isDir(ctx, key)
			found[i] = dir
			return err
		}
		if before != nil {
			if err := before(anc[i]); err != nil {
				return err
			}
		}
		_, err := g.store.Stat(ctx, anc[i])
		found[i] = err == nil
		if err == nil || errors.Is(err, blob.ErrNotExist) {
			return nil
		}
		return err
	})
	if slices.Contains(found, true) {
		return true, nil
	}
	return false, err
}

// witnessRoot is the reserved directory of the witnesses that creates
// write on a store whose listing hides keys under objects
// (blob.Traits.HidesUnderObjects): a small object per name that was made a
// directory, and one per name whose file a create withdrew, at the root of
// the store (of each mount, on a mount table), outside every memory
// directory, so that no delete or rename of a directory removes one.
// Nothing deletes a witness; a stale one only makes creates of its name
// look harder. No other store holds any (IsBookkeeping).
const witnessRoot = blob.ReservedName + "/names"

// witnessDir is witnessRoot as a key prefix.
const witnessDir = witnessRoot + "/"

// isWitness reports whether key is a witness (see witnessRoot), at the
// root or in a mount.
func isWitness(key string) bool {
	if strings.HasPrefix(key, witnessDir) {
		return true
	}
	_, rest, ok := strings.Cut(key, "/")
	return ok && strings.HasPrefix(rest, witnessDir)
}

// IsBookkeeping reports whether key is an object that a Tree keeps in
// its store for the tree's rules: a file count (at the root of the store,
// or of a mount) or a witness of a name. Such keys are reserved
// (blob.IsReserved), so no memory path reaches them; this is for tools and
// tests that read a store's raw keys and must tell the Tree's own
// objects from the other layers' (an encryption key, history records).
func IsBookkeeping(key string) bool {
	return key == fileCountKey || strings.HasSuffix(key, "/"+fileCountKey) || isWitness(key)
}

// The two witnesses of a name (see settleHidden).
const (
	beneath   = "d-" // W↓: a create made a file beneath the name
	withdrawn = "w-" // W×: a create withdrew its file at the name
)

// witness returns the key of name's witness of kind (beneath or
// withdrawn): witnessDir, kind and a hash of name (two names that share a
// witness only make their creates look more often). On a mount table it
// lies in name's own mount.
func (g *Tree) witness(kind, name string) string {
	sum := sha256.Sum256([]byte(name))
	w := witnessDir + kind + hex.EncodeToString(sum[:16])
	if blob.Mounts(g.store) != nil {
		mount, _, _ := strings.Cut(name, "/")
		w = mount + "/" + w
	}
	return w
}

// touch writes name's witness of kind and returns the version it wrote:
// every write gives it a version it never had.
func (g *Tree) touch(ctx context.Context, kind, name string) (string, error) {
	info, err := g.store.Put(ctx, g.witness(kind, name), []byte(name), blob.Cond{})
	if err != nil {
		return "", fmt.Errorf("gate: writing the witness of %q: %w", name, err)
	}
	return info.Version, nil
}

// witnessed returns the version of name's witness of kind, or "" when
// there is none.
func (g *Tree) witnessed(ctx context.Context, kind, name string) (string, error) {
	info, err := g.store.Stat(ctx, g.witness(kind, name))
	switch {
	case errors.Is(err, blob.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("gate: reading the witness of %q: %w", name, err)
	}
	return info.Version, nil
}

// ancestors returns the keys of key's ancestors, top first ("a", "a/b" for
// "a/b/c").
func ancestors(key string) []string {
	var out []string
	for i := range len(key) {
		if key[i] == '/' {
			out = append(out, key[:i])
		}
	}
	return out
}

// settleHidden is settle on a store whose listing hides keys under an
// object (MinIO): there, while the file key exists, no listing shows the
// file key/b that a rival wrote at the same moment, though Stat finds it.
// Each name N has two witnesses, reserved objects outside the memory tree
// (see witness): W↓(N), written by creates beneath N, and W×(N), written by
// creates that withdraw their file N. Every create follows three rules:
//
//  1. After its Put of key and before it looks, it writes W↓(A) for every
//     ancestor A of key, then Stats each A (clashes), as settle does.
//  2. Whoever withdraws a file N writes W×(N) before its Delete.
//  3. It keeps key only if W↓(key) does not exist after those looks (the
//     fast path), or else if the recheck succeeds: it reads W↓(key) (the
//     version d), withdraws key (rule 2), Stats W×(A) for every ancestor
//     A, Stats key and every ancestor (none may exist), lists key's
//     directory (it must hold no memory file), Stats key and every
//     ancestor again (none may exist), and every W×(A) and W×(key) again
//     (each unchanged since its first Stat, W×(key) since its own write);
//     then it writes key again with Put(IfAbsent), follows rule 1, and
//     keeps key if W↓(key) is still d. A failed condition withdraws its
//     write and retries the operation.
//
// Why a file F at key and a create D of a file under it cannot both keep
// their names: per key, Put and Stat are linearizable, every write of a key
// gives it a version it never had, and a witness is never deleted. If D's
// Stat of key came after F's last Put, it found F's file (F keeps it) and
// D withdrew. So D's Stat of key came first, and D wrote W↓(key) before it
// (rule 1), hence before F's last Stat of W↓(key). On the fast path F found
// no W↓(key): contradiction. On the recheck, W↓(key) was still d, so D
// wrote it before F read d, and D's file came before that: it existed when
// F listed key's directory. That listing missed it only if an object at key
// or at an ancestor hid it; none existed at F's Stats before and after the
// listing, so one was written and deleted in between, by a create that
// withdrew it (a create that kept a file over D's would be an earlier pair
// that both kept, so take F and D as the first). That create wrote W× of
// its name in between (rule 2), and F's Stats of the W× around the listing
// saw the change: contradiction. A file at an ancestor of D's key is the
// same argument one level up. Creates of siblings write W↓ of their parent,
// never W×, so they do not disturb a recheck.
//
// A create that dies, or whose storage fails, between its Put and the end
// of its look can leave both, as on every store; it never reports success.
// MinIO ignores If-Match on DeleteObject, so the withdrawal's Delete is a
// Stat and then a Delete: an edit of the new file that lands between the
// two is deleted with it. Stale witnesses are harmless: a W↓ that exists
// only sends creates of that name to the recheck. Other writers of names
// (rename's destination) do not follow the rules, so a rename racing a
// create is not covered.
func (g *Tree) settleHidden(ctx context.Context, key string, data []byte, version string) (string, bool, error) {
	d, done, retry, err := g.look(ctx, key, version)
	switch {
	case done:
		return "", retry, err
	case d == "":
		return version, false, nil
	}
	// W↓(key) exists: a file may have been made beneath key, which no
	// listing shows while key exists. Withdraw, look with key absent, and
	// write key again.
	wctx := context.WithoutCancel(ctx)
	mine, err := g.touch(wctx, withdrawn, key)
	if derr := g.store.Delete(wctx, key, blob.Cond{IfVersion: version}); derr != nil &&
		!errors.Is(derr, blob.ErrNotExist) && !errors.Is(derr, blob.ErrPrecondition) {
		err = errors.Join(err, fmt.Errorf("gate: withdrawing %q to look beneath it: %w", key, derr))
	}
	if err != nil {
		return "", false, err
	}
	if ok, err := g.recheck(ctx, key, mine); err != nil || !ok {
		return "", err == nil, err
	}
	put, err := g.store.Put(ctx, key, data, blob.Cond{IfAbsent: true})
	switch {
	case errors.Is(err, blob.ErrPrecondition):
		return "", true, nil // the next survey tells who holds key now
	case err != nil:
		return "", false, err
	}
	now, done, retry, err := g.look(ctx, key, put.Version)
	switch {
	case done:
		return "", retry, err
	case now != d:
		return g.retract(ctx, key, put.Version, nil)
	}
	return put.Version, false, nil
}

// look is rule 1 of settleHidden: it writes W↓ of every ancestor of key,
// then checks for a clash. done is false when there is none; otherwise key
// (written with version) is withdrawn and retry, err are settle's answer.
//
// It also returns d, the version of W↓(key) (rule 3), read at the same
// time: that Stat need only follow the Put of key.
func (g *Tree) look(ctx context.Context, key, version string) (d string, done, retry bool, err error) {
	var (
		clash bool
		dErr  error
	)
	concurrently(
		func() {
			clash, err = g.anyClash(ctx, key, func(a string) error {
				_, err := g.touch(ctx, beneath, a)
				return err
			})
		},
		func() { d, dErr = g.witnessed(ctx, beneath, key) },
	)
	if err = errors.Join(err, dErr); err != nil || clash {
		_, retry, err = g.retract(ctx, key, version, err)
		return "", true, retry, err
	}
	return d, false, false, nil
}

// recheck is the look of settleHidden's rule 3, made while key is absent
// and W×(key) is mine: it reports whether key's directory holds no memory
// file and no object at key or an ancestor could have hidden one from the
// listing.
func (g *Tree) recheck(ctx context.Context, key, mine string) (bool, error) {
	anc := ancestors(key)
	before := make([]string, len(anc))
	for i, a := range anc {
		v, err := g.witnessed(ctx, withdrawn, a)
		if err != nil {
			return false, err
		}
		before[i] = v
	}
	names := append(anc, key) // anc is not used after this
	absent := func() (bool, error) {
		for _, n := range names {
			_, err := g.store.Stat(ctx, n)
			switch {
			case err == nil:
				return false, nil
			case !errors.Is(err, blob.ErrNotExist):
				return false, err
			}
		}
		return true, nil
	}
	if ok, err := absent(); err != nil || !ok {
		return false, err
	}
	if dir, err := g.isDir(ctx, key); err != nil || dir {
		return false, err
	}
	if ok, err := absent(); err != nil || !ok {
		return false, err
	}
	for i, a := range names[:len(before)] {
		v, err := g.witnessed(ctx, withdrawn, a)
		if err != nil || v != before[i] {
			return false, err
		}
	}
	v, err := g.witnessed(ctx, withdrawn, key)
	return err == nil && v == mine, err
}
