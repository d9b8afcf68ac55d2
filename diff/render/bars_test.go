package render

import (
	"slices"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// The seed diff's bucket bars: one chart in share, a base and a new bar
// per bucket of the bucket table with the table's numbers; no rate chart,
// folded stacks having no duration.
func TestBucketChartsSeed(t *testing.T) {
	r := dotnetResult(t, diff.Options{})
	blocks := bucketCharts(r)
	if len(blocks) != 1 {
		t.Fatalf("%d charts, want the share chart alone (no durations, no rates)", len(blocks))
	}
	c := blocks[0].(*report.Chart)
	var want []string
	for _, b := range r.Buckets {
		want = append(want, "base · "+b.Bucket.String()+": "+Pct(b.Base))
	}
	for _, b := range r.Buckets {
		want = append(want, "new · "+b.Bucket.String()+": "+Pct(b.New))
	}
	s := svgOf(t, c)
	if got := barTitles(s); !slices.Equal(got, want) {
		t.Errorf("bars %q, want %q", got, want)
	}
	golden(t, "diff.dotnet.bucket-bars.svg.golden", []byte(s))
}

// With both sides' rates the second chart has them, in the rate unit;
// with one unknown there is none (a bar of nothing would read as zero).
func TestBucketChartsRates(t *testing.T) {
	rate := func(v float64) *float64 { return &v }
	r := &diff.Result{Analysis: diff.Analysis{RateUnit: "cores"}, Buckets: []diff.BucketRow{
		{Bucket: diff.CPU, Base: 0.9, New: 0.8, Values: diff.Values{BaseRate: rate(1.8), NewRate: rate(1.2)}},
		{Bucket: diff.LockContention, Base: 0.1, New: 0.2, Values: diff.Values{BaseRate: rate(0.2), NewRate: rate(0.3)}},
	}}
	blocks := bucketCharts(r)
	if len(blocks) != 2 {
		t.Fatalf("%d charts, want share and rate", len(blocks))
	}
	c := blocks[1].(*report.Chart)
	if c.YUnit != "cores" {
		t.Errorf("rate chart in %q", c.YUnit)
	}
	want := []string{"base · cpu: 1.8 cores", "base · lock-contention: 0.2 cores", "new · cpu: 1.2 cores", "new · lock-contention: 0.3 cores"}
	if got := barTitles(svgOf(t, c)); !slices.Equal(got, want) {
		t.Errorf("rate bars %q, want %q", got, want)
	}
	r.Buckets[1].NewRate = nil
	if n := len(bucketCharts(r)); n != 1 {
		t.Errorf("%d charts with a rate unknown, want 1", n)
	}
	if bucketCharts(&diff.Result{}) != nil {
		t.Error("charts of a result with no buckets")
	}
}

// A top listing's bars: one series, the bucket shares.
func TestTopBucketCharts(t *testing.T) {
	top := dotnetTop(t)
	blocks := topBucketCharts(top)
	if len(blocks) != 1 {
		t.Fatalf("%d charts, want 1", len(blocks))
	}
	var want []string
	for _, b := range top.Buckets {
		want = append(want, b.Bucket.String()+": "+Pct(b.Share))
	}
	if got := barTitles(svgOf(t, blocks[0].(*report.Chart))); !slices.Equal(got, want) {
		t.Errorf("bars %q, want %q", got, want)
	}
}
