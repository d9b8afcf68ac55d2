package profile

import (
	"fmt"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/fleet"
)

// MaxBusy is the most cores (CPU time) or threads (thread time) a
// profile's totals may mean busy on average over its duration: a duration
// that would make more of them is taken for a wrong one (CheckTiming).
const MaxBusy = 1024

// maxDuration is the longest duration a profile may state: a day. A fleet
// query's duration is the range it states, which may be longer.
const maxDuration = 24 * time.Hour

// CheckTiming checks l.Profile's duration, time stamp, period and totals
// against each other before any rate is worked out from them, and drops
// (sets to 0) what cannot be true, with one warning each naming the source
// and the values:
//   - a duration that is negative, equals the profile's own time stamp
//     (a range whose start was left at 0, as Pyroscope's querier writes
//     end − start), is longer than a day, or is so short that a sample
//     type's total of CPU time would mean more than MaxBusy cores busy,
//     or of thread time more than MaxBusy threads, is dropped: the
//     profile has no duration, so no rates;
//   - a sampling period that is negative, or (in a unit of time) longer
//     than the duration, is dropped. A zero period is no period already
//     (the loader says so).
//
// sums are the totals of l.Profile's sample types, by index. l.Format
// and l.Kind must be set (each sample type's kind decides whether it is
// CPU or thread time). A fleet source is left alone: its duration is the
// range its query states (applied after loading). Every loader runs it;
// it is exported for the pull reader, which reads pprof without the model.
func CheckTiming(l *Loaded, sums []int64) {
	p := l.Profile
	if p == nil || fleet.IsSource(l.Source) {
		return
	}
	if why := implausibleDuration(l, sums); why != "" {
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %s: not a duration, so no rates for this profile", l.Source, why))
		p.DurationNanos = 0
	}
	if why := implausiblePeriod(p); why != "" {
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %s: the period is left out", l.Source, why))
		p.Period = 0
	}
}

// implausibleDuration says what is wrong with l.Profile's duration, ""
// when nothing is (or there is none).
func implausibleDuration(l *Loaded, sums []int64) string {
	p := l.Profile
	d := p.DurationNanos
	switch {
	case d == 0:
		return ""
	case d < 0:
		return fmt.Sprintf("duration %d ns is negative", d)
	case d == p.TimeNanos:
		return fmt.Sprintf("duration %s equals the profile's time stamp, %s (the time since 1970)", durationText(d), time.Unix(0, p.TimeNanos).UTC().Format(time.RFC3339))
	case d > int64(maxDuration):
		return fmt.Sprintf("duration %s is longer than a day", durationText(d))
	}
	for i, st := range p.SampleType {
		if i >= len(sums) {
			break
		}
		what := busyUnit(l, st)
		if what == "" {
			continue
		}
		busy := float64(sums[i]) * nanosPer(st.Unit) / float64(d)
		if busy > MaxBusy {
			return fmt.Sprintf("duration %s with %s of %s would mean %.4g %s busy, more than %d", durationText(d), durationText(int64(float64(sums[i])*nanosPer(st.Unit))), typeName(st), busy, what, MaxBusy)
		}
	}
	return ""
}

// busyUnit is what a sample type's total over the duration counts:
// "cores" for CPU time, "threads" for the thread time of a producer that
// samples threads; "" for anything else (counts, bytes, delays, and the
// goroutine time of Go's producers, of which a program may have any
// number).
func busyUnit(l *Loaded, st *pprofile.ValueType) string {
	if nanosPer(st.Unit) == 0 {
		return ""
	}
	switch KindOfType(l, st.Type) {
	case KindCPU:
		return "cores"
	case KindWall:
		switch l.Format {
		case FormatPprof, FormatPprofLegacy, FormatGoTrace:
			return ""
		}
		return "threads"
	}
	return ""
}

// implausiblePeriod says what is wrong with p's period against its
// duration (checked first), "" when nothing is.
func implausiblePeriod(p *pprofile.Profile) string {
	switch {
	case p.Period < 0:
		return fmt.Sprintf("sampling period %d (%s) is negative", p.Period, typeName(p.PeriodType))
	case p.Period == 0 || p.DurationNanos <= 0 || p.PeriodType == nil || nanosPer(p.PeriodType.Unit) == 0:
		return ""
	}
	if ns := float64(p.Period) * nanosPer(p.PeriodType.Unit); ns > float64(p.DurationNanos) {
		return fmt.Sprintf("sampling period %s (%s) is longer than the duration, %s", durationText(int64(ns)), typeName(p.PeriodType), durationText(p.DurationNanos))
	}
	return ""
}

// nanosPer is the number of nanoseconds in one of unit, 0 when unit is
// not a unit of time.
func nanosPer(unit string) float64 {
	switch unit {
	case "nanoseconds", "ns":
		return 1
	case "microseconds", "us":
		return 1e3
	case "milliseconds", "ms":
		return 1e6
	case "seconds", "s":
		return 1e9
	}
	return 0
}

// durationText writes ns as Go writes a time.Duration ("1.5s", "2h0m0s"),
// or in whole seconds past a day, where hours grow unreadable
// ("1708078386 s").
func durationText(ns int64) string {
	if ns > int64(maxDuration) {
		return fmt.Sprintf("%d s", ns/1e9)
	}
	return time.Duration(ns).String()
}
