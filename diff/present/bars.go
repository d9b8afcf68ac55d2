package present

import (
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
)

// bucketCharts are the bucket bars of a diff (HTML): one chart of the
// shares (a group per bucket, a bar for base and one for new, in the
// bucket table's order) and, when both sides' rates are known, one of the
// rates in r.RateUnit.
func bucketCharts(r *result.Result) []report.Block {
	if len(r.Buckets) == 0 {
		return nil
	}
	share := [2]report.Series{{Name: "base"}, {Name: "new"}}
	rate := [2]report.Series{{Name: "base"}, {Name: "new"}}
	rated := r.RateUnit != ""
	for _, b := range r.Buckets {
		name := b.Bucket.String()
		share[0].Points = append(share[0].Points, report.Point{Label: name, Y: b.Base})
		share[1].Points = append(share[1].Points, report.Point{Label: name, Y: b.New})
		if b.BaseRate == nil || b.NewRate == nil {
			rated = false
			continue
		}
		rate[0].Points = append(rate[0].Points, report.Point{Label: name, Y: *b.BaseRate})
		rate[1].Points = append(rate[1].Points, report.Point{Label: name, Y: *b.NewRate})
	}
	blocks := []report.Block{bucketChart("Buckets by share", "share of each side's total", report.ShareUnit, share[:],
		"Each bar is the bucket's share of its side's total (all buckets sum to 100% per side).")}
	if rated {
		blocks = append(blocks, bucketChart("Buckets by rate", r.RateUnit, r.RateUnit, rate[:],
			"Each bar is the bucket's value per second of its side's wall time, in "+r.RateUnit+"."))
	}
	return blocks
}

// topBucketCharts are the bucket bars of a top listing: its shares and,
// when the rate is known, its rates, one bar per bucket.
func topBucketCharts(t *result.TopResult) []report.Block {
	if len(t.Buckets) == 0 {
		return nil
	}
	share := report.Series{Name: "share"}
	rate := report.Series{Name: "rate"}
	rated := t.RateUnit != ""
	for _, b := range t.Buckets {
		name := b.Bucket.String()
		share.Points = append(share.Points, report.Point{Label: name, Y: b.Share})
		if b.Rate == nil {
			rated = false
			continue
		}
		rate.Points = append(rate.Points, report.Point{Label: name, Y: *b.Rate})
	}
	blocks := []report.Block{bucketChart("Buckets by share", "share of the total", report.ShareUnit, []report.Series{share},
		"Each bar is the bucket's share of the profile's total.")}
	if rated {
		blocks = append(blocks, bucketChart("Buckets by rate", t.RateUnit, t.RateUnit, []report.Series{rate},
			"Each bar is the bucket's value per second of wall time, in "+t.RateUnit+"."))
	}
	return blocks
}

func bucketChart(title, y, unit string, series []report.Series, note string) *report.Chart {
	return &report.Chart{Title: title, Kind: report.ChartBars, X: "bucket", Y: y, YUnit: unit, Series: series, Note: note}
}
