package gate

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// fakeClock is a clock whose time moves only when an attempt takes time or
// a wait is made; it records the waits. jitter picks the top of the range
// when top is set and 0 otherwise. A wait that would end after deadline
// (when set) moves time to the deadline and fails as a context deadline.
type fakeClock struct {
	t        time.Time
	top      bool
	deadline time.Time
	waits    []time.Duration
}

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !c.deadline.IsZero() && c.t.Add(d).After(c.deadline) {
		c.t = c.deadline
		return context.DeadlineExceeded
	}
	c.waits = append(c.waits, d)
	c.t = c.t.Add(d)
	return nil
}

func (c *fakeClock) jitter(d time.Duration) time.Duration {
	if c.top {
		return d
	}
	return 0
}

// losing returns an attempt that always loses a race, taking took[i] for
// attempt i (the last duration repeats), and counts the attempts in *n.
func losing(c *fakeClock, n *int, took ...time.Duration) func() bool {
	return func() bool {
		c.t = c.t.Add(took[min(*n, len(took)-1)])
		*n++
		return true
	}
}

func TestWindow(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		n    int
		slot time.Duration
		want time.Duration
	}{
		{0, 5 * ms, 10 * ms}, // 2 slots
		{1, 5 * ms, 40 * ms}, // 8
		{2, 5 * ms, 160 * ms},
		{3, 5 * ms, 640 * ms}, // maxSlots
		{4, 5 * ms, 640 * ms},
		{1 << 30, 5 * ms, 640 * ms},
		{0, time.Second, 2 * time.Second},
		{1, time.Second, maxWait},
		{1 << 30, time.Second, maxWait},
	} {
		if got := window(c.n, c.slot); got != c.want {
			t.Errorf("window(%d, %v) = %v, want %v", c.n, c.slot, got, c.want)
		}
	}
}

// The waits grow from the slot, the fastest failed attempt, up to the
// widest window, and stop when the retries are spent.
func TestPacerWaits(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name    string
		retries int
		took    []time.Duration
		want    []time.Duration
	}{
		{"sized by the attempts", 5, []time.Duration{5 * ms},
			[]time.Duration{10 * ms, 40 * ms, 160 * ms, 640 * ms, 640 * ms}},
		{"the fastest attempt sets the slot", 3, []time.Duration{50 * ms, 5 * ms, 30 * ms},
			[]time.Duration{100 * ms, 40 * ms, 160 * ms}},
		{"a fast store waits at least a millisecond a slot", 2, []time.Duration{0},
			[]time.Duration{2 * ms, 8 * ms}},
		{"a stalled attempt counts as a second", 2, []time.Duration{time.Minute},
			[]time.Duration{2 * time.Second, maxWait}},
		{"no retries", -1, []time.Duration{5 * ms}, nil},
		{"zero retries", 0, []time.Duration{5 * ms}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := &fakeClock{top: true}
			p := pacer{clock: clk, retries: c.retries}
			var attempts int
			var told []bool
			landed, err := p.run(t.Context(), losing(clk, &attempts, c.took...), func(r bool) { told = append(told, r) })
			if landed || err != nil {
				t.Fatalf("run: landed %v, err %v; want a conflict", landed, err)
			}
			if !slices.Equal(clk.waits, c.want) {
				t.Errorf("waits %v, want %v", clk.waits, c.want)
			}
			wantAttempts := 1 + max(c.retries, 0)
			if attempts != wantAttempts {
				t.Errorf("%d attempts, want %d", attempts, wantAttempts)
			}
			wantTold := make([]bool, wantAttempts)
			for i := range wantAttempts - 1 {
				wantTold[i] = true
			}
			if !slices.Equal(told, wantTold) {
				t.Errorf("conflicts told %v, want %v", told, wantTold)
			}
		})
	}
}

// However many retries are allowed, the waits of one command total
// retryBudget at most; the last wait is cut to what is left.
func TestPacerBudget(t *testing.T) {
	clk := &fakeClock{top: true}
	p := pacer{clock: clk, retries: 1 << 30}
	var attempts int
	landed, err := p.run(t.Context(), losing(clk, &attempts, 30*time.Millisecond), func(bool) {})
	if landed || err != nil {
		t.Fatalf("run: landed %v, err %v; want a conflict", landed, err)
	}
	var total time.Duration
	for _, d := range clk.waits {
		total += d
	}
	// 60ms, 240ms, 960ms, then 3.84s waits: 1.26s + 4×3.84s = 16.62s,
	// and 3.38s left for the last.
	want := []time.Duration{60 * time.Millisecond, 240 * time.Millisecond, 960 * time.Millisecond,
		3840 * time.Millisecond, 3840 * time.Millisecond, 3840 * time.Millisecond, 3840 * time.Millisecond, 3380 * time.Millisecond}
	if total != retryBudget || !slices.Equal(clk.waits, want) {
		t.Errorf("waits %v (total %v), want %v (total %v)", clk.waits, total, want, retryBudget)
	}
	if attempts != len(want)+1 {
		t.Errorf("%d attempts, want %d", attempts, len(want)+1)
	}
}

// The jitter picks the wait within [0, window]: with the bottom of the
// range the budget is never spent and the retries bound the attempts.
func TestPacerJitterBottom(t *testing.T) {
	clk := &fakeClock{}
	p := pacer{clock: clk, retries: 20}
	var attempts int
	if landed, err := p.run(t.Context(), losing(clk, &attempts, 5*time.Millisecond), func(bool) {}); landed || err != nil {
		t.Fatalf("run: landed %v, err %v; want a conflict", landed, err)
	}
	if attempts != 21 || !slices.Equal(clk.waits, make([]time.Duration, 20)) {
		t.Errorf("%d attempts, waits %v; want 21 attempts and 20 waits of 0", attempts, clk.waits)
	}
}

// An attempt that lands ends the run, after the waits of the races lost
// before it.
func TestPacerLands(t *testing.T) {
	clk := &fakeClock{top: true}
	p := pacer{clock: clk, retries: 8}
	n := 0
	landed, err := p.run(t.Context(), func() bool {
		clk.t = clk.t.Add(4 * time.Millisecond)
		n++
		return n < 3
	}, func(bool) {})
	if !landed || err != nil || n != 3 {
		t.Fatalf("run: landed %v, err %v after %d attempts; want landed after 3", landed, err, n)
	}
	if want := []time.Duration{8 * time.Millisecond, 32 * time.Millisecond}; !slices.Equal(clk.waits, want) {
		t.Errorf("waits %v, want %v", clk.waits, want)
	}
}

// The total wait honours ctx: a wait that would outlast ctx's deadline
// ends at the deadline with its error, and no attempt follows; a ctx
// cancelled during an attempt makes no wait at all.
func TestPacerContext(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	clk := &fakeClock{t: start, top: true, deadline: start.Add(500 * time.Millisecond)}
	p := pacer{clock: clk, retries: 1 << 20}
	var attempts int
	landed, err := p.run(t.Context(), losing(clk, &attempts, 10*time.Millisecond), func(bool) {})
	if landed || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run: landed %v, err %v; want the deadline", landed, err)
	}
	// 10ms + 20ms wait + 10ms + 80ms + 10ms + 320ms + 10ms = 460ms; the
	// next wait (1.28s) would pass the deadline.
	if attempts != 4 || !clk.t.Equal(clk.deadline) {
		t.Errorf("%d attempts, ended %v after the start; want 4, at the deadline (500ms)", attempts, clk.t.Sub(start))
	}

	ctx, cancel := context.WithCancel(t.Context())
	clk = &fakeClock{top: true}
	p = pacer{clock: clk, retries: 1 << 20}
	attempts = 0
	landed, err = p.run(ctx, func() bool {
		attempts++
		if attempts == 3 {
			cancel()
		}
		return true
	}, func(bool) {})
	if landed || !errors.Is(err, context.Canceled) || attempts != 3 || len(clk.waits) != 2 {
		t.Errorf("cancelled: landed %v, err %v, %d attempts, waits %v; want context.Canceled after 3 attempts and 2 waits",
			landed, err, attempts, clk.waits)
	}
}

// sleep returns a done ctx's error at once, even for a wait of 0, whose
// timer would be ready too.
func TestSleepDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, d := range []time.Duration{0, time.Hour} {
		if err := sleep(ctx, d); !errors.Is(err, context.Canceled) {
			t.Errorf("sleep(cancelled, %v) = %v, want context.Canceled", d, err)
		}
	}
	if err := sleep(t.Context(), 0); err != nil {
		t.Errorf("sleep(live, 0) = %v, want nil", err)
	}
}

// The system clock's jitter stays within [0, d] and reaches both halves.
func TestSystemJitter(t *testing.T) {
	var c systemClock
	if got := c.jitter(0); got != 0 {
		t.Errorf("jitter(0) = %v, want 0", got)
	}
	const d = 100 * time.Millisecond
	var low, high bool
	for range 1000 {
		got := c.jitter(d)
		if got < 0 || got > d {
			t.Fatalf("jitter(%v) = %v, outside [0, %v]", d, got, d)
		}
		low, high = low || got < d/2, high || got > d/2
	}
	if !low || !high {
		t.Errorf("1000 draws of jitter(%v): below half %v, above half %v; want both", d, low, high)
	}
}
