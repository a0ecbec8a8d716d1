package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/memory"
)

// markdown writes the report as the Markdown page docs/benchmarks.md holds.
func (r *report) markdown(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Benchmarks\n\n")
	p("Written by `bash bench/run.sh` (which starts the storage servers and runs `go run . -out ../docs` in bench/);\n")
	p("do not edit by hand. The same numbers are in `benchmarks.csv`; `benchmarks.png` plots the scale test.\n\n")
	if r.cfg.quick {
		p("**This is a -quick run: a few iterations on small stores, to check the benchmark. Its numbers mean nothing.**\n\n")
	}

	p("## The run\n\n| | |\n| --- | --- |\n")
	p("| date | %s, %s |\n", r.started.UTC().Format("2006-01-02 15:04 MST"), fmtElapsed(r.finished.Sub(r.started)))
	p("| machine | %s |\n", r.machine)
	p("| Go | %s |\n", r.machine.goVer)
	p("| load average (1, 5, 15 min) | %s at the start, %s at the end", r.loadStart, r.loadEnd)
	if r.machine.cpus > 0 {
		p(" (%d CPUs: a load above %d means runnable threads waited for a CPU)", r.machine.cpus, r.machine.cpus)
	}
	p(" |\n")
	if r.cfg.servers != "" {
		p("| servers | %s |\n", r.cfg.servers)
	}
	p("| command | `%s` |\n\n", r.cfg.args)
	r.method(w)

	backends := r.backends()
	r.ratioTable(w, backends)
	r.misses(w)
	r.callTable(w, backends)
	r.details(w, backends)
	r.contentionTable(w)
	r.processTable(w)
	r.scaleTables(w)
	p("## Directory rename and delete\n\n")
	p("Large directory renames and deletes, and what a Redis rename blocks, are measured by hand with the server\n")
	p("running, not by this run: see [dirmove.md](dirmove.md) for the method and the numbers.\n\n")
	p("## Search\n\n")
	p("The search index (package search) has its own benchmarks, run by hand: its targets (first build, query latency,\n")
	p("storage calls after a change) and the comparison of engines that chose it. See [search.md](search.md).\n\n")

	if probs := r.problems(); len(probs) > 0 {
		p("## Problems\n\nThe run failed:\n\n")
		for _, s := range probs {
			p("- %s\n", oneLine(s))
		}
		p("\n")
	}
}

// method explains what is measured.
func (r *report) method(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	pl := r.plan
	p("## What is measured\n\n")
	p("Each command runs through `memory.Handler.Execute` (JSON input in, result text out) on a store that\n")
	p("holds a directory of %d files, two 50-file directories, and a few single files: about 310 files of the\n", viewDirFiles)
	p("same realistic 2,040-byte memory file (40 lines). `view file` views one of them; `view dir` views the\n")
	p("200-file directory; `create` creates a new 2 KB file (and an untimed delete removes it again);\n")
	p("`str_replace` replaces a unique line with itself; `insert` adds a line after line 20 (an untimed write\n")
	p("restores the file); `delete` deletes a file that the handler created just before, untimed (a delete\n")
	p("right after another delete also reads the file count, at once); the renames move a\n")
	p("file, and a directory of %d files, back and forth within their parent directory.\n\n", renameDirFiles)
	p("**The floor** of a command is the storage calls that the call table (docs/guarantees.md, \"Guarantees and storage\n")
	p("calls\", and package `memory`'s documentation) gives for it, issued directly on the same `blob.Store`,\n")
	p("with nothing of the handler: no JSON, no path checks, no formatting. For example, `view file` is one\n")
	p("`Get`; `str_replace` is one `Get` and one `Put(IfVersion)`; a rename is one `Rename` on stores that rename\n")
	p("atomically (mem, file, Redis) and otherwise the calls of `blob.Rename`'s fallback (`Get`, `List`,\n")
	p("`Put(IfAbsent)`, `Delete(IfVersion)` per file, plus one `Stat` and one more `List` for a directory).\n")
	p("`create` and `delete` are measured against the one write they need, not their call table: one\n")
	p("`Put(IfAbsent)`, one `Delete`; the file count and the check that a name is not both a file and a\n")
	p("directory are the handler's cost. **ratio** = cloudmem p50 / floor p50, the target is %.2f (%.2f for\n", targetRatio, writeTargetRatio)
	p("create and delete).\n\n")
	p("**The SDK floor** (`view file`, `str_replace`, `create`, `delete`) goes below the Store: the same requests\n")
	p("with the backend's own client on an object of its own: S3 `GetObject`, `GetObject` + `PutObject` with\n")
	p("`If-Match`, `PutObject` with `If-None-Match: *`, `DeleteObject`; GCS a read, a read + an upload with\n")
	p("`ifGenerationMatch`, an upload with `ifGenerationMatch=0`, a delete; Azure `DownloadStream`, it + `Upload`\n")
	p("with `If-Match`, `Upload` with `If-None-Match: *`, `Delete`; Redis `HMGET`, `HMGET` + a 3-line\n")
	p("compare-and-swap script, a 3-line create-only script, `DEL`; file `os.ReadFile`, it + a durable atomic\n")
	p("replace (temporary file, fsync, rename, fsync of the directory) *without* the store's lock and version\n")
	p("check, which no file system call can provide, a durable create-only write (temporary file, fsync, link,\n")
	p("fsync of the directory), a remove + fsync of the directory. For the age stores the SDK floor is the\n")
	p("unencrypted one, so `cloudmem/SDK` includes the cost of encryption.\n\n")
	p("**Timing.** The handler, the floor and the SDK floor run interleaved (each iteration runs every variant\n")
	p("once, starting with a different one), so that changes in the machine's load affect them alike; untimed\n")
	p("work (setup, cleanup) is outside the clock. Each command runs at least %d times and for at least %s on\n",
		pl.local.minIters, pl.local.wall)
	p("in-process stores (mem, file, age+file; at most %d), and at least %d times and %s on stores behind a\n",
		pl.local.maxIters, pl.remote.minIters, pl.remote.wall)
	p("server (at most %d), after %d and %d untimed warm-up runs. p50 and p99 are nearest-rank percentiles of\n",
		pl.remote.maxIters, pl.local.warmup, pl.remote.warmup)
	p("every run's latency; ops/s is runs per second of timed work (one client, one command at a time).\n")
	p("The scale test runs each operation at least %d times (in-process) or %d times (servers) at each size.\n",
		pl.scaleLocal.minIters, pl.scaleRemote.minIters)
	p("The machine is shared with other work (see the load averages): the interleaving makes the ratios fair,\n")
	p("but the p99s mostly measure the machine.\n")
	p("**calls** are the `blob.Store` calls the handler made (counted by `blob.NewCounter`), checked against\n")
	p("the call table (a command with more fails the run); **requests** are the HTTP requests (S3, GCS, Azure)\n")
	p("or Redis commands its client sent. The encrypted stores implement `blob.Tree` but refuse its Rename; the\n")
	p("counter does not count that refusal, which makes no storage call.\n\n")
}

// ratioTable writes the headline table: ratio per command and backend.
func (r *report) ratioTable(w *bytes.Buffer, backends []string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## cloudmem / floor\n\n")
	p("Median latency through the handler over the floor's (✗: over %.2f, or %.2f for create and delete; **!**: more\n", targetRatio, writeTargetRatio)
	p("calls than the table).\n\n")
	r.summary(w, backends)
	p("| command |")
	for _, b := range backends {
		p(" %s |", b)
	}
	p("\n| --- |%s\n", strings.Repeat(" ---: |", len(backends)))
	for _, cmd := range commands {
		p("| %s |", cmd)
		for _, b := range backends {
			c := r.cmd(b, cmd)
			switch {
			case c == nil:
				p(" |")
			case c.err != nil:
				p(" error |")
			default:
				mark := ""
				if !c.within() {
					mark = " ✗"
				}
				if c.overTable() != "" {
					mark += " **!**"
				}
				p(" %.2f%s |", c.ratio(), mark)
			}
		}
		p("\n")
	}
	p("\n")
	var sdk []string
	for _, b := range backends {
		for _, cmd := range []string{cmdViewFile, cmdStrReplace, cmdCreate, cmdDelete} {
			if c := r.cmd(b, cmd); c != nil && c.sdk != nil && c.err == nil {
				sdk = append(sdk, fmt.Sprintf("%s %s %.2f", b, cmd, ratio(c.handler.p50, c.sdk.p50)))
			}
		}
	}
	if len(sdk) > 0 {
		p("Against the SDK floor (cloudmem p50 / SDK p50): %s.\n\n", strings.Join(sdk, "; "))
		p("Where the Store is slower than the SDK floor, the causes found in the code (and measured apart from\n")
		p("this run) are: **file** opens each directory of a path with `O_NOFOLLOW` (one `openat` per level) and\n")
		p("`fstat`s the file, so that it never follows a symbolic link, about twice the system calls of\n")
		p("`os.ReadFile`; its writes also take the store's lock and check the version. **redis** runs each call\n")
		p("whose context can be cancelled in a goroutine of its own, so that cancellation interrupts a command in\n")
		p("flight (a `Get` took about 38 µs with `context.Background()` and 54 µs with a cancellable context, against\n")
		p("30 µs for the bare `HMGET`); its `Put` script also updates the listing index, the version counter and a\n")
		p("write mark that lets a retried write learn its outcome. **fake-gcs**: the GCS store buffers each upload\n")
		p("so that the library can retry it (a chunk size the library rounds up to 256 KiB: about 286 KB allocated\n")
		p("per `Put`, against 56 KB for the SDK floor's single unbuffered request). **age** decrypts every read\n")
		p("(an X25519 operation for the header, ChaCha20-Poly1305 for the body, an HMAC check) and encrypts every\n")
		p("write.\n\n")
	}
}

// misses explains each ratio over the target from the numbers: the
// absolute difference, and whether the handler made more calls or
// requests than the floor; when it did not, whether another command with
// the same calls on the same backend stayed within the target (then the
// miss is most likely the machine's noise).
func (r *report) misses(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	var lines []string
	for _, c := range r.cmds {
		if c.err != nil || c.within() {
			continue
		}
		diff := c.handler.p50 - c.floor.p50
		why := fmt.Sprintf("- %s, %s: %.2f, cloudmem %s against the floor's %s (+%s a command)",
			c.backend, c.command, c.ratio(), fmtDur(c.handler.p50), fmtDur(c.floor.p50), fmtDur(diff))
		hc, fc := c.handler.calls, c.floor.calls
		switch twin := r.twin(&c); {
		case hc.Total() > fc.Total():
			why += fmt.Sprintf("; the handler made %s, the floor %s", fmtCounts(hc), fmtCounts(fc))
		case c.handler.requests > c.floor.requests && c.floor.requests >= 0:
			why += fmt.Sprintf("; same storage calls, but %d requests against the floor's %d", c.handler.requests, c.floor.requests)
		case c.floor.p50 < 100*time.Microsecond:
			why += "; same storage calls, and with a floor under 100 µs the handler's fixed work" +
				" (decoding the JSON, checking the path, formatting the answer) is a large ratio"
		case twin != nil:
			why += fmt.Sprintf("; same storage calls and requests, and %s, which makes the same calls, is at %.2f:"+
				" most likely noise from the machine's load", twin.command, twin.ratio())
		default:
			why += "; same storage calls and requests: the handler's own work, or noise"
		}
		lines = append(lines, why)
	}
	p("### Over the target\n\n")
	if len(lines) == 0 {
		p("None: every command is within its target.\n\n")
		return
	}
	p("%s\n\n", strings.Join(lines, "\n"))
}

// twin returns another command measured on c's backend that made the same
// storage calls as c and is within the target, or nil.
func (r *report) twin(c *cmdResult) *cmdResult {
	for i := range r.cmds {
		t := &r.cmds[i]
		if t.backend == c.backend && t.command != c.command && t.err == nil &&
			t.handler.calls == c.handler.calls && t.within() {
			return t
		}
	}
	return nil
}

// summary counts the commands within the target, per backend.
func (r *report) summary(w *bytes.Buffer, backends []string) {
	var within, total int
	var all, some []string
	for _, b := range backends {
		in, n := 0, 0
		for _, c := range r.cmds {
			if c.backend == b && c.err == nil {
				n++
				if c.within() {
					in++
				}
			}
		}
		within, total = within+in, total+n
		if in == n {
			all = append(all, b)
		} else {
			some = append(some, fmt.Sprintf("%s (%d of %d)", b, n-in, n))
		}
	}
	fmt.Fprintf(w, "%d of %d measurements are within their target.", within, total)
	if len(all) > 0 {
		fmt.Fprintf(w, " Every command is within it on %s.", strings.Join(all, ", "))
	}
	if len(some) > 0 {
		fmt.Fprintf(w, " Over it: %s.", strings.Join(some, ", "))
	}
	fmt.Fprintf(w, "\n\n")
}

// callTable writes the calls and requests of each command.
func (r *report) callTable(w *bytes.Buffer, backends []string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## Storage calls\n\n")
	p("`blob.Store` calls the handler made per command (the most in any run), then in parentheses the requests\n")
	p("its client sent (HTTP requests, or Redis commands). The floor made the same calls.\n\n")
	p("| command |")
	for _, b := range backends {
		p(" %s |", b)
	}
	p("\n| --- |%s\n", strings.Repeat(" --- |", len(backends)))
	for _, cmd := range commands {
		p("| %s |", cmd)
		for _, b := range backends {
			c := r.cmd(b, cmd)
			if c == nil || c.err != nil {
				p(" |")
				continue
			}
			p(" %s", fmtCounts(c.handler.calls))
			if c.handler.requests >= 0 {
				p(" (%d)", c.handler.requests)
			}
			p(" |")
		}
		p("\n")
	}
	p("\n")
}

// details writes one table per backend with every number.
func (r *report) details(w *bytes.Buffer, backends []string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## Per backend\n\n")
	for _, b := range backends {
		p("### %s\n\nLoad average when it started: %s.\n\n", b, r.loads[b])
		p("| command | n | p50 | p99 | ops/s | floor p50 | floor p99 | floor ops/s | ratio | SDK p50 | cloudmem/SDK | requests (floor) |\n")
		p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		for _, cmd := range commands {
			c := r.cmd(b, cmd)
			if c == nil {
				continue
			}
			if c.err != nil {
				p("| %s | error: %s |||||||||||\n", cmd, oneLine(c.err.Error()))
				continue
			}
			h, f := c.handler, c.floor
			p("| %s | %d | %s | %s | %.0f | %s | %s | %.0f | %.2f |", cmd, h.n, fmtDur(h.p50), fmtDur(h.p99), h.opsPerS,
				fmtDur(f.p50), fmtDur(f.p99), f.opsPerS, c.ratio())
			if c.sdk != nil {
				p(" %s | %.2f |", fmtDur(c.sdk.p50), ratio(h.p50, c.sdk.p50))
			} else {
				p(" | |")
			}
			if h.requests >= 0 {
				p(" %d (%d) |\n", h.requests, f.requests)
			} else {
				p(" |\n")
			}
		}
		p("\n")
	}
}

func (r *report) contentionTable(w *bytes.Buffer) {
	if len(r.contention) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## Contention\n\n")
	p("N writers, each with its own handler over the same store, insert lines at the top of one file (%d inserts\n", r.plan.editsLocal)
	p("in total on in-process stores, %d on servers). An insert that loses every race (the handler's %d retries)\n",
		r.plan.editsRemote, memory.DefaultRetries)
	p("answers \"changed by another writer\" and is sent again, as the model is told to (**gave up**).\n")
	p("**retries/edit** counts the `Put`s refused because another writer got there first, per insert done.\n")
	p("Afterwards every line reported inserted must be in the file exactly once (**lost** counts those missing\n")
	p("or duplicated; any makes the run fail).\n\n")
	p("| backend | writers | edits | edits/s | retries/edit | gave up | lost |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range r.contention {
		if c.err != nil {
			p("| %s | %d | error: %s |||||\n", c.backend, c.writers, oneLine(c.err.Error()))
			continue
		}
		p("| %s | %d | %d | %.0f | %.2f | %d | %d |\n", c.backend, c.writers, c.edits, c.editsPerS(), c.retriesPerEdit(), c.gaveUp, c.lost+c.dup)
	}
	p("\n")
}

func (r *report) processTable(w *bytes.Buffer) {
	if len(r.processes) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## Contention between processes\n\n")
	p("N separate `cloudmem exec` processes, each opening the store's URL as a user would, insert %d lines a\n", r.plan.processEdits)
	p("round, each process its share: either all into one file, or each into a file of its own. Every process has\n")
	p("opened the store and answered a view before all are released at once; the clock runs from the release to\n")
	p("the last answer. The levels run in turn, %d rounds on each backend (each level of the table once, in\n", r.plan.processRounds)
	p("its order, then again). **edits** counts every round's; **edits/s** is the median round's.\n")
	p("**vs one** is the median over the rounds of the edits/s against one process's in the same round (the\n")
	p("machine's disk is not equally fast from one minute to the next). An insert answered \"changed by another\n")
	p("writer\" is sent again (**gave up**). Afterwards every line reported inserted must be\n")
	p("in its file exactly once (**lost** counts those missing or duplicated; any makes the run fail).\n\n")
	p("| backend | processes | files | edits | edits/s | vs one | gave up | lost |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	one := map[string]*processResult{}
	for i, c := range r.processes {
		if c.writers == 1 && c.err == nil {
			one[c.backend] = &r.processes[i]
		}
	}
	for _, c := range r.processes {
		if c.err != nil {
			p("| %s | %d | %d | error: %s |||||\n", c.backend, c.writers, c.files, oneLine(c.err.Error()))
			continue
		}
		vs := ""
		if base := one[c.backend]; base != nil {
			if v := c.vsOne(base); v > 0 {
				vs = fmt.Sprintf("%.2f", v)
			}
		}
		p("| %s | %d | %d | %d | %.0f | %s | %d (%.1f%%) | %d |\n", c.backend, c.writers, c.files, c.edits, c.rate(),
			vs, c.gaveUp, c.gaveUpPercent(), c.lost+c.dup)
	}
	p("\n")
}

func (r *report) scaleTables(w *bytes.Buffer) {
	if len(r.scale) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	var sizes []int
	var backends []string
	for _, s := range r.scale {
		if !slices.Contains(sizes, s.files) {
			sizes = append(sizes, s.files)
		}
		if !slices.Contains(backends, s.backend) {
			backends = append(backends, s.backend)
		}
	}
	p("## Scale\n\n")
	p("The store grows to %s files (two 50-file directories, the rest in ten directories). `view file` reads\n", joinInts(sizes))
	p("one 2 KB file, one `Get` (its floor is that `Get`); `view /memories`\n")
	p("lists the whole store and prints two levels of it; `rename dir` moves a 50-file directory; `create` keeps\n")
	p("the file limit with the store's file count, not a listing (the limit is raised here so that create still\n")
	p("succeeds), then writes; its floor lists the whole store, as create did before. Each cell: cloudmem p50,\n")
	p("then storage calls / requests (one `List` counts once\n")
	p("however many pages it reads; the requests show the pages). Where the calls stay the same and the time\n")
	p("still grows (create and the 50-file rename on fake-gcs-server and Azurite), the server's own requests got\n")
	p("slower as the bucket filled: `view file` shows a `Get`, and `TestServerGrowth` in bench/ times each kind of\n")
	p("call alone at 100 and 10,000 files (docs/benchmarks-by-hand.md, \"Speed\", has its numbers).\n\n")
	p("![latency against store size](benchmarks.png)\n\n")
	for _, op := range scaleOps {
		p("### %s\n\n| backend |", op)
		for _, n := range sizes {
			p(" %d files |", n)
		}
		p(" ratio at %d |\n| --- |%s ---: |\n", sizes[len(sizes)-1], strings.Repeat(" ---: |", len(sizes)))
		for _, b := range backends {
			p("| %s |", b)
			last := ""
			for _, n := range sizes {
				s := r.scaleAt(b, op, n)
				switch {
				case s == nil:
					p(" |")
				case s.err != nil:
					p(" error |")
				default:
					p(" %s, %d", fmtDur(s.handler.p50), s.handler.calls.Total())
					if s.handler.requests >= 0 {
						p(" / %d", s.handler.requests)
					}
					p(" |")
					last = fmt.Sprintf("%.2f", ratio(s.handler.p50, s.floor.p50))
				}
			}
			p(" %s |\n", last)
		}
		p("\n")
	}
}

func (r *report) scaleAt(backend, op string, files int) *scaleResult {
	for i := range r.scale {
		s := &r.scale[i]
		if s.backend == backend && s.op == op && s.files == files {
			return s
		}
	}
	return nil
}

func fmtElapsed(d time.Duration) string {
	return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
}

// oneLine makes text fit in a table cell.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%d", x)
	}
	return strings.Join(s, ", ")
}
