package history_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/history"
)

func TestParseParams(t *testing.T) {
	good := []struct {
		query string
		on    bool
		opts  history.Options
	}{
		{"", false, history.Options{}},
		{"history=off", false, history.Options{}},
		{"history=on", true, history.Options{}},
		{"history=true&history_keep=10&history_max_age=30d&history_actor=ci%40build", true,
			history.Options{Keep: 10, MaxAge: 30 * 24 * time.Hour, Actor: "ci@build"}},
		{"history=1&history_max_age=36h&region=x", true, history.Options{MaxAge: 36 * time.Hour}},
	}
	for _, c := range good {
		q, _ := url.ParseQuery(c.query)
		opts, on, err := history.ParseParams(q)
		if err != nil || on != c.on || opts.Keep != c.opts.Keep || opts.MaxAge != c.opts.MaxAge || opts.Actor != c.opts.Actor {
			t.Errorf("ParseParams(%q) = %+v, %v, %v; want %+v, %v", c.query, opts, on, err, c.opts, c.on)
		}
	}
	bad := []struct{ query, err string }{
		{"history=yes", "history: history=\"yes\": want on or off"},
		{"history=on&history=off", "history: parameter history given 2 times"},
		{"history_keep=3", "history: history_keep needs history=on"},
		{"history=on&history_keep=+2", `history: history_keep=" 2": want a whole number, 0 or more`}, // + decodes as a space
		{"history=on&history_keep=-1", "history: history_keep=\"-1\": want a whole number, 0 or more"},
		{"history=on&history_max_age=forever", "history: history_max_age=\"forever\": want a duration such as 720h or 30d"},
		{"history=on&history_max_age=-1h", "history: history_max_age=\"-1h\": want a duration such as 720h or 30d"},
	}
	for _, c := range bad {
		q, _ := url.ParseQuery(c.query)
		if _, _, err := history.ParseParams(q); err == nil || err.Error() != c.err {
			t.Errorf("ParseParams(%q): %v, want %s", c.query, err, c.err)
		}
	}
}
