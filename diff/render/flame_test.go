package render

import (
	"math"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// node is a call-tree node for tests: its totals are its self plus its
// children's.
func node(name string, self [2]float64, kids ...*report.Node) *report.Node {
	n := &report.Node{Name: name, Self: self, Total: self, Children: kids}
	for _, k := range kids {
		n.Total[0] += k.Total[0]
		n.Total[1] += k.Total[1]
	}
	return n
}

// mixedTree has a frame on both sides, one removed (base only) and one
// new (new only), each with children.
func mixedTree() *report.Node {
	return node("root", [2]float64{},
		node("both", [2]float64{10, 5},
			node("grew", [2]float64{5, 40}),
			node("gone", [2]float64{}, node("gone.leaf", [2]float64{20, 0})),
		),
		node("fresh", [2]float64{0, 10}, node("fresh.leaf", [2]float64{0, 30})),
		node("steady", [2]float64{15, 15}),
	)
}

// seedFlame is the flame block of the seed diff (its whole tree).
func seedFlame(t *testing.T, treeMin float64) *report.Flame {
	t.Helper()
	f := reportFlame(dotnetReport(t, diff.Options{CallTree: true, TreeMin: treeMin}))
	if f == nil {
		t.Fatal("the seed diff with CallTree has no flame block")
	}
	return f
}

// find is the first node named name, depth first.
func find(n *report.Node, name string) *report.Node {
	if n.Name == name {
		return n
	}
	for _, c := range n.Children {
		if m := find(c, name); m != nil {
			return m
		}
	}
	return nil
}

// flameWidth is a node's width by its definition (see flame.go): its
// larger self share plus its children's widths, summed here by recursion
// for each node asked, to check flameOrder's single bottom-up pass.
func flameWidth(f *report.Flame, n *report.Node) float64 {
	w := flameSelfWidth(f, n)
	for _, c := range n.Children {
		w += flameWidth(f, c)
	}
	return w
}

func TestFlameWidthNests(t *testing.T) {
	for name, f := range map[string]*report.Flame{
		"mixed": {Tree: mixedTree(), Sides: 2},
		"seed":  seedFlame(t, 0),
	} {
		var check func(n *report.Node)
		check = func(n *report.Node) {
			w, sum := flameWidth(f, n), 0.0
			for _, c := range n.Children {
				sum += flameWidth(f, c)
				check(c)
			}
			if sum > w+1e-12 {
				t.Errorf("%s: %s is %g wide, its children %g", name, n.Name, w, sum)
			}
			// A frame is at least as wide as its larger side's share.
			for s := range 2 {
				if share := frac(n.Total[s], f.Tree.Total[s]); w < share-1e-12 {
					t.Errorf("%s: %s is %g wide, narrower than side %d's share %g", name, n.Name, w, s, share)
				}
			}
		}
		check(f.Tree)
		// The single pass gives every node its width by the definition.
		o := newFlameOrder(f)
		for i, n := range o.nodes {
			if w := flameWidth(f, n); math.Abs(o.width[i]-w) > 1e-12 {
				t.Errorf("%s: %s is %g wide in the order, %g by definition", name, n.Name, o.width[i], w)
			}
		}
		if w := flameWidth(f, f.Tree); w < 1-1e-12 {
			t.Errorf("%s: the root is %g wide, want at least 1", name, w)
		}
	}
	// Removed and new frames keep room: the mixed root is wider than 1.
	f := &report.Flame{Tree: mixedTree(), Sides: 2}
	gone := find(f.Tree, "gone")
	if w := flameWidth(f, gone); w != 20.0/50 {
		t.Errorf("removed frame width %g, want its base share 0.4", w)
	}
	if w := flameWidth(f, f.Tree); w <= 1 {
		t.Errorf("root width %g, want > 1 with removed and new frames", w)
	}
}

func TestFlameChangeAnchors(t *testing.T) {
	root := [2]float64{100, 100}
	f := &report.Flame{Tree: &report.Node{Total: root}, Sides: 2, Measure: report.MeasureShare}
	for _, c := range []struct {
		name  string
		total [2]float64
		want  float64
	}{
		{"×4", [2]float64{2, 8}, 1},
		{"×8 clamps", [2]float64{1, 8}, 1},
		{"×¼", [2]float64{8, 2}, -1},
		{"×2", [2]float64{2, 4}, 0.5},
		{"×½", [2]float64{4, 2}, -0.5},
		{"same", [2]float64{3, 3}, 0},
		{"new", [2]float64{0, 3}, 1},
		{"removed", [2]float64{3, 0}, -1},
	} {
		got := flameChange(f, &report.Node{Total: c.total})
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: flameChange = %g, want %g", c.name, got, c.want)
		}
	}
	top := &report.Flame{Tree: f.Tree, Sides: 1}
	if got := flameChange(top, &report.Node{Total: [2]float64{2, 8}}); got != 0 {
		t.Errorf("one side: flameChange = %g, want 0", got)
	}
	// The measure decides: equal shares of sides of different totals are
	// a doubling by rate and by value.
	n := &report.Node{Total: [2]float64{10, 20}}
	tree := &report.Node{Total: [2]float64{100, 200}}
	for m, want := range map[report.Measure]float64{report.MeasureShare: 0, report.MeasureRate: 0.5, report.MeasureValue: 0.5} {
		f := &report.Flame{Tree: tree, Sides: 2, Measure: m, RateFactor: [2]float64{1, 1}}
		if got := flameChange(f, n); math.Abs(got-want) > 1e-12 {
			t.Errorf("measure %s: flameChange = %g, want %g", m, got, want)
		}
	}
	// A rate measure without both rates falls back to shares.
	f = &report.Flame{Tree: tree, Sides: 2, Measure: report.MeasureRate, RateFactor: [2]float64{1, 0}}
	if got := flameChange(f, n); got != 0 {
		t.Errorf("rate with one rate unknown: flameChange = %g, want 0 (shares)", got)
	}
}

func TestFlameColorEndpoints(t *testing.T) {
	for _, p := range Palettes {
		for c, want := range map[float64]string{1: p.Grew, 2: p.Grew, -1: p.Shrank, 0: p.Neutral} {
			if got := flameColor(p, math.Max(-1, math.Min(1, c))); got != want {
				t.Errorf("%s: flameColor(%g) = %s, want %s", p.Name, c, got, want)
			}
		}
		// Half way is between neutral and the end, channel by channel.
		half, n, g := hexRGB(flameColor(p, 0.5)), hexRGB(p.Neutral), hexRGB(p.Grew)
		for i := range half {
			if lo, hi := min(n[i], g[i]), max(n[i], g[i]); half[i] < lo || half[i] > hi || lo != hi && (half[i] == lo || half[i] == hi) {
				t.Errorf("%s: flameColor(0.5) channel %d = %d, not strictly between %d and %d", p.Name, i, half[i], n[i], g[i])
			}
		}
	}
}

func TestFlameTip(t *testing.T) {
	// The seed's folded profiles have no duration: values and shares.
	f := seedFlame(t, TreeMin)
	n := find(f.Tree, "System.Threading.LowLevelLock.WaitAndAcquire")
	if n == nil {
		t.Fatal("no WaitAndAcquire frame in the seed's tree")
	}
	want := "System.Threading.LowLevelLock.WaitAndAcquire\nbase 9 (0.09%) → new 162 (1.62%) · +1.53pp · 18x"
	if got := flameTip(f, n); got != want {
		t.Errorf("seed tip:\n got %q\nwant %q", got, want)
	}
	gone := find(f.Tree, "SystemNative_WaitForSocketEvents")
	if got := flameTip(f, gone); !strings.HasSuffix(got, "→ new 0 (0.00%) · -15.30pp · gone") {
		t.Errorf("removed frame's tip %q, want it to end in new 0 (0.00%%) · -15.30pp · gone (the method table's 15.30%% → 0.00%%)", got)
	}
	// Where rates are known, the tip shows them: 12 ms/s of 1 s/s and
	// 310 ms/s of 6.38 s/s (shares 1.2% and 4.86%).
	rf := &report.Flame{Tree: &report.Node{Total: [2]float64{1e9, 6.378e9}}, Sides: 2, Unit: "nanoseconds",
		RateUnit: "s/s", RateFactor: [2]float64{1e-9, 1e-9}, Measure: report.MeasureRate}
	rn := &report.Node{Name: "lock", Total: [2]float64{12e6, 310e6}}
	want = "lock\nbase 12 ms/s (1.20%) → new 310 ms/s (4.86%) · +3.66pp · 26x"
	if got := flameTip(rf, rn); got != want {
		t.Errorf("rate tip:\n got %q\nwant %q", got, want)
	}
	// One side: "310 ms/s (4.86%)" alone; an "other" frame says what it merges.
	one := &report.Flame{Tree: rf.Tree, Sides: 1, Unit: "nanoseconds", RateUnit: "s/s", RateFactor: [2]float64{1e-9, 0}}
	if got, want := flameTip(one, rn), "lock\n12 ms/s (1.20%)"; got != want {
		t.Errorf("one-side tip %q, want %q", got, want)
	}
	other := &report.Node{Name: "other", Total: [2]float64{1e6, 2e6}, Other: 7}
	if got := flameTip(rf, other); !strings.HasPrefix(got, "other\n7 frames too narrow to draw, merged: base 1 ms/s") {
		t.Errorf("other tip %q", got)
	}
}
