package crypt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/blob"
)

// rekeyAttempts bounds how often Rekey re-reads one object that other
// writers keep changing under it.
const rekeyAttempts = 10

// ErrBusy means Rekey gave up on an object because its version changed
// rekeyAttempts times in a row while Rekey tried to replace it.
var ErrBusy = errors.New("crypt: rekey: the object kept changing")

// Rekey re-encrypts every object of store to the recipients of to. store is
// the inner store, the one a crypt store wraps (not the crypt store itself).
// Objects are read with the identities of from and of to together, so from
// needs identities and to needs recipients; to's identities are optional.
// progress, when not nil, is called with (0, total) once the objects are
// listed and with (done, total) after each one.
//
// First the integrity key object is re-encrypted (its secret is kept, so
// existing MACs stay valid), then every other object. Each object is
// replaced with Put(IfVersion): a writer that changes it meanwhile is never
// overwritten; Rekey re-reads the object and tries again. Objects already
// encrypted to to's recipient set (the frame records the set) are skipped,
// so Rekey can be run again after an interruption and only finishes the
// job. Objects deleted meanwhile are skipped.
//
// An object that fails to decrypt or verify (an *Error), or that keeps
// changing (ErrBusy), is left as it is and reported in the returned error,
// joined with the others, after every other object was rekeyed. Any other
// failure (the store, ctx) stops Rekey at once; what was done stays done.
//
// Writers that still use from's recipients while Rekey runs may write
// objects behind it; stop them, or run Rekey again once they use to's.
func Rekey(ctx context.Context, store blob.Store, from, to Config, progress func(done, total int)) error {
	if store == nil {
		return errors.New("crypt: rekey: nil store")
	}
	if _, err := from.compile(false, true); err != nil {
		return fmt.Errorf("crypt: rekey: from: %w", err)
	}
	toKeys, err := to.compile(true, false)
	if err != nil {
		return fmt.Errorf("crypt: rekey: to: %w", err)
	}
	r := &rekeyer{
		store: store,
		ids:   slices.Concat(from.Identities, to.Identities),
		to:    toKeys,
		pin:   cmp.Or(from.KeyFingerprint, to.KeyFingerprint),
	}
	if from.KeyFingerprint != "" && to.KeyFingerprint != "" && from.KeyFingerprint != to.KeyFingerprint {
		return errors.New("crypt: rekey: from and to pin different key fingerprints; the integrity key stays the same across a rekey")
	}

	found, err := r.rekeyKeyObject(ctx)
	if err != nil {
		return err
	}
	var keys []string
	for info, err := range store.List(ctx, "") {
		if err != nil {
			return fmt.Errorf("crypt: rekey: listing: %w", err)
		}
		if info.Key != keyObject {
			keys = append(keys, info.Key)
		}
	}
	if !found && len(keys) > 0 {
		return corrupt(keyObject, "the store holds objects but its integrity key object is missing", nil)
	}
	report := func(done int) {
		if progress != nil {
			progress(done, len(keys))
		}
	}
	report(0)
	var failed []error
	for i, key := range keys {
		err := r.rekeyObject(ctx, key)
		var cerr *Error
		switch {
		case errors.As(err, &cerr) || errors.Is(err, ErrBusy):
			failed = append(failed, err)
		case err != nil:
			return fmt.Errorf("crypt: rekey: %q: %w", key, err)
		}
		report(i + 1)
	}
	if len(failed) > 0 {
		return fmt.Errorf("crypt: rekey: %d of %d objects were left as they were: %w", len(failed), len(keys), errors.Join(failed...))
	}
	return nil
}

type rekeyer struct {
	store  blob.Store
	ids    []age.Identity
	to     *keyring
	pin    string // the pinned fingerprint, from from or to
	macKey []byte // set by rekeyKeyObject
}

// rekeyKeyObject re-encrypts the integrity key object to the new
// recipients and sets r.macKey. It trusts the key object as a store does
// (a voucher of one of the identities, or the pinned fingerprint), and adds
// the vouchers of the identities it holds that lack one, so that after a
// rotation the new identity (when given in to) trusts the store without a
// pin. found is false when the store has none.
func (r *rekeyer) rekeyKeyObject(ctx context.Context) (found bool, err error) {
	for range rekeyAttempts {
		k, f, info, found, err := readKeyObj(ctx, r.store, r.ids)
		if err != nil || !found {
			return false, err
		}
		if err := trust(k, r.ids, r.pin); err != nil {
			return false, err
		}
		if r.macKey, err = macKeyFor(k.secret); err != nil {
			return false, err
		}
		if vouched := k.vouch(r.ids); f.keySet == r.to.keySet && !vouched {
			return true, nil
		}
		ct, err := seal(r.to, r.macKey, keyObject, k.bytes())
		if err != nil {
			return false, err
		}
		_, err = r.store.Put(ctx, keyObject, ct.data, blob.Cond{IfVersion: info.Version})
		if !errors.Is(err, blob.ErrPrecondition) {
			if err != nil {
				return false, fmt.Errorf("crypt: rekey: writing the integrity key object: %w", err)
			}
			return true, nil
		}
	}
	return false, fmt.Errorf("%w: %q", ErrBusy, keyObject)
}

// rekeyObject re-encrypts one object, unless it is gone or already
// encrypted to the new recipients.
func (r *rekeyer) rekeyObject(ctx context.Context, key string) error {
	for range rekeyAttempts {
		data, info, err := r.store.Get(ctx, key, blob.MaxObjectBytes)
		if errors.Is(err, blob.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		f, err := decrypt(r.ids, nil, key, data)
		if err != nil {
			return err
		}
		if err := f.verify(r.macKey, key); err != nil {
			return err
		}
		if f.keySet == r.to.keySet {
			return nil
		}
		ct, err := seal(r.to, r.macKey, key, f.content)
		if err != nil {
			return err
		}
		_, err = r.store.Put(ctx, key, ct.data, blob.Cond{IfVersion: info.Version})
		if !errors.Is(err, blob.ErrPrecondition) {
			return err
		}
	}
	return fmt.Errorf("%w: %q", ErrBusy, key)
}
