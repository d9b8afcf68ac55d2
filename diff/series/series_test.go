package series_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	goldenfile "github.com/profdiff/profdiff/diff/internal/golden"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/series"
)

// rules are the thresholds the report names, as the command passes them.
var seriesRules = present.SeriesRules{MinRuns: series.MinRuns, Alpha: series.Alpha, MinMove: series.MinMove, MinRatio: series.MinRatio,
	ThresholdMove: series.ThresholdMove, ThresholdRatio: series.ThresholdRatio}

// run is one profile analysed alone, as the command analyses each run.
func run(t *testing.T, name string) *result.TopResult {
	t.Helper()
	l := fixture.Load(t, fixture.Path("testdata/dotnet/"+name))
	l.Source = "testdata/dotnet/" + name
	a := diff.NewAnalyzer(diff.Options{Top: -1})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	return a.Top()
}

// dotnetSeries is .NET 10 → 11 → 10 again: one profile a step, so the
// threshold rule judges.
func dotnetSeries(t *testing.T) *result.Series {
	t.Helper()
	s, err := series.Build([]series.Step{
		{Name: "net10", Runs: []*result.TopResult{run(t, "net10.folded")}},
		{Name: "net11", Runs: []*result.TopResult{run(t, "net11.folded")}},
		{Name: "back", Runs: []*result.TopResult{run(t, "net10.folded")}},
	}, series.Options{Top: 8})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDotnetSeries(t *testing.T) {
	s := dotnetSeries(t)
	if s.Measure != result.NormalizeShare || s.Steps[1].Test != result.TestThreshold {
		t.Fatalf("measure %s, test %s; want shares and the threshold rule (no durations, one profile a step)", s.Measure, s.Steps[1].Test)
	}
	want := map[string][]string{"lock-contention": {"3x at net11", "recovered at back"}, "gc": {"+72% at net11", "recovered at back"}}
	for _, b := range s.Buckets {
		var got []string
		for _, c := range b.Changes {
			got = append(got, c.Note+" at "+c.Name)
		}
		w, ok := want[b.Bucket.String()]
		if !ok && b.Bucket.String() != "cpu" && len(got) > 0 {
			t.Errorf("%s: changes %v, want none", b.Bucket, got)
		}
		if ok && (len(got) != len(w) || got[0] != w[0] || got[1] != w[1]) {
			t.Errorf("%s: changes %v, want %v", b.Bucket, got, w)
		}
	}
}

func TestGoldenSeries(t *testing.T) {
	s := dotnetSeries(t)
	for _, f := range append(render.Tables, render.HTML) {
		var buf bytes.Buffer
		if err := render.Report(&buf, present.Series(s, seriesRules), f); err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, "./diff/series", "series.dotnet.net10-net11-back.top8."+string(f)+".golden", buf.Bytes())
	}
}

// top is a profile's analysis made of bucket values (methods: one per
// bucket, named after it), with a duration when seconds > 0.
func top(values map[rules.Bucket]float64, methods map[string]rules.Bucket, seconds float64) *result.TopResult {
	t := &result.TopResult{Analysis: result.Analysis{SampleType: "time/nanoseconds", Meaning: result.MeaningState}, Sources: []string{"synthetic"}}
	for _, v := range values {
		t.Total += v
	}
	rate := func(v float64) *float64 {
		if seconds == 0 {
			return nil
		}
		r := v / seconds
		return &r
	}
	if seconds > 0 {
		t.RateUnit, t.DurationNanos, t.TotalRate = "goroutines", int64(seconds*1e9), rate(t.Total)
	}
	for _, b := range rules.Buckets {
		t.Buckets = append(t.Buckets, result.TopBucket{Bucket: b, Value: values[b], Share: values[b] / t.Total, Rate: rate(values[b])})
	}
	for name, b := range methods {
		t.Methods = append(t.Methods, result.TopMethod{Name: name, Bucket: b, Value: values[b], Share: values[b] / t.Total, Rate: rate(values[b])})
	}
	return t
}

// In shares, one bucket's growth is not read as the others shrinking:
// gc grows sixfold while cpu and wait keep their values, and only gc is
// flagged, with the U test (five profiles a step, jittered).
func TestShareMover(t *testing.T) {
	var before, after []*result.TopResult
	for i := range 5 {
		j := float64(i) // run-to-run jitter
		before = append(before, top(map[rules.Bucket]float64{rules.CPU: 600 + j, rules.Wait: 300 - j, rules.GC: 100 + j}, nil, 0))
		after = append(after, top(map[rules.Bucket]float64{rules.CPU: 600 - j, rules.Wait: 300 + j, rules.GC: 600 + j}, nil, 0))
	}
	s, err := series.Build([]series.Step{{Name: "a", Runs: before}, {Name: "b", Runs: after}}, series.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Measure != result.NormalizeShare || s.Steps[1].Test != result.TestU {
		t.Fatalf("measure %s test %s", s.Measure, s.Steps[1].Test)
	}
	for _, b := range s.Buckets {
		switch {
		case b.Bucket == rules.GC && (len(b.Changes) != 1 || b.Changes[0].Note != "4x" || b.Changes[0].P == nil):
			t.Errorf("gc: %+v, want 4x with a p-value", b.Changes)
		case b.Bucket == rules.GC && math.Abs(*b.Changes[0].P-3*2.0/252) > 1e-9:
			// Five against five apart: the two-sided p is twice the
			// one-sided 1/252, and Holm's adjustment is over the three
			// buckets, though gc alone passes the size rule.
			t.Errorf("gc: p %v, want 3 × the two-sided 2/252", *b.Changes[0].P)
		case b.Bucket != rules.GC && len(b.Changes) > 0:
			t.Errorf("%s: %+v, want no change (only gc moved)", b.Bucket, b.Changes)
		}
	}
}

// Waits that move from one method to another of the same size, with
// rates known, are a substitution at that step.
func TestSeriesSubstitution(t *testing.T) {
	var before, after []*result.TopResult
	for i := range 5 {
		j := float64(i)
		before = append(before, top(map[rules.Bucket]float64{rules.CPU: 50 + j, rules.Wait: 40 - j, rules.LockContention: 1}, map[string]rules.Bucket{"sem.Wait": rules.Wait}, 1))
		after = append(after, top(map[rules.Bucket]float64{rules.CPU: 50 - j, rules.Wait: 1, rules.LockContention: 39 + j}, map[string]rules.Bucket{"lock.Acquire": rules.LockContention}, 1))
	}
	s, err := series.Build([]series.Step{{Name: "a", Runs: before}, {Name: "b", Runs: after}}, series.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Measure != result.NormalizeRate || len(s.Substitutions) != 1 {
		t.Fatalf("measure %s, substitutions %+v; want rates and one", s.Measure, s.Substitutions)
	}
	sub := s.Substitutions[0]
	if sub.Name != "b" || sub.In[0] != "lock.Acquire" || sub.Out[0] != "sem.Wait" {
		t.Errorf("substitution %+v", sub)
	}
}

// Options.Measure: a process that got less of the machine at step b (its
// cpu and wait rates halve) while its gc time held. On rates (the default
// with durations) cpu and wait fall and gc does not move; on shares gc's
// part of the process's time doubles and it alone is flagged. Rates asked
// of profiles without durations, or values, are errors.
func TestSeriesMeasure(t *testing.T) {
	var before, after []*result.TopResult
	for i := range 5 {
		j := float64(i)
		before = append(before, top(map[rules.Bucket]float64{rules.CPU: 450 + j, rules.Wait: 450 - j, rules.GC: 100 + j}, nil, 1))
		after = append(after, top(map[rules.Bucket]float64{rules.CPU: 200 - j, rules.Wait: 200 + j, rules.GC: 100 - j}, nil, 1))
	}
	steps := []series.Step{{Name: "a", Runs: before}, {Name: "b", Runs: after}}
	flagged := func(m result.Normalize) (result.Normalize, []string) {
		t.Helper()
		s, err := series.Build(steps, series.Options{Measure: m})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range s.Buckets {
			for _, c := range b.Changes {
				got = append(got, b.Bucket.String()+" "+c.Note)
			}
		}
		return s.Measure, got
	}
	if m, got := flagged(result.NormalizeAuto); m != result.NormalizeRate || len(got) != 2 || got[0] != "cpu halved" || got[1] != "wait halved" {
		t.Errorf("auto: measure %s, changes %v; want rates, cpu and wait halved", m, got)
	}
	if m, got := flagged(result.NormalizeShare); m != result.NormalizeShare || len(got) != 1 || got[0] != "gc doubled" {
		t.Errorf("share: measure %s, changes %v; want shares, gc doubled alone", m, got)
	}
	snap := []series.Step{{Name: "x", Runs: []*result.TopResult{top(map[rules.Bucket]float64{rules.CPU: 1}, nil, 0)}}, steps[1]}
	if _, err := series.Build(snap, series.Options{Measure: result.NormalizeRate}); !errors.Is(err, series.ErrNoRate) || !strings.Contains(err.Error(), "step x") {
		t.Errorf("rates without durations: %v, want ErrNoRate naming step x", err)
	}
	if _, err := series.Build(steps, series.Options{Measure: result.NormalizeValue}); !errors.Is(err, series.ErrMeasure) {
		t.Errorf("value: %v, want ErrMeasure", err)
	}
}
