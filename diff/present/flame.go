package present

import (
	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// DiffPictures are the html-only blocks of a diff beside its tables: the
// bucket bars and, when the result holds a call tree, the differential
// flame graph. The gate's page shows its merged sides with them.
func DiffPictures(r *diff.Result) []report.Block {
	blocks := bucketCharts(r)
	if f := diffFlame(r); f != nil {
		blocks = append(blocks, f)
	}
	return blocks
}

// diffFlame is the flame-graph block of a diff whose result holds a call
// tree (nil when it holds none).
func diffFlame(r *diff.Result) report.Block {
	if r.Tree == nil {
		return nil
	}
	return &report.Flame{Tree: flameTree(r.Tree), Sides: 2, Unit: r.Unit, RateUnit: r.RateUnit, Measure: report.Measure(r.Normalize),
		RateFactor: [2]float64{factor(r.Base.TotalRate, r.Base.Total), factor(r.New.TotalRate, r.New.Total)}, Labels: [2]string{"base", "new"}, Buckets: bucketNames()}
}

// topFlame is the flame graph of a top listing (one side).
func topFlame(t *diff.TopResult) report.Block {
	if t.Tree == nil {
		return nil
	}
	return &report.Flame{Tree: flameTree(t.Tree), Sides: 1, Unit: t.Unit, RateUnit: t.RateUnit, Measure: report.Measure(t.Normalize),
		RateFactor: [2]float64{factor(t.TotalRate, t.Total), 0}, Labels: [2]string{"profile", ""}, Buckets: bucketNames()}
}

// factor is a side's rate per unit of value: its total rate over its
// total (0 when the rate is unknown or the side empty).
func factor(rate *float64, total float64) float64 {
	if rate == nil || total == 0 {
		return 0
	}
	return *rate / total
}

// flameTree is the engine's call tree as the report's: the same nodes,
// children in the same order, buckets as indexes into bucketNames and a
// node's bucket split in bucket order (never map order).
func flameTree(n *diff.CallNode) *report.Node {
	out := &report.Node{Name: n.Name, Total: n.Total, Self: n.Self, Bucket: int(n.Bucket), Other: n.Other}
	for _, b := range diff.Buckets {
		if v, ok := n.Buckets[b]; ok {
			out.Split = append(out.Split, report.BucketValue{Bucket: int(b), Value: v})
		}
	}
	if len(n.Children) > 0 {
		out.Children = make([]*report.Node, len(n.Children))
		for i, c := range n.Children {
			out.Children[i] = flameTree(c)
		}
	}
	return out
}

// bucketNames are the buckets' names, indexed by diff.Bucket.
func bucketNames() []string {
	names := make([]string, len(diff.Buckets))
	for i, b := range diff.Buckets {
		names[i] = b.String()
	}
	return names
}
