package render

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	"github.com/profdiff/profdiff/diff/report"
)

// testStacks are report.Stacks for tests: stacks of name indexes, a
// value on one side each.
type testStacks struct {
	names  []string
	stacks [][]int32
	sides  []int
	values []float64
}

func (s *testStacks) Len() int                   { return len(s.stacks) }
func (s *testStacks) Names() []string            { return s.names }
func (s *testStacks) Depth(i int) int            { return len(s.stacks[i]) }
func (s *testStacks) Frame(i, k int) int32       { return s.stacks[i][k] }
func (s *testStacks) Value(i int) (int, float64) { return s.sides[i], s.values[i] }

// foldedByText is the difffolded output of s made the plain way: every
// record's line as text, summed by text in a map, sorted.
func foldedByText(s *testStacks) string {
	sums := map[string]*[2]float64{}
	for i, st := range s.stacks {
		var parts []string
		for k, id := range st {
			parts = append(parts, foldedFrame(s.names[id], k == 0))
		}
		line := strings.Join(parts, ";")
		if len(st) == 0 {
			line = "[no stack]"
		}
		if sums[line] == nil {
			sums[line] = new([2]float64)
		}
		sums[line][s.sides[i]] += s.values[i]
	}
	var stacks []string
	for line, v := range sums {
		if v[0] != 0 || v[1] != 0 {
			stacks = append(stacks, line)
		}
	}
	sort.Strings(stacks)
	var b strings.Builder
	for _, st := range stacks {
		fmt.Fprintf(&b, "%s %s %s\n", st, foldedCount(sums[st][0]), foldedCount(sums[st][1]))
	}
	return b.String()
}

// TestFoldedStacksOrder: lines written from records, grouped token by
// token, are the lines written as text, summed and sorted, for names
// chosen to trip a frame-wise order: one name the start of another
// ("a", "a.b", "a 1", "a:"), bytes below and above ';', a '#' root,
// two ids of one name, names that become one once made safe, a stack
// that is another's start, and records with no stack.
func TestFoldedStacksOrder(t *testing.T) {
	names := []string{"a", "a.b", "a 1", "a:", "a;", "a<", "ab", "b", "#c", "_c", "a", "", "[no stack]", "a\tb", "a b"}
	rng := rand.New(rand.NewPCG(37, 1))
	for round := range 50 {
		s := &testStacks{names: names}
		for range 200 {
			st := make([]int32, rng.IntN(5))
			for k := range st {
				st[k] = int32(rng.IntN(len(names)))
			}
			s.stacks = append(s.stacks, st)
			s.sides = append(s.sides, rng.IntN(2))
			s.values = append(s.values, float64(rng.IntN(3)))
		}
		var got bytes.Buffer
		rep := &report.Report{Blocks: []report.Block{&report.Flame{Stacks: s, Sides: 2}}}
		if err := Write(&got, rep, DiffFolded, Options{}); err != nil {
			t.Fatal(err)
		}
		if want := foldedByText(s); got.String() != want {
			t.Fatalf("round %d: written from records:\n%s\nwant, written as text:\n%s", round, got.String(), want)
		}
	}
}

// TestFoldedStacksMatchTree: the engine's unbuilt stacks
// (Options.TreeStacks, what the command asks for the folded formats)
// write what its built tree writes, for a diff and a top listing.
func TestFoldedStacksMatchTree(t *testing.T) {
	tree := diff.Options{CallTree: true, TreeFrames: true}
	stacks := tree
	stacks.TreeStacks = true
	a, b := fixture.Dotnet(t, tree), fixture.Dotnet(t, stacks)
	if b.Tree != nil || b.Stacks == nil {
		t.Fatal("a diff with TreeStacks has a tree or no stacks")
	}
	for _, f := range []Format{Folded, DiffFolded} {
		if x, y := renderFolded(t, a, f, Options{}), renderFolded(t, b, f, Options{}); !bytes.Equal(x, y) {
			t.Errorf("diff --format %s: %d bytes from the tree, %d from the stacks", f, len(x), len(y))
		}
	}
	ta, tb := fixture.DotnetTop(t, tree), fixture.DotnetTop(t, stacks)
	if x, y := renderFolded(t, ta, Folded, Options{}), renderFolded(t, tb, Folded, Options{}); !bytes.Equal(x, y) || len(x) == 0 {
		t.Errorf("top --format folded: %d bytes from the tree, %d from the stacks", len(x), len(y))
	}
}

// TestFoldedMemory: writing folded stacks allocates a few integers a
// record, not the output's text: 20,000 stacks 40 frames deep (about 16
// MB of output) take under a tenth of the output's size.
func TestFoldedMemory(t *testing.T) {
	s := &testStacks{}
	for i := range 1000 {
		s.names = append(s.names, fmt.Sprintf("namespace.Type%04d.Method", i))
	}
	rng := rand.New(rand.NewPCG(37, 2))
	for i := range 20_000 {
		st := make([]int32, 40)
		for k := range st {
			st[k] = int32(rng.IntN(len(s.names)))
		}
		s.stacks = append(s.stacks, st)
		s.sides = append(s.sides, i%2)
		s.values = append(s.values, 1)
	}
	rep := &report.Report{Blocks: []report.Block{&report.Flame{Stacks: s, Sides: 2}}}
	var out countWriter
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := Write(&out, rep, DiffFolded, Options{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if out < 10<<20 || alloc > uint64(out)/10 {
		t.Errorf("writing %d bytes of folded stacks allocated %d bytes, want under a tenth", out, alloc)
	}
	t.Logf("%d records: %d bytes out, %d allocated", s.Len(), out, alloc)
}
