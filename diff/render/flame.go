package render

import (
	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// diffFlame is the flame-graph block of a diff whose result holds a call
// tree (nil when it holds none).
func diffFlame(r *diff.Result) report.Block {
	if r.Tree == nil {
		return nil
	}
	return &report.Flame{Tree: r.Tree, Sides: 2, Unit: r.Unit, RateUnit: r.RateUnit, Measure: r.Normalize,
		Seconds: [2]float64{seconds(r.Base.DurationNanos), seconds(r.New.DurationNanos)}, Labels: [2]string{"base", "new"}}
}

// topFlame is the flame graph of a top listing (one side).
func topFlame(t *diff.TopResult) report.Block {
	if t.Tree == nil {
		return nil
	}
	return &report.Flame{Tree: t.Tree, Sides: 1, Unit: t.Unit, RateUnit: t.RateUnit, Measure: t.Normalize,
		Seconds: [2]float64{seconds(t.DurationNanos), 0}, Labels: [2]string{"profile", ""}}
}

// seconds is a duration in nanoseconds as seconds (0 stays unknown).
func seconds(ns int64) float64 { return float64(ns) / 1e9 }
