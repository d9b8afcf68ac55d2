package present

import (
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// The report's call tree is the engine's: node for node, children in the
// same order, the bucket split in bucket order; the flame graph says the
// result's measure, sides and bucket names.
func TestFlameIsTheTree(t *testing.T) {
	r := dotnetResult(t, diff.Options{CallTree: true})
	f, ok := diffFlame(r).(*report.Flame)
	if !ok || f.Sides != 2 || f.Measure != report.Measure(r.Normalize) || f.Unit != r.Unit || f.Labels != [2]string{"base", "new"} {
		t.Fatalf("flame %+v", f)
	}
	if len(f.Buckets) != rules.NumBuckets || f.Buckets[rules.LockContention] != "lock-contention" {
		t.Errorf("buckets %q", f.Buckets)
	}
	nodes, splits := 0, 0
	var same func(n *result.CallNode, m *report.Node)
	same = func(n *result.CallNode, m *report.Node) {
		nodes++
		if m.Name != n.Name || m.Total != n.Total || m.Self != n.Self || m.Bucket != int(n.Bucket) || m.Other != n.Other || len(m.Children) != len(n.Children) || len(m.Split) != len(n.Buckets) {
			t.Fatalf("node %+v is not %+v", m, n)
		}
		for i, s := range m.Split {
			if i > 0 && s.Bucket <= m.Split[i-1].Bucket || s.Value != n.Buckets[rules.Bucket(s.Bucket)] {
				t.Fatalf("%s: split %+v, want %v in bucket order", n.Name, m.Split, n.Buckets)
			}
			splits++
		}
		for i, c := range n.Children {
			same(c, m.Children[i])
		}
	}
	same(r.Tree, f.Tree)
	if nodes < 100 || splits == 0 {
		t.Errorf("%d nodes, %d split values: want a tree of some size with split nodes", nodes, splits)
	}
	if diffFlame(dotnetResult(t, diff.Options{})) != nil {
		t.Error("a flame graph without a call tree")
	}
	if top := topFlame(dotnetTop(t)); top != nil {
		t.Error("a top flame graph without a call tree")
	}
}
