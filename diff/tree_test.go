package diff

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// A level's grouping is a stable sort of the records by their id at that
// depth whichever sort runs it: the comparison sort of a small node and
// the radix sort of a large one (here with ids past 16 and 24 bits, and
// records that end above the depth) give the order a reference stable
// sort gives, and one group per id.
func TestTreeGroupStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n   int
		ids int32
	}{{radixFrom - 1, 50}, {radixFrom, 50}, {5000, 300}, {5000, 70000}, {3000, 1 << 25}} {
		tree := newCallTree(false)
		for range tc.n {
			stack := make([]int32, 1+rng.IntN(4))
			for i := range stack {
				stack[i] = rng.Int32N(tc.ids)
			}
			tree.addStack(stack, rules.CPU, result.Base, 1, tc.ids <= 1<<16)
		}
		for d := range 4 {
			b := treeBuilder{t: tree}
			var idx []int32
			tree.each(func(i int32) { idx = append(idx, i) })
			want := slices.Clone(idx)
			slices.SortStableFunc(want, func(x, y int32) int { return int(b.key(x, d)) - int(b.key(y, d)) })
			groups := b.group(idx, d)
			if !slices.Equal(idx, want) {
				t.Fatalf("n %d ids <%d depth %d: records in another order than a stable sort's", tc.n, tc.ids, d)
			}
			at := 0
			for gi, g := range groups {
				if g.from != at || g.to <= g.from || gi > 0 && groups[gi-1].key >= g.key {
					t.Fatalf("n %d depth %d: group %d %+v after %d is not the next run of a larger id", tc.n, d, gi, g, at)
				}
				for _, i := range idx[g.from:g.to] {
					if k := b.key(i, d); k != g.key {
						t.Fatalf("n %d depth %d: record with id %d in the group of %d", tc.n, d, k, g.key)
					}
				}
				at = g.to
			}
			if at != len(idx) {
				t.Fatalf("n %d depth %d: groups end at %d of %d records", tc.n, d, at, len(idx))
			}
		}
	}
}
