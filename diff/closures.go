package diff

import (
	"fmt"
	"sort"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/symbolize"
)

// Go numbers the closures of a function in source order (func1, func2,
// gowrap1, ...), so a closure inserted above others renumbers them: the
// same code is main.run.func1 in one build and main.run.func2 in the
// next, while main.run.func1 is now another closure. Names alone cannot
// pair them, and merging every closure of a family would merge distinct
// code. The diff pairs a family's members across the sides by what they
// call and are called from (their neighbours in the sampled stacks, each
// named by its family when it is a closure itself): the most similar
// pairs first, the same name winning ties, so an unchanged build pairs
// every closure with itself. When both sides name one and the same
// build of the main binary (its build ID), nothing was renumbered and
// every closure is itself.

// closureInfo is what the Analyzer learns about closures while walking:
// each closure method's neighbours (callees and callers) in the stacks of
// each side, as adjacency lists kept distinct by a set of (closure,
// neighbour) pairs.
type closureInfo struct {
	// neighbours holds each closure's neighbours by method id, in the
	// order met; pairs is the set of those met, per side.
	neighbours [2][][]int32
	pairs      [2]pairSet
}

// neighboursOf is a closure's neighbours on a side.
func (c *closureInfo) neighboursOf(side result.Side, id int32) []int32 {
	if nb := c.neighbours[side]; int(id) < len(nb) {
		return nb[id]
	}
	return nil
}

// noteClosures records the neighbours of the closures in a sample's stack.
func (a *Analyzer) noteClosures(side result.Side, stack []int32) {
	closure := a.closure
	for i, id := range stack {
		if !closure[id] {
			continue
		}
		if i > 0 {
			a.closures.add(side, id, stack[i-1])
		}
		if i+1 < len(stack) {
			a.closures.add(side, id, stack[i+1])
		}
	}
}

func (c *closureInfo) add(side result.Side, id, n int32) {
	if !c.pairs[side].insert(uint64(uint32(id))<<32 | uint64(uint32(n))) {
		return
	}
	nb := c.neighbours[side]
	if int(id) >= len(nb) {
		nb = append(nb, make([][]int32, int(id)+1-len(nb))...)
		c.neighbours[side] = nb
	}
	nb[id] = append(nb[id], n)
}

// pairSet is a set of uint64 keys: open addressing, linear probing, each
// slot the key + 1 (0: empty), kept at most half full. Every sample asks
// it once per closure frame and neighbour, nearly always for a pair it
// holds: one probe of a flat table, where a map would hash and chase.
type pairSet struct {
	slots []uint64
	n     int
}

// insert adds k and reports whether it was new.
func (p *pairSet) insert(k uint64) bool {
	if 2*(p.n+1) > len(p.slots) {
		p.grow()
	}
	mask := uint64(len(p.slots) - 1)
	for i := pairHash(k) & mask; ; i = (i + 1) & mask {
		switch p.slots[i] {
		case k + 1:
			return false
		case 0:
			p.slots[i] = k + 1
			p.n++
			return true
		}
	}
}

func (p *pairSet) grow() {
	old := p.slots
	p.slots = prefaulted[uint64](max(1024, 2*len(old)))
	mask := uint64(len(p.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := pairHash(s-1) & mask
		for p.slots[i] != 0 {
			i = (i + 1) & mask
		}
		p.slots[i] = s
	}
}

// pairHash mixes a pair's bits (a multiplicative hash, high bits down).
func pairHash(k uint64) uint64 {
	k *= 0x9e3779b97f4a7c15
	return k ^ k>>29
}

// rowPair is one method row: the method whose base value it shows and the
// one whose new value it shows (-1 for none). They differ only for a
// renumbered closure.
type rowPair struct{ base, new int32 }

// rowPairs lists the method rows of a diff: every method as itself, but
// for closure families whose members pair across the sides otherwise.
func (a *Analyzer) rowPairs() []rowPair {
	families := map[string][]int32{}
	var pairs []rowPair
	renumbered := !a.oneBuild() && !a.overExpected
	for id, m := range a.methods {
		switch {
		case m.val[0] == 0 && m.val[1] == 0:
		case m.family != "" && renumbered:
			families[m.family] = append(families[m.family], int32(id))
		default:
			pairs = append(pairs, rowPair{int32(id), int32(id)})
		}
	}
	names := make([]string, 0, len(families))
	for f := range families {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		pairs = append(pairs, a.pairFamily(families[f])...)
	}
	return pairs
}

// pairFamily pairs the base members of one closure family with its new
// members by neighbour similarity (Jaccard, over neighbour names), greedy
// from the most similar, the same method winning ties; members left over
// are rows of one side.
func (a *Analyzer) pairFamily(ids []int32) []rowPair {
	type cand struct {
		b, n int32
		sim  float64
	}
	var cands []cand
	for _, b := range ids {
		if a.methods[b].val[0] == 0 {
			continue
		}
		for _, n := range ids {
			if a.methods[n].val[1] == 0 {
				continue
			}
			if sim := a.similarity(b, n); sim > 0 || b == n {
				cands = append(cands, cand{b, n, sim})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		x, y := cands[i], cands[j]
		if x.sim != y.sim {
			return x.sim > y.sim
		}
		if (x.b == x.n) != (y.b == y.n) {
			return x.b == x.n
		}
		if x.b != y.b {
			return a.methods[x.b].name < a.methods[y.b].name
		}
		return a.methods[x.n].name < a.methods[y.n].name
	})
	baseDone, newDone := map[int32]bool{}, map[int32]bool{}
	var out []rowPair
	for _, c := range cands {
		if !baseDone[c.b] && !newDone[c.n] {
			baseDone[c.b], newDone[c.n] = true, true
			out = append(out, rowPair{c.b, c.n})
		}
	}
	for _, id := range ids {
		if a.methods[id].val[0] != 0 && !baseDone[id] {
			out = append(out, rowPair{id, -1})
		}
		if a.methods[id].val[1] != 0 && !newDone[id] {
			out = append(out, rowPair{-1, id})
		}
	}
	return out
}

// similarity is the Jaccard index of the neighbour names of closure x on
// the base side and closure y on the new side.
func (a *Analyzer) similarity(x, y int32) float64 {
	nx, ny := a.neighbourNames(result.Base, x), a.neighbourNames(result.New, y)
	if len(nx) == 0 || len(ny) == 0 {
		return 0
	}
	both := 0
	for k := range nx {
		if ny[k] {
			both++
		}
	}
	return float64(both) / float64(len(nx)+len(ny)-both)
}

// neighbourNames names a closure's neighbours on one side: by family for
// closures, by key otherwise.
func (a *Analyzer) neighbourNames(side result.Side, id int32) map[string]bool {
	out := map[string]bool{}
	for _, n := range a.closures.neighboursOf(side, id) {
		m := a.methods[n]
		if m.family != "" {
			out[m.family] = true
		} else {
			out[m.key] = true
		}
	}
	return out
}

// pairedMethod is the method a row shows: the base side of one method
// and the new side of another (the same for all but renumbered closures).
func (a *Analyzer) pairedMethod(p rowPair) (m *method, renamedFrom string) {
	if p.base == p.new {
		return a.methods[p.base], ""
	}
	m = &method{}
	if p.base >= 0 {
		b := a.methods[p.base]
		m.name, m.key, m.val[0], m.buckets[0], m.module[0] = b.name, b.key, b.val[0], b.buckets[0], b.module[0]
	}
	if p.new >= 0 {
		n := a.methods[p.new]
		m.name, m.key, m.val[1], m.buckets[1], m.module[1] = n.name, n.key, n.val[1], n.buckets[1], n.module[1]
		if p.base >= 0 {
			renamedFrom = a.methods[p.base].name
		}
	}
	return m, renamedFrom
}

// closureNeed is called as each profile is registered, before its walk.
// Closures are paired by their neighbours only when both sides have
// profiles and they do not all name one build of the main binary
// (rowPairs); once every profile the caller expects (Expect) is
// registered and neither holds, walks stop noting neighbours, in the
// walks in flight and those to come (a diff of two profiles of one
// build, or top: 8% of the 200k pair's CPU). The results do not depend
// on when a walk sees that. A profile registered past the count
// expected, after that, would meet closures with neighbours missing:
// rowPairs then pairs every closure with itself (overExpected).
func (a *Analyzer) closureNeed() {
	switch n := len(a.profiles); {
	case a.expect <= 0 || n < a.expect:
	case n == a.expect:
		if len(a.sides[result.Base].builds) == 0 || len(a.sides[result.New].builds) == 0 || a.oneBuild() {
			a.unpaired.Store(true)
		}
	case a.unpaired.Load() && !a.overExpected:
		a.overExpected = true
		a.warnings = append(a.warnings, fmt.Sprintf("more profiles added than the %d announced (Analyzer.Expect): Go closures are paired with themselves, by name, not across builds by what they call", a.expect))
	}
}

// oneBuild reports whether every profile of both sides names the same
// build ID for its main binary.
func (a *Analyzer) oneBuild() bool {
	b, n := a.sides[result.Base].builds, a.sides[result.New].builds
	if len(b) != 1 || len(n) != 1 {
		return false
	}
	for id := range b {
		return id != "" && n[id]
	}
	return false
}

// mainBuildID is the build ID of a profile's main binary: its first
// mapping's (pprof's convention, which runtime/pprof and perf follow).
func mainBuildID(p *pprofile.Profile) string {
	if len(p.Mapping) == 0 {
		return ""
	}
	return p.Mapping[0].BuildID
}

// closureFamily is the family of a method key, "" for a non-closure.
func closureFamily(key string) string {
	f, _ := symbolize.ClosureFamily(key)
	return f
}
