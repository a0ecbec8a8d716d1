package faultrun

import (
	"context"
	"strconv"
	"testing"
)

func TestSent(t *testing.T) {
	lineFor := func(w, i int) string { return "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i) }
	issued := []int{2, 0, 1}
	for l, want := range map[string]bool{
		"w0-0": true, "w0-1": true, "w2-0": true,
		"w0-2": false, "w1-0": false, "w3-0": false, // beyond what each writer sent
		"w0-01": false, "w-1-0": false, "w0": false, "x0-0": false, "start": false, "": false,
	} {
		if got := sent(l, issued, lineFor); got != want {
			t.Errorf("sent(%q) = %v, want %v", l, got, want)
		}
	}
}

func TestRunNeedsAPlan(t *testing.T) {
	for _, r := range []Run{{}, {Writers: 1, On: 1}, {Writers: 1, Lines: 1}, {Writers: 1, Lines: -1, On: 1}} {
		if _, err := r.Do(context.Background()); err == nil {
			t.Errorf("Run%+v.Do: no error", r)
		}
	}
}
