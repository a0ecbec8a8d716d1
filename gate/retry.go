package gate

import (
	"context"
	"math/rand/v2"
	"time"
)

// retry runs attempt until it reports that it did not lose a race with
// another writer, at most 1+g.retries times, waiting between attempts as
// pacer.run says: a random time that grows with each lost race and is
// sized by how long the attempts take on this store. After the last lost
// race it returns the ErrConflict refusal about key; a ctx done while
// waiting returns ctx's error.
func (g *Tree) retry(ctx context.Context, key string, attempt func() (lost bool)) error {
	p := pacer{clock: systemClock{}, retries: g.retries}
	landed, err := p.run(ctx, attempt, func(retrying bool) {
		if g.conflict != nil {
			g.conflict(ctx, retrying)
		}
	})
	switch {
	case err != nil:
		return err
	case !landed:
		return refuse(ErrConflict, key)
	}
	return nil
}

// The pacing of retries (see pacer).
const (
	// minSlot and maxSlot bound the slot, the measured time of one attempt.
	// The floor keeps a fast store (memory, a local disk) from retrying in
	// a busy loop; the ceiling keeps one stalled attempt from stretching
	// the window beyond use.
	minSlot = time.Millisecond
	maxSlot = time.Second
	// maxSlots is the widest window, in slots: twice the 64 writers one
	// file is meant to bear at once.
	maxSlots = 128
	// growth is the factor by which the window widens with each lost race:
	// 2, 8, 32, 128 slots, so that a writer among 64 finds the width at
	// which they take turns after 3 lost races, not 6.
	growth = 4
	// maxWait caps one wait, whatever the slot.
	maxWait = 4 * time.Second
	// retryBudget caps the total of one operation's waits. Once it is spent
	// the next conflict is final, and the model is told to try again well
	// within a command timeout (mcpserver's default is 60 s).
	retryBudget = 20 * time.Second
)

// clock is the time source of a pacer: the system's, or a test's.
type clock interface {
	now() time.Time
	// sleep waits for d or until ctx is done, and then returns ctx's
	// error.
	sleep(ctx context.Context, d time.Duration) error
	// jitter returns a uniformly random duration in [0, d].
	jitter(d time.Duration) time.Duration
}

// systemClock is the clock of every Tree.
type systemClock struct{}

func (systemClock) now() time.Time                                   { return time.Now() }
func (systemClock) sleep(ctx context.Context, d time.Duration) error { return sleep(ctx, d) }
func (systemClock) jitter(d time.Duration) time.Duration             { return rand.N(d + 1) }

// pacer paces the attempts of one operation, which lose races to other
// writers of the same file. It waits between them, with exponential backoff
// and full jitter, in units of the slot: the time of the operation's fastest
// failed attempt (for an edit, a read and a refused conditional write).
// That is about how long another writer's read-modify-write holds the file
// on this backend: well under a millisecond on a local disk, a few
// milliseconds on an object store nearby, tens across a wide-area link, so
// the waits fit the backend where fixed milliseconds would be too long for
// one and far too short for another. The fastest attempt, not the mean,
// because the first attempts of writers that start together queue at the
// server and would overstate it (on Azurite, 64 writers' first attempts
// took about a second, their later ones 20-300 ms).
//
// Wait n (0-based) is random in [0, window(n)], whose width grows fourfold
// with each lost race, from 2 slots to maxSlots slots (and maxWait): k
// writers racing for one file spread out over up to 2k slots, and most
// attempts find the file free. Retries and retryBudget bound the attempts
// and the total wait; the store's own locks (blob.Locker, the file store and
// Redis) take turns before any of this, and then no attempt loses a race.
//
// The zero value is not usable: set clock. A pacer is not safe for
// concurrent use; each operation makes its own.
type pacer struct {
	clock   clock
	retries int // attempts after the first; negative means none

	fastest time.Duration // the shortest failed attempt
	failed  int           // how many attempts lost a race
	waited  time.Duration // the total of the waits so far
}

// run calls attempt until it reports no lost race, and then returns
// landed true. After each conflict it calls conflict with whether
// another attempt follows, and waits before it. It gives up, with landed
// false, after 1+retries attempts or once its waits total retryBudget (the
// last wait is cut to what the budget leaves). It returns ctx's error,
// without another attempt, when ctx is done before or during a wait; an
// attempt itself is expected to fail on a done ctx, as storage calls do.
func (p *pacer) run(ctx context.Context, attempt func() (lost bool), conflict func(retrying bool)) (landed bool, err error) {
	for {
		start := p.clock.now()
		if lost := attempt(); !lost {
			return true, nil
		}
		if took := max(p.clock.now().Sub(start), 0); p.failed == 0 || took < p.fastest {
			p.fastest = took
		}
		p.failed++
		d, ok := p.next()
		conflict(ok)
		if !ok {
			return false, nil
		}
		if err := p.clock.sleep(ctx, d); err != nil {
			return false, err
		}
		p.waited += d
	}
}

// next returns the wait before the next attempt, after p.failed lost
// races, and false when no attempt follows.
func (p *pacer) next() (time.Duration, bool) {
	left := retryBudget - p.waited
	if p.failed > p.retries || left <= 0 {
		return 0, false
	}
	return min(p.clock.jitter(window(p.failed-1, p.slot())), left), true
}

// slot is the time of the fastest failed attempt, within [minSlot,
// maxSlot].
func (p *pacer) slot() time.Duration {
	return min(max(p.fastest, minSlot), maxSlot)
}

// window is the widest wait before retry n (0-based): 2·4ⁿ slots, at most
// maxSlots slots and maxWait.
func window(n int, slot time.Duration) time.Duration {
	slots := time.Duration(2)
	for ; n > 0 && slots < maxSlots; n-- {
		slots *= growth
	}
	return min(min(slots, maxSlots)*slot, maxWait)
}

// sleep waits for d or until ctx is done, and then returns ctx's error. A
// ctx already done returns at once, whatever d.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
