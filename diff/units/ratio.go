package units

import (
	"fmt"
	"math"
)

// RatioNote describes a change from base to new (both ≥ 0) the way a
// person would: "new", "gone", "doubled", "halved", "Nx" (new is N times
// base), "1/N" (new is an N-th of base). A ratio of 1.75 up to 2.5 reads
// as doubled (its inverse as halved); from 2.5 on the ratio is rounded, so
// the smallest "Nx" is 3x. Smaller changes get no note (""): the delta
// says enough. Past a thousandfold the exact ratio says nothing a person
// can use (a lock nearly gone reads "1/221033"): it is ">1000x" or
// "<1/1000". The note's direction is the sign of new-base, always.
//
// The engine's row notes, the verdict and the flame graph's tooltips all
// say a ratio with it; the html page's script mirrors it.
func RatioNote(base, new float64) string {
	switch {
	case base == 0 && new == 0:
		return ""
	case base == 0:
		return "new"
	case new == 0:
		return "gone"
	}
	r := new / base
	switch {
	case r > 1000:
		return ">1000x"
	case r < 1.0/1000:
		return "<1/1000"
	case r >= 2.5:
		return fmt.Sprintf("%.0fx", math.Round(r))
	case r >= 1.75:
		return "doubled"
	case r <= 1/2.5:
		return fmt.Sprintf("1/%.0f", math.Round(1/r))
	case r <= 1/1.75:
		return "halved"
	}
	return ""
}

// InMeasure is a ratio note (RatioNote) saying which measure it compares,
// the measure's name after it: "18x rate", "doubled share", "1/3 value";
// "new", "gone" and no note need no measure and are returned as they are.
func InMeasure(note, measure string) string {
	switch note {
	case "", "new", "gone":
		return note
	}
	return note + " " + measure
}
