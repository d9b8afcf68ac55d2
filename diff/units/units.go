// Package units is profdiff's one table of the units its numbers come in:
// which units are time and how many seconds one of them is (the engine
// turns time into seconds to make rates), and how an amount in each is
// shown to people: a ladder of display units, 4.79e9 nanoseconds as
// "4.79 s", 0.012 s/s (seconds of delay per second) as "12 ms/s", 3<<20
// bytes as "3 MiB", with three significant digits.
//
// Units without a ladder are shown as a number and the unit's name ("0.53
// cores", "1235 threads"), or as a bare number for counts ("", "count").
// A change between two amounts is said as a ratio note ("18x", "doubled",
// "new"; RatioNote), with the measure it compares ("18x rate"; InMeasure).
//
// It imports only the standard library, so that the engine (package diff)
// and the layout (package diff/render) read the same table without one
// depending on the other.
package units

import (
	"math"
	"strconv"
	"strings"
)

// Ladder is a unit's display units, smallest first: an amount is shown in
// the largest step it reaches.
type Ladder struct {
	// Base is one of the unit in the first step's units (1e3 for
	// microseconds on the nanosecond ladder).
	Base  float64
	Steps []Step
	// Zero is how zero reads ("0 s").
	Zero string
}

// Step is a display unit of a ladder: its size in the ladder's first
// step's units and its name.
type Step struct {
	Size float64
	Name string
}

// The ladders' steps. Never written: Lookup hands out copies.
var (
	timeSteps  = []Step{{1, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}}
	delaySteps = []Step{{1, "ns/s"}, {1e3, "µs/s"}, {1e6, "ms/s"}, {1e9, "s/s"}}
	byteSteps  = []Step{{1, "B"}, {1 << 10, "KiB"}, {1 << 20, "MiB"}, {1 << 30, "GiB"}, {1 << 40, "TiB"}}
	rateSteps  = []Step{{1, "B/s"}, {1 << 10, "KiB/s"}, {1 << 20, "MiB/s"}, {1 << 30, "GiB/s"}, {1 << 40, "TiB/s"}}
)

// entry is a unit of the table: its ladder and whether it is time.
type entry struct {
	Ladder
	// time marks units of time, whose Base is in nanoseconds.
	time bool
}

// table holds the units shown scaled, by the names profiles and results
// give them. Never written.
var table = map[string]entry{
	"nanoseconds":  {Ladder{1, timeSteps, "0 s"}, true},
	"ns":           {Ladder{1, timeSteps, "0 s"}, true},
	"microseconds": {Ladder{1e3, timeSteps, "0 s"}, true},
	"us":           {Ladder{1e3, timeSteps, "0 s"}, true},
	"milliseconds": {Ladder{1e6, timeSteps, "0 s"}, true},
	"ms":           {Ladder{1e6, timeSteps, "0 s"}, true},
	"seconds":      {Ladder{1e9, timeSteps, "0 s"}, true},
	"s":            {Ladder{1e9, timeSteps, "0 s"}, true},
	"s/s":          {Ladder{1e9, delaySteps, "0 s/s"}, false},
	"bytes":        {Ladder{1, byteSteps, "0 B"}, false},
	"bytes/s":      {Ladder{1, rateSteps, "0 B/s"}, false},
}

// Seconds is the number of seconds in one of unit when it is a unit of
// time (nanoseconds, ns, microseconds, us, milliseconds, ms, seconds, s),
// else 0.
func Seconds(unit string) float64 {
	e := table[unit]
	if !e.time {
		return 0
	}
	// Base is in nanoseconds; dividing these powers of ten is exact (1e3/1e9
	// is the float64 nearest 1e-6, as the literal 1e-6 is).
	return e.Base / 1e9
}

// Scaled reports whether amounts in unit are shown on a ladder (see
// Format), rather than as a number and the unit's name.
func Scaled(unit string) bool {
	_, ok := table[unit]
	return ok
}

// Lookup returns unit's ladder, a copy the caller may keep, and whether
// it has one.
func Lookup(unit string) (Ladder, bool) {
	e, ok := table[unit]
	l := e.Ladder
	if ok {
		l.Steps = append([]Step(nil), l.Steps...)
	}
	return l, ok
}

// Format is an amount v in unit as people read it, with three significant
// digits: 4.79e9 nanoseconds is "4.79 s", 0.012 s/s "12 ms/s", 3<<20 bytes
// "3 MiB", 0.53 cores "0.53 cores"; a count ("" or "count") is a bare
// number, whole numbers as they are.
func Format(v float64, unit string) string {
	l, ok := table[unit]
	switch {
	case ok && v == 0:
		return l.Zero
	case ok:
		v *= l.Base
		// The largest step the value reaches once rounded, so that
		// 999.96 ms reads "1 s", not "1000 ms".
		st := l.Steps[0]
		for _, s := range l.Steps {
			if r, _ := strconv.ParseFloat(Sig3(math.Abs(v)/s.Size), 64); r >= 1 {
				st = s
			}
		}
		return Sig3(v/st.Size) + " " + st.Name
	case unit == "" || unit == "count":
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return Sig3(v)
	}
	return Sig3(v) + " " + unit
}

// Signed is a difference of amounts in unit with its sign, as Format
// shows amounts: "+298 ms/s", "-1.2 s"; no change is unsigned ("0 s/s").
func Signed(d float64, unit string) string {
	s := Format(math.Abs(d), unit)
	if d == 0 || strings.HasPrefix(s, "0 ") || s == "0" {
		return s
	}
	if d < 0 {
		return "-" + s
	}
	return "+" + s
}

// Sig3 prints v with three significant digits and no trailing zeros
// ("4.79", "23", "0.0032"); values of 1000 and more are whole numbers.
func Sig3(v float64) string {
	a := math.Abs(v)
	if a == 0 {
		return "0"
	}
	digits := 0
	if a < 1000 {
		digits = max(0, 2-int(math.Floor(math.Log10(a))))
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	// Rounding up may reach the next power of ten ("1000" from 999.95):
	// still three significant digits, fine as it is.
	return s
}
