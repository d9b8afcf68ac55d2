package series_test

import (
	"bytes"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	goldenfile "github.com/profdiff/profdiff/diff/internal/golden"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/series"
)

// rules are the thresholds the report names, as the command passes them.
var rules = present.SeriesRules{MinRuns: series.MinRuns, Alpha: series.Alpha, MinMove: series.MinMove, MinRatio: series.MinRatio,
	ThresholdMove: series.ThresholdMove, ThresholdRatio: series.ThresholdRatio}

// run is one profile analysed alone, as the command analyses each run.
func run(t *testing.T, name string) *result.TopResult {
	t.Helper()
	l := fixture.Load(t, fixture.Path("testdata/dotnet/"+name))
	l.Source = "testdata/dotnet/" + name
	a := diff.NewAnalyzer(diff.Options{Top: -1})
	if err := a.Add(diff.Base, l); err != nil {
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
		if err := render.Report(&buf, present.Series(s, rules), f); err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, "./diff/series", "series.dotnet.net10-net11-back.top8."+string(f)+".golden", buf.Bytes())
	}
}
