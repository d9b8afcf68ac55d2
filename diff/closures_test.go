package diff

import (
	"math/rand"
	"slices"
	"testing"
)

// closureInfo.add keeps each closure's distinct neighbours in the order
// first met, on each side, through the pair set's growth.
func TestClosureNeighbours(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var c closureInfo
	want := [2]map[int32][]int32{{}, {}}
	for range 200_000 {
		side := Side(r.Intn(2))
		id := int32(r.Intn(40))
		spread := 4 // closures 0-9 have few neighbours, the rest many
		if id >= 10 {
			spread = 200
		}
		n := int32(r.Intn(spread)) + 1000*id
		c.add(side, id, n)
		if !slices.Contains(want[side][id], n) {
			want[side][id] = append(want[side][id], n)
		}
	}
	for side := range 2 {
		for id := range int32(40) {
			got := c.neighboursOf(Side(side), id)
			if !slices.Equal(got, want[side][id]) {
				t.Fatalf("side %d closure %d: neighbours %v, want %v", side, id, got, want[side][id])
			}
		}
		if n, slots := c.pairs[side].n, len(c.pairs[side].slots); n < 4000 || slots <= 1024 || 2*n > slots {
			t.Errorf("side %d: %d pairs in %d slots: the set did not grow, or is over half full", side, n, slots)
		}
	}
	if c.neighboursOf(Base, 1000) != nil {
		t.Error("neighbours for a method never seen")
	}
}
