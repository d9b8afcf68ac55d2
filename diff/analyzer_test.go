package diff

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// Diff and Top are pure: called again, in any order, they return the same
// result with the same warnings (Diff used to append its warnings to the
// Analyzer, so a second call returned them twice and Top after Diff five).
func TestDiffAndTopArePure(t *testing.T) {
	a := NewAnalyzer(Options{})
	if err := a.Add(result.Base, folded(t, "a.folded", "main;f 10\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(result.New, folded(t, "b.folded", "main;g 10\nmain;System.Threading.LowLevelLock.WaitAndAcquire 5\n")); err != nil {
		t.Fatal(err)
	}
	d1 := a.Diff()
	t1 := a.Top()
	d2 := a.Diff()
	t2 := a.Top()
	if len(d1.Warnings) == 0 {
		t.Fatal("expected low-sample warnings")
	}
	if !reflect.DeepEqual(d1, d2) {
		t.Errorf("second Diff differs:\n%+v\n%+v", d1, d2)
	}
	if !reflect.DeepEqual(t1, t2) {
		t.Errorf("second Top differs:\n%+v\n%+v", t1, t2)
	}
	// Top shows no deltas, so it has no low-sample (~) warning: nothing.
	if len(t1.Warnings) != 0 {
		t.Errorf("Top after Diff has %d warnings, want none: %q", len(t1.Warnings), t1.Warnings)
	}
}

// The sample stream: every consumer sees each kept sample once, already
// classified, and the per-profile statistics add up to the merged sides.
func TestSampleStreamAndProfileStats(t *testing.T) {
	a := NewAnalyzer(Options{})
	var seen [2]float64
	var lockByDecider float64
	a.OnSample(func(s *Sample) {
		seen[s.Side] += s.Value
		if s.Bucket == rules.LockContention && a.MethodName(s.Stack[s.Decider]) == "internal/sync.runtime_SemacquireMutex" {
			lockByDecider += s.Value
		}
		if got := a.MethodName(s.Stack[s.Caller()]); s.Bucket == rules.LockContention && got != "handle" {
			t.Errorf("caller of a lock sample is %s, want handle", got)
		}
	})
	for i, text := range []string{wallBase, wallNew, wallNew} {
		side := result.Base
		if i > 0 {
			side = result.New
		}
		if err := a.Add(side, folded(t, "p.folded", text)); err != nil {
			t.Fatal(err)
		}
	}
	r := a.Diff()
	if seen[result.Base] != r.Base.Total || seen[result.New] != r.New.Total {
		t.Errorf("stream saw %v, result totals %v and %v", seen, r.Base.Total, r.New.Total)
	}
	ps := a.Profiles()
	if len(ps) != 3 || ps[0].Side != result.Base || ps[2].Side != result.New {
		t.Fatalf("profiles %+v", ps)
	}
	var sum ProfileStats
	for _, p := range ps[1:] {
		sum.add(&p)
	}
	for _, b := range r.Buckets {
		if b.NewValue != sum.Buckets[b.Bucket] || b.New != share(sum.Buckets[b.Bucket], sum.Total) {
			t.Errorf("%s: merged %v (%v), per-profile sum %v", b.Bucket, b.NewValue, b.New, sum.Buckets[b.Bucket])
		}
	}
	if lockByDecider != r.Buckets[rules.LockContention].BaseValue+r.Buckets[rules.LockContention].NewValue {
		t.Errorf("lock decided by runtime_SemacquireMutex: %v, lock bucket %v+%v", lockByDecider, r.Buckets[rules.LockContention].BaseValue, r.Buckets[rules.LockContention].NewValue)
	}
}

// The merged call tree holds both sides, inclusive and self, root first.
func TestCallTree(t *testing.T) {
	a := NewAnalyzer(Options{CallTree: true})
	if err := a.Add(result.Base, folded(t, "a.folded", "main;f 10\nmain;g 5\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(result.New, folded(t, "b.folded", "main;g 20\nmain;g;h 4\n")); err != nil {
		t.Fatal(err)
	}
	root := a.Diff().Tree
	if root == nil || len(root.Children) != 1 || root.Children[0].Name != "main" {
		t.Fatalf("tree %+v", root)
	}
	m := root.Children[0]
	if m.Total != [2]float64{15, 24} || m.Self != [2]float64{} {
		t.Errorf("main: total %v self %v", m.Total, m.Self)
	}
	var names []string
	for _, c := range m.Children {
		names = append(names, c.Name)
	}
	if !reflect.DeepEqual(names, []string{"f", "g"}) {
		t.Errorf("children of main: %v", names)
	}
	g := m.Children[1]
	if g.Total != [2]float64{5, 24} || g.Self != [2]float64{5, 20} || len(g.Children) != 1 || g.Children[0].Self != [2]float64{0, 4} {
		t.Errorf("g: %+v", g)
	}
	if NewAnalyzer(Options{}).Diff().Tree != nil {
		t.Error("a tree was built without Options.CallTree")
	}
}

// Every node carries its dominant bucket and, when its samples span
// several, the split; TreeMin merges the subtrees narrower than it on both
// sides into one "other" node per parent, which counts them.
func TestCallTreeBucketsAndOther(t *testing.T) {
	base := "main;work 900\nmain;System.Threading.LowLevelLock.WaitAndAcquire 60\nmain;tiny1 3\nmain;tiny2;deep 2\n"
	nw := "main;work 500\nmain;System.Threading.LowLevelLock.WaitAndAcquire 400\nmain;tiny1 1\n"
	a := NewAnalyzer(Options{CallTree: true, TreeMin: 0.01})
	if err := a.Add(result.Base, folded(t, "a.folded", base)); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(result.New, folded(t, "b.folded", nw)); err != nil {
		t.Fatal(err)
	}
	m := a.Diff().Tree.Children[0]
	var names []string
	for _, c := range m.Children {
		names = append(names, c.Name)
	}
	if !reflect.DeepEqual(names, []string{"System.Threading.LowLevelLock.WaitAndAcquire", "work", result.OtherName}) {
		t.Fatalf("children of main: %v", names)
	}
	lock, other := m.Children[0], m.Children[2]
	if lock.Bucket != rules.LockContention || lock.Buckets != nil {
		t.Errorf("lock node: bucket %v split %v", lock.Bucket, lock.Buckets)
	}
	if m.Bucket != rules.CPU || m.Buckets[rules.LockContention] != [2]float64{60, 400} || m.Buckets[rules.CPU] != [2]float64{905, 501} {
		t.Errorf("main: bucket %v split %v", m.Bucket, m.Buckets)
	}
	if other.Other != 2 || other.Total != [2]float64{5, 1} || other.Self != other.Total || other.Children != nil {
		t.Errorf("other: %+v", other)
	}
	a = NewAnalyzer(Options{CallTree: true})
	_ = a.Add(result.Base, folded(t, "a.folded", base))
	if n := len(a.Top().Tree.Children[0].Children); n != 4 {
		t.Errorf("without TreeMin main has %d children, want 4", n)
	}
}

// sortRows orders rows by |Δ| descending, then name, then their order
// in the input (a stable sort's order), and with a row limit returns the
// first rows of that order, whether it picks them in one pass (a limit
// small beside the rows) or sorts them all.
func TestSortRowsOrder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for range 300 {
		rows := make([]result.MethodRow, r.Intn(300))
		for i := range rows {
			rows[i] = result.MethodRow{Name: fmt.Sprintf("m%d", r.Intn(20)), Base: float64(r.Intn(4)) / 8, New: float64(r.Intn(4)) / 8, Note: fmt.Sprint(i)}
		}
		want := slices.Clone(rows)
		sort.SliceStable(want, func(i, j int) bool {
			di, dj := math.Abs(want[i].New-want[i].Base), math.Abs(want[j].New-want[j].Base)
			if di != dj {
				return di > dj
			}
			return want[i].Name < want[j].Name
		})
		for _, top := range []int{0, 1, 3, 20, len(rows) / 2, len(rows), len(rows) + 5} {
			got := sortRows(slices.Clone(rows), result.NormalizeShare, top)
			w := want
			if top > 0 && top < len(w) {
				w = w[:top]
			}
			if len(got) != len(w) {
				t.Fatalf("%d rows, top %d: %d rows, want %d", len(rows), top, len(got), len(w))
			}
			for i := range got {
				if got[i].Note != w[i].Note {
					t.Fatalf("%d rows, top %d: row %d is the input's %s, a stable sort puts its %s there", len(rows), top, i, got[i].Note, w[i].Note)
				}
			}
		}
	}
}
