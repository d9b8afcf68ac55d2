package render

import (
	"slices"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/report"
)

// The seed diff's bucket bars: one chart in share, a base and a new bar
// per bucket of the bucket table with the table's numbers; no rate chart,
// folded stacks having no duration.
func TestBucketChartsSeed(t *testing.T) {
	r := fixture.Dotnet(t, diff.Options{})
	blocks := present.DiffPictures(r)
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
