package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"
)

// maxDuration bounds every window length: a day is longer than any
// capture or load run a person means, and a typo such as 10000 (seconds)
// is caught before a server is held for it.
const maxDuration = 24 * time.Hour

// durationValue is a --duration flag's value: a Go duration ("90s",
// "1m30s", "500ms") or a bare number meaning seconds ("10", "2.5"), as
// pprof's -seconds.
type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

func (d *durationValue) String() string { return time.Duration(*d).String() }
func (d *durationValue) Type() string   { return "duration" }

// parseDuration reads a window length: a Go duration, or a bare number
// of seconds.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		// Bound before converting, so that 1e300 is an error, not an
		// overflowed duration.
		if math.IsNaN(f) || math.Abs(f) > 2*maxDuration.Seconds() {
			return 0, fmt.Errorf("%s seconds is out of range (at most %v)", s, maxDuration)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && durationShape.MatchString(s):
		// Well formed, so too long for a time.Duration (292 years).
		return 0, fmt.Errorf("%s is out of range (at most %v)", s, maxDuration)
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration (want a number of seconds, or a Go duration such as 500ms, 10s or 1m30s)", s)
	}
	return d, nil
}

// durationShape matches what time.ParseDuration reads, whatever the size.
var durationShape = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// durationFlag registers --duration (-d) on fs, set to def, and, when
// alias, the hidden --seconds of earlier releases, which sets the same
// value and now takes the same words.
func durationFlag(fs *flag.FlagSet, d *time.Duration, def time.Duration, usage string, alias bool) {
	*d = def
	shape := " (a number of seconds, or a duration such as 500ms or 1m30s)"
	if strings.Contains(usage, "whole seconds") {
		shape = " (a number of seconds, or a duration such as 2s or 1m30s)"
	}
	fs.VarP((*durationValue)(d), "duration", "d", usage+shape)
	if alias {
		fs.Var((*durationValue)(d), "seconds", "old name of --duration")
		_ = fs.MarkHidden("seconds")
	}
}

// durationVar registers a duration flag other than --duration (--warmup,
// --timeout) that takes the same words: a Go duration or a bare number of
// seconds.
func durationVar(fs *flag.FlagSet, d *time.Duration, name string, def time.Duration, usage string) {
	*d = def
	fs.Var((*durationValue)(d), name, usage)
}

// checkDuration validates a window length given as --duration: positive,
// at most maxDuration and, for a window profiles are captured over
// (whole), a whole number of seconds, since /debug/pprof/profile takes
// ?seconds= as an integer.
func checkDuration(cmd string, d time.Duration, whole bool) error {
	switch {
	case d <= 0:
		return usagef("%s: --duration must be positive, not %v", cmd, d)
	case d > maxDuration:
		return usagef("%s: --duration %v is longer than the %v allowed", cmd, d, maxDuration)
	case whole && d%time.Second != 0:
		lo := d.Truncate(time.Second)
		if lo == 0 {
			return usagef("%s: --duration %v: profiles are captured over whole seconds (pprof's ?seconds=); use 1s", cmd, d)
		}
		return usagef("%s: --duration %v: profiles are captured over whole seconds (pprof's ?seconds=); use %v or %v", cmd, d, lo, lo+time.Second)
	}
	return nil
}

// wholeSeconds is a window checked by checkDuration(…, true) in seconds.
func wholeSeconds(d time.Duration) int { return int(d / time.Second) }
