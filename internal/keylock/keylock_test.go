package keylock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/internal/keylock"
)

// One holder of a name at a time: 16 goroutines, released at once, each
// add one to a counter they read and write in two steps under the lock;
// none of the additions is lost, and every lock is dropped at the end.
func TestExcludes(t *testing.T) {
	var (
		k       keylock.Locks
		n, most int
		holding atomic.Int32
		start   = make(chan struct{})
		wg      sync.WaitGroup
	)
	const workers, rounds = 16, 50
	for range workers {
		wg.Go(func() {
			<-start
			for range rounds {
				unlock, err := k.Lock(t.Context(), "a")
				if err != nil {
					t.Error(err)
					return
				}
				if h := int(holding.Add(1)); h > most {
					most = h
				}
				v := n
				time.Sleep(time.Microsecond)
				n = v + 1
				holding.Add(-1)
				unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if n != workers*rounds || most != 1 {
		t.Errorf("%d additions with at most %d holders at once, want %d with 1", n, most, workers*rounds)
	}
	if got := k.Len(); got != 0 {
		t.Errorf("%d locks kept after every unlock, want none", got)
	}
}

// Names apart never wait for each other; a wait ends with its context,
// holding nothing; a done context never takes even a free lock; a second
// unlock does nothing.
func TestWaitsAndUnlocks(t *testing.T) {
	var k keylock.Locks
	unlockA, err := k.Lock(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	unlockB, err := k.Lock(t.Context(), "b")
	if err != nil {
		t.Fatalf("b while a is held: %v", err)
	}
	unlockB()
	unlockB() // does nothing: b stays free
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := k.Lock(ctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a while held, until the deadline: %v, want context.DeadlineExceeded", err)
	}
	unlockA()
	done, stop := context.WithCancel(t.Context())
	stop()
	for i := range 100 {
		if unlock, err := k.Lock(done, "a"); !errors.Is(err, context.Canceled) {
			if err == nil {
				unlock()
			}
			t.Fatalf("try %d: a free lock with a done context: %v, want context.Canceled", i, err)
		}
	}
	for _, name := range []string{"a", "b"} {
		unlock, err := k.Lock(t.Context(), name)
		if err != nil {
			t.Fatalf("%s after its unlocks: %v", name, err)
		}
		unlock()
	}
	if got := k.Len(); got != 0 {
		t.Errorf("%d locks kept, want none", got)
	}
}

// TestCancelAsUnlock: waiters whose contexts end at the moment the holder
// unlocks each either take the lock or hold nothing, and each unlock is
// called twice at once; none is lost (every waiter answers, the name is
// free at the end) and no lock is kept. Round after round, the holder's
// unlock, the cancellations and the waiters start together.
func TestCancelAsUnlock(t *testing.T) {
	var k keylock.Locks
	const rounds, waiters = 200, 8
	var took, refused int
	for range rounds {
		unlock, err := k.Lock(t.Context(), "a")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		start := make(chan struct{})
		var wg sync.WaitGroup
		var got, gaveUp atomic.Int32
		for range waiters {
			wg.Go(func() {
				<-start
				u, err := k.Lock(ctx, "a")
				switch {
				case err == nil:
					got.Add(1)
					var both sync.WaitGroup
					both.Go(u)
					both.Go(u)
					both.Wait()
				case errors.Is(err, context.Canceled):
					gaveUp.Add(1)
				default:
					t.Errorf("Lock: %v", err)
				}
			})
		}
		close(start)
		wg.Go(unlock)
		wg.Go(cancel)
		wg.Wait()
		if n := got.Load() + gaveUp.Load(); n != waiters {
			t.Fatalf("%d of %d waiters answered", n, waiters)
		}
		took, refused = took+int(got.Load()), refused+int(gaveUp.Load())
		if got := k.Len(); got != 0 {
			t.Fatalf("%d locks kept after a round, want none", got)
		}
	}
	free, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	unlock, err := k.Lock(free, "a")
	if err != nil {
		t.Fatalf("the name after the rounds: %v, want it free", err)
	}
	unlock()
	t.Logf("%d waiters took the lock, %d gave up", took, refused)
}
