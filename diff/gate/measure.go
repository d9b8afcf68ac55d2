package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/units"
	"github.com/profdiff/profdiff/profile"
)

// Measure is what a check compares between the sides.
type Measure string

const (
	// MeasureShare: the check's share of each profile's total (fraction
	// 0..1), the gate's measure wherever shares can move.
	MeasureShare Measure = "share"
	// MeasureRate: the check's value per second of each profile's
	// duration (delay in s/s for mutex and block profiles), where shares
	// cannot move and every profile records its duration.
	MeasureRate Measure = "rate"
	// MeasurePerRun: the check's value in each profile, one run, in the
	// profile's unit, where shares cannot move and durations are unknown.
	MeasurePerRun Measure = "per-run"
)

// ErrCannotEvaluate is returned by Report when a check given explicitly
// cannot be evaluated on the profiles: a percentage-point threshold on a
// share that is 100% of every profile, or a bucket the profile kind never
// records. The message says what to write or capture instead.
var ErrCannotEvaluate = errors.New("check cannot be evaluated on these profiles")

// DefaultAbsolute is the threshold a default check takes where shares
// cannot move and it compares absolute values instead: 2x, the value may
// not double.
func DefaultAbsolute() Limit { return Limit{Amount: 2, Factor: true} }

// planned is a check as the gate evaluates it on the given profiles.
type planned struct {
	Check
	index   int // the check's index in Options.Checks
	measure Measure
	unit    string     // unit of absolute values; "" for shares
	scale   float64    // seconds per unit of the profiles' values (1 for counts)
	div     [2]float64 // per side, what merged values are divided by (total, profiles, or seconds/scale)
	why     string     // for an absolute measure: why shares cannot move
}

// stuck reports whether check c (index i) selects everything in every
// profile with samples on both sides, so that its share is 100% however
// much the program waits: a mutex profile is all lock contention, a block
// profile all off-CPU time, and a block profile whose every sample is one
// lock is all lock contention.
func stuck(i int, c Check, sides [2][]observed) bool {
	some := false
	for _, side := range sides {
		for _, o := range side {
			if o.Total == 0 {
				continue
			}
			some = true
			if o.value(i, c) < o.Total*(1-1e-9) {
				return false
			}
		}
	}
	return some
}

// plan decides how each check is measured on these profiles. Where a
// check's share is 100% of every profile it cannot move, so the check
// compares absolute values: the value per second where every profile has
// a duration (and the kind is not a snapshot), else the value per run. A
// default check adapts (its threshold becomes DefaultAbsolute(); sync is
// dropped where it selects what lock-contention selects); a check given
// explicitly that cannot be evaluated is an ErrCannotEvaluate. notes say
// which checks compare absolute values, and why.
func (g *Gate) plan(k profile.Kind, d *result.Result, sides [2][]observed) ([]planned, []string, error) {
	var n [2]int
	var dur [2]float64 // seconds
	snapshot := k == profile.KindGoroutine || k == profile.KindHeap
	timed := !snapshot && d.RateUnit != ""
	for side, list := range sides {
		n[side] = len(list)
		for _, o := range list {
			if o.DurationNanos <= 0 {
				timed = false
			}
			dur[side] += float64(o.DurationNanos) / 1e9
		}
	}
	scale := units.Seconds(d.Base.Unit)
	if scale == 0 {
		scale = 1
	}
	what := d.SampleType
	if i := strings.LastIndexByte(what, '/'); i >= 0 {
		what = what[:i]
	}
	var out []planned
	var notes []string
	lockStuck := false
	for i, c := range g.opts.Checks {
		if err := impossible(k, c); err != nil {
			return nil, nil, err
		}
		p := planned{Check: c, index: i, measure: MeasureShare, scale: scale, div: [2]float64{d.Base.Total, d.New.Total}}
		if !stuck(i, c, sides) {
			out = append(out, p)
			continue
		}
		p.why = fmt.Sprintf("every profile is 100%% %s, so its share cannot move", c.Name())
		if k == profile.KindMutex {
			p.why = "mutex profiles are all lock contention, so its share cannot move"
		}
		switch {
		case g.defaults && c.Target == TargetSync && lockStuck:
			continue // the same samples as lock-contention's
		case g.defaults:
			p.Max = DefaultAbsolute()
		case c.Max.Points():
			return nil, nil, fmt.Errorf("%w: %s: %s; write %s=2x or %s=+50%% to compare its %s instead of its share, or capture %s",
				ErrCannotEvaluate, c.String(), p.why, c.Name(), c.Name(), what, captureInstead(k, c.Name()))
		}
		if c.Target == TargetBucket && c.Bucket == rules.LockContention {
			lockStuck = true
		}
		if timed {
			p.measure, p.unit, p.div = MeasureRate, d.RateUnit, [2]float64{dur[0] / scale, dur[1] / scale}
			notes = append(notes, fmt.Sprintf("the %s per second (%s) is compared for %s: %s", what, d.RateUnit, c.Label(), p.why))
		} else {
			p.measure, p.unit, p.div = MeasurePerRun, d.Base.Unit, [2]float64{float64(n[0]), float64(n[1])}
			per := "the profiles record no duration"
			if snapshot {
				per = "each profile is a snapshot"
			}
			notes = append(notes, fmt.Sprintf("the %s per run is compared for %s: %s (%s)", what, c.Label(), p.why, per))
		}
		out = append(out, p)
	}
	return out, notes, nil
}

// impossible is an ErrCannotEvaluate for a bucket check that profiles of
// kind k never record, so that it could never fail: the classifier files
// every sample of a mutex profile under lock-contention.
func impossible(k profile.Kind, c Check) error {
	if k == profile.KindMutex && c.Target == TargetBucket && c.Bucket != rules.LockContention {
		return fmt.Errorf("%w: %s: mutex profiles record only lock contention, never %s; capture block profiles or wall-clock (fgprof) profiles to gate %s",
			ErrCannotEvaluate, c.String(), c.Name(), c.Name())
	}
	return nil
}

// captureInstead says which profiles let the share of check name move
// where it cannot on profiles of kind k.
func captureInstead(k profile.Kind, name string) string {
	if k == profile.KindMutex {
		return "block profiles or wall-clock (fgprof) profiles, where " + name + " is a share of the time that can move"
	}
	return "wall-clock (fgprof) profiles, where " + name + " is a share of all the time that can move"
}

// observe is planned check p's observation of profile o.
func (p *planned) observe(o *observed) float64 {
	switch p.measure {
	case MeasureRate:
		return o.value(p.index, p.Check) * p.scale / (float64(o.DurationNanos) / 1e9)
	case MeasurePerRun:
		return o.value(p.index, p.Check)
	}
	return o.share(p.index, p.Check)
}
