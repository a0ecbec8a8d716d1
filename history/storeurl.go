package history

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The store URL parameters of history (see ParseParams).
const (
	ParamHistory = "history"         // on (or off): record every change
	ParamKeep    = "history_keep"    // Options.Keep
	ParamMaxAge  = "history_max_age" // Options.MaxAge: a Go duration ("720h") or a number of days ("30d")
	ParamActor   = "history_actor"   // Options.Actor
)

// Params are the names of the history parameters, sorted.
var Params = []string{ParamHistory, ParamActor, ParamKeep, ParamMaxAge}

// ParseParams reads the history parameters of a store URL's query:
//
//	history=on                 record every change (on, off, true, false, 1 or 0)
//	history_keep=N             Prune keeps the last N versions of each path
//	history_max_age=DURATION   Prune keeps versions younger than DURATION ("720h", "30d")
//	history_actor=NAME         the actor of changes whose context names none
//
// It returns the Options they give and whether history is on. Each may
// appear at most once; the other three need history=on. It ignores every
// other parameter. Its errors name the parameter.
func ParseParams(q url.Values) (opts Options, on bool, err error) {
	for _, name := range Params {
		if n := len(q[name]); n > 1 {
			return Options{}, false, fmt.Errorf("history: parameter %s given %d times", name, n)
		}
	}
	if v, ok := q[ParamHistory]; ok {
		switch strings.ToLower(v[0]) {
		case "on", "true", "1":
			on = true
		case "off", "false", "0":
		default:
			return Options{}, false, fmt.Errorf("history: %s=%q: want on or off", ParamHistory, v[0])
		}
	}
	for _, name := range Params[1:] {
		if _, ok := q[name]; ok && !on {
			return Options{}, false, fmt.Errorf("history: %s needs %s=on", name, ParamHistory)
		}
	}
	if v, ok := q[ParamKeep]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 0 {
			return Options{}, false, fmt.Errorf("history: %s=%q: want a whole number, 0 or more", ParamKeep, v[0])
		}
		opts.Keep = n
	}
	if v, ok := q[ParamMaxAge]; ok {
		d, err := parseAge(v[0])
		if err != nil {
			return Options{}, false, fmt.Errorf("history: %s=%q: %w", ParamMaxAge, v[0], err)
		}
		opts.MaxAge = d
	}
	if v, ok := q[ParamActor]; ok {
		opts.Actor = v[0]
	}
	return opts, on, nil
}

// parseAge parses a Go duration, or a whole number of days ("30d").
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100_000 {
			return 0, fmt.Errorf("want a duration such as 720h or 30d")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 720h or 30d")
	}
	return d, nil
}
