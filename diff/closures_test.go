package diff

import (
	"math/rand"
	"slices"
	"testing"
)

// closureInfo.add keeps each closure's distinct neighbours in the order
// first met, on each side, whether a closure has a few (searched in its
// list) or many (past closureScan, in the set), and whatever the recent
// cache holds.
func TestClosureNeighbours(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var c closureInfo
	want := [2]map[int32][]int32{{}, {}}
	for range 200_000 {
		side := Side(r.Intn(2))
		id := int32(r.Intn(40))
		spread := 4 // closures 0-9 have few neighbours, the rest many
		if id >= 10 {
			spread = 3 * closureScan
		}
		n := int32(r.Intn(spread)) + 100*id
		c.add(side, id, n)
		if !slices.Contains(want[side][id], n) {
			want[side][id] = append(want[side][id], n)
		}
	}
	crowded := 0
	for side := range 2 {
		for id := range int32(40) {
			got := c.neighboursOf(Side(side), id)
			if !slices.Equal(got, want[side][id]) {
				t.Fatalf("side %d closure %d: neighbours %v, want %v", side, id, got, want[side][id])
			}
			if len(got) > closureScan {
				crowded++
			}
		}
	}
	if crowded == 0 {
		t.Error("no closure got past closureScan neighbours: the set is not tested")
	}
	if c.neighboursOf(Base, 1000) != nil {
		t.Error("neighbours for a method never seen")
	}
}
