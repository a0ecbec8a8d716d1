// Package faultrun runs concurrent writers against one memory file while a
// Toxiproxy server (integration/toxiproxy.sh) injects a network fault
// between them and the storage server, then checks what the file holds:
// every acknowledged line exactly once, no line nobody sent. The network
// fault test (integration) and the long fault run (bench/faults) share it.
//
// The faults are Toxiproxy toxics, driven through its HTTP API with its
// client package. A Run is not safe for concurrent use; Runs on different
// proxies may go at once.
package faultrun

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/cloudmem/cloudmem/memory"
)

// A Fault is one kind of network fault: a Toxiproxy toxic on the answers
// (downstream), where a body is cut, held or delayed.
type Fault struct {
	Name       string               // as the tables in docs/netfaults.md name it
	Type       string               // the toxic's type
	Attributes toxiproxy.Attributes // the toxic's attributes
}

// Faults are the five fault kinds of issue 26, in the order the tables
// list them.
var Faults = []Fault{
	{"latency", "latency", toxiproxy.Attributes{"latency": 300, "jitter": 100}},
	{"reset mid-body", "limit_data", toxiproxy.Attributes{"bytes": 700}},
	{"blackhole", "timeout", toxiproxy.Attributes{"timeout": 0}},
	{"slow bandwidth", "bandwidth", toxiproxy.Attributes{"rate": 16}},
	{"slicer", "slicer", toxiproxy.Attributes{"average_size": 32, "size_variation": 16, "delay": 200}},
}

// toxicName is the name the fault's toxic has on the proxy.
const toxicName = "fault"

// NewProxy asks the Toxiproxy server whose API is at api (http://host:port)
// for a proxy named name, listening on a free loopback port, in front of
// upstream (host:port). Delete it with its Delete method.
func NewProxy(api, name, upstream string) (*toxiproxy.Proxy, error) {
	p, err := toxiproxy.NewClient(api).CreateProxy(name, "127.0.0.1:0", upstream)
	if err != nil {
		return nil, fmt.Errorf("faultrun: creating the proxy %s in front of %s through %s: %w", name, upstream, api, err)
	}
	return p, nil
}

// Run describes one run: Writers writers insert lines into the file at
// Path (which must not exist) through Handler, whose store goes through
// Proxy, while Fault comes and goes.
type Run struct {
	Handler *memory.Handler
	Proxy   *toxiproxy.Proxy
	Fault   Fault
	Path    string // a memory path, e.g. /memories/f.md
	Writers int
	// Each writer inserts Lines lines, or, when Lines is 0, inserts until
	// Duration has passed.
	Lines    int
	Duration time.Duration
	// The fault is on for On, then off for Off, again and again until the
	// writers are done. With Off 0 it is on once, for On.
	On, Off time.Duration
	// Bound is how long a command may take; slower ones are counted as Late.
	Bound time.Duration
}

// Result is what a Run found. Lost, Duplicated, Unknown and Late must be 0.
type Result struct {
	Commands   int           // inserts made
	Acked      int           // inserts that reported success
	Refused    int           // inserts that reported an error (the model is told; the line may or may not be there)
	Lost       int           // acknowledged lines not in the file at the end
	Duplicated int           // lines in the file more than once
	Unknown    int           // lines in the file that no writer sent
	Late       int           // commands slower than Bound
	Slowest    time.Duration // the slowest command
	Faults     int           // how many times the fault came on
}

// Do makes the run: it creates the file (with the line "start"), starts
// every writer and releases them at once, switches the fault on and off,
// and when the writers are done and the fault is off, reads the file back
// and counts. An error means the run could not be made or checked (the
// proxy did not answer, the file could not be created or read); what the
// writers met is in the Result.
func (r Run) Do(ctx context.Context) (Result, error) {
	if r.Writers < 1 || r.Lines < 0 || r.Lines == 0 && r.Duration <= 0 || r.On <= 0 {
		return Result{}, errors.New("faultrun: a run needs writers, lines or a duration, and a time the fault is on")
	}
	if res := r.Handler.Create(ctx, r.Path, "start\n"); res.IsError {
		return Result{}, fmt.Errorf("faultrun: creating %s before the fault: %s", r.Path, res.Text)
	}
	var (
		mu      sync.Mutex
		res     Result
		acked   []string
		issued  = make([]int, r.Writers) // lines each writer sent
		start   = make(chan struct{})
		done    = make(chan struct{})
		wg      sync.WaitGroup
		stopAt  = time.Now().Add(r.Duration)
		more    = func(i int) bool { return r.Lines > 0 && i < r.Lines || r.Lines == 0 && time.Now().Before(stopAt) }
		cmdCtx  = context.WithoutCancel(ctx) // a command is never cut short by the run: it must answer by itself
		lineFor = func(w, i int) string { return "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i) }
	)
	for w := range r.Writers {
		wg.Go(func() {
			<-start
			for i := 0; more(i); i++ {
				line := lineFor(w, i)
				began := time.Now()
				out := r.Handler.Insert(cmdCtx, r.Path, 1, line)
				took := time.Since(began)
				mu.Lock()
				issued[w] = i + 1
				res.Commands++
				res.Slowest = max(res.Slowest, took)
				if took > r.Bound {
					res.Late++
				}
				if out.IsError {
					res.Refused++
				} else {
					res.Acked++
					acked = append(acked, line)
				}
				mu.Unlock()
			}
		})
	}
	go func() { wg.Wait(); close(done) }()

	faultErr := r.toggle(start, done, &res)
	<-done
	if faultErr != nil {
		return res, faultErr
	}
	data, err := r.Handler.ReadFile(ctx, r.Path)
	if err != nil {
		return res, fmt.Errorf("faultrun: reading %s after the fault: %w", r.Path, err)
	}
	count := map[string]int{}
	for l := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		count[l]++
	}
	for l, n := range count {
		if n > 1 {
			res.Duplicated++
		}
		if l != "start" && !sent(l, issued, lineFor) {
			res.Unknown++
		}
	}
	if count["start"] != 1 {
		res.Lost++ // the line written before the fault is an acknowledged one too
	}
	for _, l := range acked {
		if count[l] == 0 {
			res.Lost++
		}
	}
	return res, nil
}

// toggle releases the writers, then puts the fault on for r.On and off for
// r.Off until done is closed, and leaves it off.
func (r Run) toggle(start, done chan struct{}, res *Result) error {
	close(start)
	for {
		if _, err := r.Proxy.AddToxic(toxicName, r.Fault.Type, "downstream", 1, r.Fault.Attributes); err != nil {
			return fmt.Errorf("faultrun: adding the %s toxic: %w", r.Fault.Name, err)
		}
		res.Faults++
		finished := wait(done, r.On)
		if err := r.Proxy.RemoveToxic(toxicName); err != nil {
			return fmt.Errorf("faultrun: removing the %s toxic: %w", r.Fault.Name, err)
		}
		if finished || r.Off <= 0 || wait(done, r.Off) {
			return nil
		}
	}
}

// wait waits for d or for done to close, and reports whether done closed.
func wait(done chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// sent reports whether l is a line some writer sent: "w{w}-{i}" with i
// below the number of lines writer w issued.
func sent(l string, issued []int, lineFor func(w, i int) string) bool {
	ws, is, ok := strings.Cut(strings.TrimPrefix(l, "w"), "-")
	w, err1 := strconv.Atoi(ws)
	i, err2 := strconv.Atoi(is)
	return ok && err1 == nil && err2 == nil && w >= 0 && w < len(issued) && i >= 0 && i < issued[w] && l == lineFor(w, i)
}

// Row formats a Result as the cells of the tables in docs/netfaults.md:
// commands, acknowledged / refused, lost, duplicated, unknown, late, slowest.
func (res Result) Row() string {
	return fmt.Sprintf("%d | %d / %d | %d | %d | %d | %d | %.1f s", res.Commands, res.Acked, res.Refused,
		res.Lost, res.Duplicated, res.Unknown, res.Late, res.Slowest.Seconds())
}
