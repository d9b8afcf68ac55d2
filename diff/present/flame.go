package present

import (
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// DiffPictures are the html-only blocks of a diff beside its tables: the
// bucket bars and, when the result holds a call tree, the differential
// flame graph. The gate's page shows its merged sides with them.
func DiffPictures(r *result.Result) []report.Block {
	blocks := bucketCharts(r)
	if f := diffFlame(r); f != nil {
		blocks = append(blocks, f)
	}
	return blocks
}

// diffFlame is the flame-graph block of a diff whose result holds a call
// tree or its stacks (nil when it holds neither).
func diffFlame(r *result.Result) report.Block {
	if r.Tree == nil && r.Stacks == nil {
		return nil
	}
	return &report.Flame{Tree: flameTree(r.Tree), Stacks: r.Stacks, Sides: 2, Unit: r.Unit, RateUnit: r.RateUnit, Measure: report.Measure(r.Normalize),
		RateFactor: [2]float64{factor(r.Base.TotalRate, r.Base.Total), factor(r.New.TotalRate, r.New.Total)}, Labels: [2]string{"base", "new"}, Buckets: bucketNames()}
}

// topFlame is the flame graph of a top listing (one side).
func topFlame(t *result.TopResult) report.Block {
	if t.Tree == nil && t.Stacks == nil {
		return nil
	}
	return &report.Flame{Tree: flameTree(t.Tree), Stacks: t.Stacks, Sides: 1, Unit: t.Unit, RateUnit: t.RateUnit, Measure: report.Measure(t.Normalize),
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
//
// The folded formats take every stack, millions of nodes for a large
// pair, so the nodes, the child lists and the splits are carved out of
// three arrays sized by a first count: three allocations rather than one
// or more a node, which the collector would otherwise chase through a
// heap that already holds the engine's tree. A nil tree is nil.
func flameTree(root *result.CallNode) *report.Node {
	if root == nil {
		return nil
	}
	nodes, splits := 0, 0
	var count func(n *result.CallNode)
	count = func(n *result.CallNode) {
		nodes++
		splits += len(n.Buckets)
		for _, c := range n.Children {
			count(c)
		}
	}
	count(root)
	slab := make([]report.Node, nodes)
	kids := make([]*report.Node, nodes-1) // every node but the root is a child
	split := make([]report.BucketValue, 0, splits)
	var convert func(n *result.CallNode) *report.Node
	convert = func(n *result.CallNode) *report.Node {
		out := &slab[0]
		slab = slab[1:]
		*out = report.Node{Name: n.Name, Total: n.Total, Self: n.Self, Bucket: int(n.Bucket), Other: n.Other}
		if len(n.Buckets) > 0 {
			from := len(split)
			for _, b := range rules.Buckets {
				if v, ok := n.Buckets[b]; ok {
					split = append(split, report.BucketValue{Bucket: int(b), Value: v})
				}
			}
			out.Split = split[from:len(split):len(split)]
		}
		if k := len(n.Children); k > 0 {
			// This node's list first: its children take theirs after it.
			out.Children, kids = kids[:k:k], kids[k:]
			for i, c := range n.Children {
				out.Children[i] = convert(c)
			}
		}
		return out
	}
	return convert(root)
}

// bucketNames are the buckets' names, indexed by rules.Bucket.
func bucketNames() []string {
	names := make([]string, len(rules.Buckets))
	for i, b := range rules.Buckets {
		names[i] = b.String()
	}
	return names
}
