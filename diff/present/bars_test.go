package present

import (
	"slices"
	"strconv"
	"testing"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// points are a chart's points as "series · label: y".
func points(c *report.Chart) []string {
	var out []string
	for _, s := range c.Series {
		for _, p := range s.Points {
			out = append(out, s.Name+" · "+p.Label+": "+strconv.FormatFloat(p.Y, 'g', -1, 64))
		}
	}
	return out
}

// With both sides' rates the second chart has them, in the rate unit;
// with one unknown there is none (a bar of nothing would read as zero).
func TestBucketChartsRates(t *testing.T) {
	rate := func(v float64) *float64 { return &v }
	r := &result.Result{Analysis: result.Analysis{RateUnit: "cores"}, Buckets: []result.BucketRow{
		{Bucket: rules.CPU, Base: 0.9, New: 0.8, Values: result.Values{BaseRate: rate(1.8), NewRate: rate(1.2)}},
		{Bucket: rules.LockContention, Base: 0.1, New: 0.2, Values: result.Values{BaseRate: rate(0.2), NewRate: rate(0.3)}},
	}}
	blocks := bucketCharts(r)
	if len(blocks) != 2 {
		t.Fatalf("%d charts, want share and rate", len(blocks))
	}
	if c := blocks[0].(*report.Chart); c.YUnit != report.ShareUnit || c.Kind != report.ChartBars {
		t.Errorf("share chart in %q, kind %d", c.YUnit, c.Kind)
	}
	c := blocks[1].(*report.Chart)
	if c.YUnit != "cores" {
		t.Errorf("rate chart in %q", c.YUnit)
	}
	want := []string{"base · cpu: 1.8", "base · lock-contention: 0.2", "new · cpu: 1.2", "new · lock-contention: 0.3"}
	if got := points(c); !slices.Equal(got, want) {
		t.Errorf("rate bars %q, want %q", got, want)
	}
	r.Buckets[1].NewRate = nil
	if n := len(bucketCharts(r)); n != 1 {
		t.Errorf("%d charts with a rate unknown, want 1", n)
	}
	if bucketCharts(&result.Result{}) != nil {
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
		want = append(want, "share · "+b.Bucket.String()+": "+strconv.FormatFloat(b.Share, 'g', -1, 64))
	}
	if got := points(blocks[0].(*report.Chart)); !slices.Equal(got, want) {
		t.Errorf("bars %q, want %q", got, want)
	}
}
