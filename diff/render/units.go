package render

import (
	"math"
	"strconv"
	"strings"
)

// scale is a unit's ladder of display units, smallest first: a value is
// shown in the largest step it reaches (in base units).
type scale struct {
	base  float64 // the profile unit in the ladder's first step
	steps []step
	zero  string // how zero reads
}

type step struct {
	size float64 // in the ladder's first step
	name string
}

var (
	timeSteps  = []step{{1, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}}
	delaySteps = []step{{1, "ns/s"}, {1e3, "µs/s"}, {1e6, "ms/s"}, {1e9, "s/s"}}
	byteSteps  = []step{{1, "B"}, {1 << 10, "KiB"}, {1 << 20, "MiB"}, {1 << 30, "GiB"}, {1 << 40, "TiB"}}
	rateSteps  = []step{{1, "B/s"}, {1 << 10, "KiB/s"}, {1 << 20, "MiB/s"}, {1 << 30, "GiB/s"}, {1 << 40, "TiB/s"}}
)

// scales are the units shown scaled; the others are a number and the
// unit's name ("0.53 cores"), or a bare number for counts.
var scales = map[string]scale{
	"nanoseconds":  {1, timeSteps, "0 s"},
	"ns":           {1, timeSteps, "0 s"},
	"microseconds": {1e3, timeSteps, "0 s"},
	"milliseconds": {1e6, timeSteps, "0 s"},
	"seconds":      {1e9, timeSteps, "0 s"},
	"s":            {1e9, timeSteps, "0 s"},
	"s/s":          {1e9, delaySteps, "0 s/s"},
	"bytes":        {1, byteSteps, "0 B"},
	"bytes/s":      {1, rateSteps, "0 B/s"},
}

// amount is a value in unit as people read it, with three significant
// digits: 4.79e9 nanoseconds is "4.79 s", 0.012 s/s "12 ms/s", 3<<20
// bytes "3 MiB", 0.53 cores "0.53 cores"; a count is a bare number.
func amount(v float64, unit string) string {
	sc, ok := scales[unit]
	switch {
	case ok && v == 0:
		return sc.zero
	case ok:
		v *= sc.base
		// The largest step the value reaches once rounded, so that
		// 999.96 ms reads "1 s", not "1000 ms".
		st := sc.steps[0]
		for _, s := range sc.steps {
			if r, _ := strconv.ParseFloat(sig3(math.Abs(v)/s.size), 64); r >= 1 {
				st = s
			}
		}
		return sig3(v/st.size) + " " + st.name
	case unit == "" || unit == "count" || unit == bareUnit:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return sig3(v)
	}
	return sig3(v) + " " + unit
}

// signedAmount is a difference of amounts with its sign: "+298 ms/s",
// "-1.2 s"; no change is unsigned ("0 s/s").
func signedAmount(d float64, unit string) string {
	s := amount(math.Abs(d), unit)
	if d == 0 || strings.HasPrefix(s, "0 ") || s == "0" {
		return s
	}
	if d < 0 {
		return "-" + s
	}
	return "+" + s
}

// sig3 prints v with three significant digits and no trailing zeros
// ("4.79", "23", "0.0032"); values of 1000 and more are whole numbers.
func sig3(v float64) string {
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
