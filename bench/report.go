package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// target is the ratio of cloudmem's median latency to the floor's that the
// benchmark aims to stay within.
const targetRatio = 1.15

// writeTargetRatio is the target of create and delete, whose floor is the
// single write they need (see cmdResult.target).
const writeTargetRatio = 1.5

// report holds everything a run measured.
type report struct {
	cfg               config
	plan              plan
	machine           machine
	started, finished time.Time
	loadStart         string
	loadEnd           string
	loads             map[string]string // load average when each backend started
	cmds              []cmdResult
	contention        []contentionResult
	processes         []processResult
	scale             []scaleResult
	failures          []string // backends that could not run to the end
}

// problems lists what makes the run fail: errors, calls beyond the call
// table, lost or duplicated edits.
func (r *report) problems() []string {
	out := slices.Clone(r.failures)
	for _, c := range r.cmds {
		switch {
		case c.err != nil:
			out = append(out, fmt.Sprintf("%s %s: %v", c.backend, c.command, c.err))
		case c.overTable() != "":
			out = append(out, fmt.Sprintf("%s %s: more storage calls than the call table allows: %s", c.backend, c.command, c.overTable()))
		}
	}
	for _, c := range r.contention {
		if c.err != nil {
			out = append(out, fmt.Sprintf("%s contention with %d writers: %v", c.backend, c.writers, c.err))
		}
		if c.lost > 0 || c.dup > 0 {
			out = append(out, fmt.Sprintf("%s contention with %d writers: %d edits lost, %d duplicated", c.backend, c.writers, c.lost, c.dup))
		}
	}
	for _, c := range r.processes {
		if c.err != nil {
			out = append(out, fmt.Sprintf("%s: %d processes on %d files: %v", c.backend, c.writers, c.files, c.err))
		}
		if c.lost > 0 || c.dup > 0 {
			out = append(out, fmt.Sprintf("%s: %d processes on %d files: %d edits lost, %d duplicated", c.backend, c.writers, c.files, c.lost, c.dup))
		}
	}
	for _, s := range r.scale {
		switch {
		case s.err != nil:
			out = append(out, fmt.Sprintf("%s %s at %d files: %v", s.backend, s.op, s.files, s.err))
		case exceeds(s.handler.calls, s.table) != "":
			out = append(out, fmt.Sprintf("%s %s at %d files: more storage calls than the call table allows: %s",
				s.backend, s.op, s.files, exceeds(s.handler.calls, s.table)))
		}
	}
	return out
}

// backends returns the names of the backends with results, in run order.
func (r *report) backends() []string {
	var out []string
	for _, name := range r.cfg.backends {
		for _, c := range r.cmds {
			if c.backend == name {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

func (r *report) cmd(backend, command string) *cmdResult {
	for i := range r.cmds {
		if r.cmds[i].backend == backend && r.cmds[i].command == command {
			return &r.cmds[i]
		}
	}
	return nil
}

// write writes benchmarks.md, benchmarks.csv and benchmarks.png in dir.
func (r *report) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md bytes.Buffer
	r.markdown(&md)
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	var c bytes.Buffer
	if err := r.csv(&c); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "benchmarks.csv"), c.Bytes(), 0o644); err != nil {
		return err
	}
	png, err := r.plot()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "benchmarks.png"), png, 0o644)
}

// csvHeader names the CSV columns. Durations are in microseconds; a field
// that does not apply is empty.
var csvHeader = []string{
	"section", "backend", "operation", "store_files", "writers", "n",
	"cloudmem_p50_us", "cloudmem_p99_us", "cloudmem_ops_per_s",
	"floor_p50_us", "floor_p99_us", "floor_ops_per_s", "ratio",
	"sdk_p50_us", "sdk_p99_us", "sdk_ratio",
	"calls", "table_calls", "floor_calls", "requests", "floor_requests",
	"edits", "edits_per_s", "retries_per_edit", "gave_up", "lost", "error",
}

func (r *report) csv(w *bytes.Buffer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) }
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
	reqs := func(n int64) string {
		if n < 0 {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	timing := func(h, f stats) []string {
		return []string{
			strconv.Itoa(h.n), us(h.p50), us(h.p99), num(h.opsPerS),
			us(f.p50), us(f.p99), num(f.opsPerS), num(ratio(h.p50, f.p50)),
		}
	}
	for _, c := range r.cmds {
		row := []string{"command", c.backend, c.command, "", ""}
		row = append(row, timing(c.handler, c.floor)...)
		if c.sdk != nil {
			row = append(row, us(c.sdk.p50), us(c.sdk.p99), num(ratio(c.handler.p50, c.sdk.p50)))
		} else {
			row = append(row, "", "", "")
		}
		row = append(row, strconv.FormatInt(c.handler.calls.Total(), 10), strconv.FormatInt(c.table.Total(), 10),
			strconv.FormatInt(c.floor.calls.Total(), 10), reqs(c.handler.requests), reqs(c.floor.requests),
			"", "", "", "", "", errText(c.err))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	for _, c := range r.contention {
		row := []string{"contention", c.backend, "insert", "", strconv.Itoa(c.writers)}
		row = append(row, make([]string, 16)...)
		row = append(row, strconv.Itoa(c.edits), num(c.editsPerS()), num(c.retriesPerEdit()),
			strconv.Itoa(c.gaveUp), strconv.Itoa(c.lost+c.dup), errText(c.err))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	for _, c := range r.processes {
		row := []string{"processes", c.backend, "insert", strconv.Itoa(c.files), strconv.Itoa(c.writers)}
		row = append(row, make([]string, 16)...)
		row = append(row, strconv.Itoa(c.edits), num(c.rate()), "",
			strconv.Itoa(c.gaveUp), strconv.Itoa(c.lost+c.dup), errText(c.err))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	for _, s := range r.scale {
		row := []string{"scale", s.backend, s.op, strconv.Itoa(s.files), ""}
		row = append(row, timing(s.handler, s.floor)...)
		row = append(row, "", "", "",
			strconv.FormatInt(s.handler.calls.Total(), 10), strconv.FormatInt(s.table.Total(), 10),
			strconv.FormatInt(s.floor.calls.Total(), 10), reqs(s.handler.requests), reqs(s.floor.requests),
			"", "", "", "", "", errText(s.err))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// fmtDur formats a latency with three significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	case d < time.Millisecond:
		return sig3(float64(d)/1e3) + " µs"
	case d < time.Second:
		return sig3(float64(d)/1e6) + " ms"
	}
	return sig3(d.Seconds()) + " s"
}

// sig3 formats v (at least 1) with three significant digits.
func sig3(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// fmtCounts spells out the calls: "Get 1 + Put 1".
func fmtCounts(c blob.Counts) string {
	var parts []string
	add := func(name string, n int64) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	add("Get", c.Get)
	add("Stat", c.Stat)
	add("List", c.List)
	add("Put", c.Put)
	add("Delete", c.Delete)
	add("Rename", c.Rename)
	add("DeleteTree", c.DeleteTree)
	add("Copy", c.Copy)
	add("DeleteBatch", c.DeleteBatch)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " + ")
}
