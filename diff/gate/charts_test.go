package gate

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
)

// chartsOf are the report's charts, in order.
func chartsOf(r *Report) []*report.Chart {
	var cs []*report.Chart
	for _, b := range r.Model().Blocks {
		if c, ok := b.(*report.Chart); ok && c.Kind == report.ChartDots {
			cs = append(cs, c)
		}
	}
	return cs
}

// Beside its dot plots the gate's page shows the merged sides as a diff
// page does: bucket bars and, with the call tree asked for, the flame
// graph.
func TestGatePictures(t *testing.T) {
	r := scenario(t, 5)
	var bars, flames int
	for _, b := range r.Model().Blocks {
		switch b := b.(type) {
		case *report.Chart:
			if b.Kind == report.ChartBars {
				bars++
			}
		case *report.Flame:
			flames++
		}
	}
	if bars == 0 || flames != 0 {
		t.Errorf("without a call tree: %d bucket bar charts, %d flame graphs; want some and none", bars, flames)
	}
	base := defaultSynth()
	r, err := runSynth(rand.New(rand.NewSource(3)), Options{Analysis: diff.Options{CallTree: true, TreeMin: render.TreeMin}}, 5, base, base.shift(rules.LockContention, 0.03))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range r.Model().Blocks {
		if f, ok := b.(*report.Flame); ok {
			var lock [2]float64
			if f.Tree != nil {
				for _, s := range f.Tree.Split {
					if s.Bucket == int(rules.LockContention) {
						lock = s.Value
					}
				}
			}
			if f.Sides != 2 || f.Tree == nil || lock[1] <= lock[0] {
				t.Errorf("flame graph of the merged sides: %+v", f)
			}
			return
		}
	}
	t.Error("with a call tree the gate's page has no flame graph")
}

// The gate's HTML holds a dot plot per check: one dot per profile per
// side with that profile's observation, the threshold line where the
// merged new share would exceed it, and the verdict in the title.
func TestDotPlots(t *testing.T) {
	r := scenario(t, 5)
	cs := chartsOf(r)
	if len(cs) != len(r.Checks) {
		t.Fatalf("%d charts for %d checks", len(cs), len(r.Checks))
	}
	for i, c := range cs {
		ck := r.Checks[i]
		if c.Kind != report.ChartDots || c.YUnit != report.ShareUnit || len(c.Series) != 2 {
			t.Fatalf("%s: chart %+v", ck.Check, c)
		}
		for side, obs := range [][]float64{ck.BaseProfiles, ck.NewProfiles} {
			var got []float64
			for _, p := range c.Series[side].Points {
				got = append(got, p.Y)
			}
			if len(obs) != 5 || !slices.Equal(got, obs) {
				t.Errorf("%s side %d: dots %v, want the 5 observations %v", ck.Check, side, got, obs)
			}
		}
		// The line is where Limit.Exceeded turns for the merged new share.
		limit := *c.Threshold
		if ck.Threshold.Exceeded(ck.Base, limit-1e-6) || !ck.Threshold.Exceeded(ck.Base, limit+1e-6) {
			t.Errorf("%s: threshold line at %v, base %v, limit %s", ck.Check, limit, ck.Base, ck.Threshold)
		}
		want := "pass"
		switch ck.Verdict {
		case Fail:
			want = "FAIL"
		case Noise:
			want = "pass (not significant)"
		}
		if c.Title != ck.Check+": "+want {
			t.Errorf("title %q, want the check and %q", c.Title, want)
		}
		if !strings.Contains(c.Note, "U test") || !strings.Contains(c.Note, render.Pct(ck.New)) {
			t.Errorf("note %q says neither the test nor the merged new share", c.Note)
		}
	}
	if !strings.HasSuffix(cs[0].Title, "FAIL") {
		t.Errorf("lock-contention's chart: %q", cs[0].Title)
	}
}

// A relative threshold's line is the base share times the growth allowed.
func TestDotPlotRelativeThreshold(t *testing.T) {
	r := &Report{Mode: ModeMerged, Checks: []CheckResult{{Check: "gc", Base: 0.1, New: 0.2, Threshold: Limit{Amount: 25, Relative: true},
		BaseProfiles: []float64{0.1}, NewProfiles: []float64{0.2}, Verdict: Fail}}}
	cs := r.charts()
	c := cs[0].(*report.Chart)
	if math.Abs(*c.Threshold-0.125) > 1e-12 || c.ThresholdLabel != "base 10.00% +25% = 12.50%" {
		t.Errorf("threshold %v %q", *c.Threshold, c.ThresholdLabel)
	}
	if strings.Contains(c.Note, "U test") {
		t.Errorf("merged mode's note mentions the test: %q", c.Note)
	}
}
