package diff

import (
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/units"
	"github.com/profdiff/profdiff/profile"
)

// snapshotKind reports whether a kind's profiles are snapshots (goroutine
// counts, heap contents) whose rate is the mean per profile, not a value
// per second.
func snapshotKind(k profile.Kind) bool {
	return k == profile.KindGoroutine || k == profile.KindHeap
}

// meaningOf says what buckets of a kind measure.
func meaningOf(k profile.Kind) result.Meaning {
	switch k {
	case profile.KindCPU:
		return result.MeaningCPU
	case profile.KindMutex, profile.KindBlock:
		return result.MeaningDelay
	case profile.KindHeap:
		return result.MeaningMemory
	}
	return result.MeaningState
}

// goProducer reports whether a format's wall-clock samples are of
// goroutines (Go's pprof writers, fgprof, Go execution traces) rather than
// of threads (perf, speedscope, .NET EventPipe).
func goProducer(f profile.Format) bool {
	return f == profile.FormatPprof || f == profile.FormatPprofLegacy || f == profile.FormatGoTrace
}

// rateUnit names the unit of rates of a kind whose values are typ/unit,
// from a profile of format f (see doc.go, "Values, rates and measures").
func rateUnit(k profile.Kind, typ, unit string, f profile.Format) string {
	switch k {
	case profile.KindGoroutine:
		return "goroutines"
	case profile.KindHeap:
		if unit == "count" {
			return "objects"
		}
		return unit
	}
	if units.Seconds(unit) == 0 {
		if unit == "count" && typ != "" {
			return typ + "/s" // samples/s, contentions/s, cycles/s
		}
		return unit + "/s"
	}
	switch k {
	case profile.KindCPU:
		return "cores"
	case profile.KindMutex, profile.KindBlock:
		return "s/s"
	}
	if goProducer(f) {
		return "goroutines"
	}
	return "threads"
}

// rates is what turns a result's raw values into rates: per side, the
// factor to multiply a value by, or nil when that side's rate is unknown.
type rates struct {
	unit   string // Analysis.RateUnit, "" when neither side has a rate
	factor [2]*float64
}

// rates works out the rate factors of both sides for kind k: a snapshot
// kind's rate is its mean per profile; any other kind's the value (in
// seconds, for time units) per second of the side's wall time, the sum of
// its profiles' durations, known only when every profile has one.
func (a *Analyzer) rates(k profile.Kind) rates {
	var n [2]int
	var dur [2]int64
	var missing [2]bool
	for i := range a.profiles {
		p := &a.profiles[i]
		n[p.Side]++
		if p.DurationNanos > 0 {
			dur[p.Side] += p.DurationNanos
		} else {
			missing[p.Side] = true
		}
	}
	var r rates
	scale := units.Seconds(a.unit)
	if scale == 0 {
		scale = 1
	}
	for side := range r.factor {
		switch {
		case n[side] == 0:
		case snapshotKind(k):
			f := 1 / float64(n[side])
			r.factor[side] = &f
		case !missing[side] && dur[side] > 0:
			f := scale / (float64(dur[side]) / 1e9)
			r.factor[side] = &f
		}
	}
	if r.factor[result.Base] != nil || r.factor[result.New] != nil {
		r.unit = rateUnit(k, a.sampleTypeName(), a.unit, a.format)
	}
	return r
}

// sampleTypeName is the type half of the result's "type/unit".
func (a *Analyzer) sampleTypeName() string {
	for i := len(a.sampleType) - 1; i >= 0; i-- {
		if a.sampleType[i] == '/' {
			return a.sampleType[:i]
		}
	}
	return a.sampleType
}

// rate is v times a side's factor, nil when unknown.
func (r *rates) rate(side result.Side, v float64) *float64 {
	f := r.factor[side]
	if f == nil {
		return nil
	}
	x := v * *f
	return &x
}

// known reports whether both sides' rates are.
func (r *rates) known() bool { return r.factor[result.Base] != nil && r.factor[result.New] != nil }

// values fills the absolute side of a row from its raw values.
func (r *rates) values(unit string, base, new float64) result.Values {
	return result.Values{BaseValue: base, NewValue: new, BaseRate: r.rate(result.Base, base), NewRate: r.rate(result.New, new), Unit: unit, RateUnit: r.unit}
}

// resolveNormalize picks the measure: auto is rate when both sides'
// rates are known; without them, value for delay profiles (mutex, block:
// every sample is a delay, so shares stay near 100% whatever happens to
// the delay) and share for the rest. Memory (heap snapshots) compares
// values when both sides hold as many profiles, else the mean per profile
// (its rate). A rate asked for without rates falls back the same way,
// with a warning.
func resolveNormalize(n result.Normalize, known bool, m result.Meaning, sameCount bool) (result.Normalize, string) {
	fallback := result.NormalizeShare
	if m == result.MeaningDelay || m == result.MeaningMemory {
		fallback = result.NormalizeValue
	}
	switch {
	case n == result.NormalizeAuto && m == result.MeaningMemory && (sameCount || !known):
		return result.NormalizeValue, ""
	case n == result.NormalizeAuto && known:
		return result.NormalizeRate, ""
	case n == result.NormalizeAuto:
		return fallback, ""
	case n == result.NormalizeRate && !known:
		return fallback, "rates are unknown (a side's profiles do not all say how long they cover); rows are sorted and noted by " + string(fallback)
	case n == result.NormalizeRate || n == result.NormalizeValue || n == result.NormalizeShare:
		return n, ""
	}
	return result.NormalizeShare, ""
}

// measure returns a row's two sides in measure n: shares pb and pn, or
// v's values or rates.
func measure(n result.Normalize, pb, pn float64, v *result.Values) (float64, float64) {
	switch n {
	case result.NormalizeValue:
		return v.BaseValue, v.NewValue
	case result.NormalizeRate:
		if v.BaseRate != nil && v.NewRate != nil {
			return *v.BaseRate, *v.NewRate
		}
	}
	return pb, pn
}

// measureNote is the note of a row's change in measure n:
// units.RatioNote saying which measure it compares (units.InMeasure).
func measureNote(n result.Normalize, base, new float64) string {
	return units.InMeasure(units.RatioNote(base, new), string(n))
}
