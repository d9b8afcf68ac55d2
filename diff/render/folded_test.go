package render

import (
	"bytes"
	"context"
	"io"
	"math"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

func renderFolded(t *testing.T, r interface{}, f Format, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch r := r.(type) {
	case *result.Result:
		err = Write(&buf, present.Diff(r), f, o)
	case *result.TopResult:
		err = Write(&buf, present.Top(r), f, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// net11Top is the top listing of the seed's new side with its call tree
// (subtrees narrower than treeMin merged).
func net11Top(t *testing.T, treeMin float64) *result.TopResult {
	return fixture.DotnetTop(t, diff.Options{CallTree: true, TreeMin: treeMin})
}

// treeOf is the call tree of a report's flame graph.
func treeOf(r *report.Report) *report.Node { return reportFlame(r).Tree }

// parsedStacks loads folded output back with the profile package and
// returns its stacks ("a;b;c", root first) and their values.
func parsedStacks(t *testing.T, b []byte) map[string]int64 {
	t.Helper()
	l, err := profile.Parse("out.folded", b, 0)
	if err != nil {
		t.Fatalf("folded output does not load back: %v\n%s", err, b)
	}
	if len(l.Warnings) > 0 {
		t.Errorf("loading the folded output warns: %v", l.Warnings)
	}
	out := map[string]int64{}
	for _, s := range l.Profile.Sample {
		frames := make([]string, len(s.Location))
		for i, loc := range s.Location {
			name := loc.Line[0].Function.Name
			if loc.Mapping != nil && loc.Mapping.File != "" {
				name = loc.Mapping.File + "!" + name
			}
			frames[len(frames)-1-i] = name
		}
		out[strings.Join(frames, ";")] += s.Value[0]
	}
	return out
}

// treePaths flattens a tree into its paths ("a;b", root left out, names
// as the folded format writes them) and their totals on side s, for the
// nodes with a total there.
func treePaths(n *report.Node, s int) map[string]float64 {
	out := map[string]float64{}
	var walk func(n *report.Node, prefix string)
	walk = func(n *report.Node, prefix string) {
		for _, c := range n.Children {
			p := foldedFrame(c.Name, prefix == "")
			if prefix != "" {
				p = prefix + ";" + p
			}
			if c.Total[s] != 0 {
				out[p] += c.Total[s]
			}
			walk(c, p)
		}
	}
	walk(n, "")
	return out
}

// checkFoldedSide checks one side's folded output: it loads back with the
// side's total, and loaded into an analyzer it makes the same call tree.
func checkFoldedSide(t *testing.T, name string, b []byte, tree *report.Node, side int) {
	t.Helper()
	var sum int64
	for _, v := range parsedStacks(t, b) {
		sum += v
	}
	if want := int64(math.Round(tree.Total[side])); sum != want {
		t.Errorf("%s: the folded stacks sum to %d, the side's total is %d", name, sum, want)
	}
	l, err := profile.Parse("out.folded", b, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := diff.NewAnalyzer(diff.Options{CallTree: true})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	back := treePaths(treeOf(present.Top(a.Top())), 0)
	want := treePaths(tree, side)
	for p, v := range want {
		if math.Round(v) != back[p] {
			t.Errorf("%s: %s is %g, loaded back %g", name, p, v, back[p])
		}
	}
	for p, v := range back {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: loaded back a path %s (%g) the tree has not", name, p, v)
		}
	}
}

func TestFoldedSeedRoundTrip(t *testing.T) {
	r := fixture.Dotnet(t, diff.Options{CallTree: true})
	newSide := renderFolded(t, r, Folded, Options{})
	golden(t, "diff.dotnet.folded.golden", newSide)
	tree := treeOf(present.Diff(r))
	checkFoldedSide(t, "new", newSide, tree, 1)
	checkFoldedSide(t, "base", renderFolded(t, r, Folded, Options{FoldedBase: true}), tree, 0)
	// Both sides, sorted, summing to each side's total.
	b := renderFolded(t, r, DiffFolded, Options{})
	golden(t, "diff.dotnet.difffolded.golden", b)
	var sums [2]int64
	var prev string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("difffolded line %q is not stack base new", line)
		}
		stack := strings.Join(f[:len(f)-2], " ")
		if stack <= prev {
			t.Errorf("%q after %q: not sorted", stack, prev)
		}
		prev = stack
		for i := range sums {
			v, err := strconv.ParseInt(f[len(f)-2+i], 10, 64)
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			sums[i] += v
		}
	}
	if sums != [2]int64{10000, 10000} {
		t.Errorf("difffolded columns sum to %v, want the sides' totals 10000 and 10000", sums)
	}
	// top's only side is its base.
	top := net11Top(t, 0)
	tb := renderFolded(t, top, Folded, Options{})
	checkFoldedSide(t, "top", tb, treeOf(present.Top(top)), 0)
	if !bytes.Equal(tb, newSide) {
		t.Errorf("top of net11 folds differently from the diff's new side (net11)")
	}
}

// TestFoldedGoCPU folds a Go CPU profile taken now and loads it back.
func TestFoldedGoCPU(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("CPU profiler busy: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	x := 0
	for ctx.Err() == nil {
		for i := range 100000 {
			x += i * i % 7
		}
	}
	cancel()
	pprof.StopCPUProfile()
	l, err := profile.Parse("cpu.pprof", buf.Bytes(), 0)
	if err != nil {
		t.Skipf("no usable CPU profile (%d bytes, x=%d): %v", buf.Len(), x, err)
	}
	a := diff.NewAnalyzer(diff.Options{CallTree: true})
	if err := a.Add(result.Base, l); err != nil {
		t.Skipf("CPU profile: %v", err)
	}
	top := a.Top()
	if top.Tree == nil || top.Tree.Total[0] == 0 {
		t.Skip("the CPU profile holds no samples (machine too busy)")
	}
	b := renderFolded(t, top, Folded, Options{})
	if !bytes.Contains(b, []byte("TestFoldedGoCPU")) {
		t.Errorf("no stack through TestFoldedGoCPU in:\n%s", b)
	}
	checkFoldedSide(t, "go cpu", b, treeOf(present.Top(top)), 0)
}

func TestFoldedNames(t *testing.T) {
	for name, want := range map[string]string{
		"a;b":          "a:b",
		"retry 3":      "retry_3",
		"wait 1.5":     "wait_1.5",
		"Thread (41)":  "Thread (41)",
		"x\ny":         "x y",
		"  ":           "[unknown]",
		"#comment":     "_comment",
		"f(int, int)":  "f(int, int)",
		"version 2 up": "version 2 up",
	} {
		if got := foldedFrame(name, true); got != want {
			t.Errorf("foldedFrame(%q) = %q, want %q", name, got, want)
		}
	}
	if got := foldedFrame("#inner", false); got != "#inner" {
		t.Errorf("a '#' inside a stack is kept: got %q", got)
	}
	// Such names load back as one frame each, with their value.
	tree := node("root", [2]float64{},
		node("#main;init", [2]float64{}, node("retry 3", [2]float64{0, 7})),
		node("", [2]float64{0, 2}))
	var buf bytes.Buffer
	rep := &report.Report{Blocks: []report.Block{&report.Flame{Tree: tree, Sides: 2}}}
	if err := Write(&buf, rep, Folded, Options{}); err != nil {
		t.Fatal(err)
	}
	got := parsedStacks(t, buf.Bytes())
	want := map[string]int64{"_main:init;retry_3": 7, "[unknown]": 2}
	if len(got) != len(want) {
		t.Errorf("loaded back %v, want %v", got, want)
	}
	for s, v := range want {
		if got[s] != v {
			t.Errorf("stack %q loaded back as %d, want %d (all: %v)", s, got[s], v, got)
		}
	}
}

func TestFoldedRefuses(t *testing.T) {
	err := Write(io.Discard, dotnetReport(t, diff.Options{}), Folded, Options{})
	if err == nil || err.Error() != "this report has no folded form (no call tree)" {
		t.Errorf("folded of a report without a tree: %v", err)
	}
	r := fixture.Dotnet(t, diff.Options{CallTree: true, TreeMin: 0.05})
	for _, f := range []Format{Folded, DiffFolded} {
		err := Write(io.Discard, present.Diff(r), f, Options{})
		if err == nil || !strings.Contains(err.Error(), `"other"`) || !strings.Contains(err.Error(), "TreeMin 0") {
			t.Errorf("%s of a tree with other frames: %v", f, err)
		}
	}
	if err := Write(io.Discard, present.Top(net11Top(t, 0)), DiffFolded, Options{}); err == nil || !strings.Contains(err.Error(), "two sides") {
		t.Errorf("difffolded of one profile: %v", err)
	}
}
