package callgrind

import (
	"fmt"
	"math"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/perfscript"
)

// Bounds of the expansion of a graph into stacks (see the package doc):
// a subtree lighter than pruneShare of the heaviest function is not
// expanded (speedscope's threshold), nor one deeper than maxDepth; at
// most maxCells stack nodes times events are made per file (64 MiB of
// weights) and maxVisits calls of a function looked at, however the graph
// is made; what is not expanded stays with the caller.
const (
	pruneShare = 1e-4
	maxDepth   = 4096
	maxCells   = 1 << 23
	maxVisits  = 1 << 24
)

// tree is the call tree the graphs expand into: node 0 is the root (no
// function), every other node a function under its parent, with its self
// weight per event.
type tree struct {
	parent   []int
	fn       []int
	self     [][]float64
	children map[[2]int]int // (parent, function) → node
	nevents  int
	visits   int
	full     bool // maxCells or maxVisits reached
}

func (t *tree) child(parent, fn int) (int, bool) {
	k := [2]int{parent, fn}
	if c, ok := t.children[k]; ok {
		return c, true
	}
	if len(t.parent) >= maxCells/t.nevents {
		t.full = true
		return 0, false
	}
	c := len(t.parent)
	t.parent = append(t.parent, parent)
	t.fn = append(t.fn, fn)
	t.self = append(t.self, make([]float64, t.nevents))
	t.children[k] = c
	return c, true
}

// expand adds event e's graph to t.
func (p *parser) expand(t *tree, e int) {
	g := &p.graphs[e]
	incoming := make([]float64, len(p.funcs))
	for _, m := range g.calls {
		for c, w := range m {
			incoming[c] += w
		}
	}
	heaviest := 0.0
	for _, w := range g.total {
		heaviest = max(heaviest, w)
	}
	floor := pruneShare * heaviest
	onStack := make([]bool, len(p.funcs))
	callees := map[int][]int{} // sorted, for a deterministic order
	var visit func(node, f int, w float64, depth int) bool
	visit = func(node, f int, w float64, depth int) bool {
		if t.visits++; t.visits > maxVisits {
			t.full = true
			return false
		}
		tot := g.total[f]
		if onStack[f] || w < floor && depth > 1 || tot <= 0 || depth > maxDepth {
			return false
		}
		n, ok := t.child(node, f)
		if !ok {
			return false
		}
		onStack[f] = true
		self := w
		cs, ok := callees[f]
		if !ok {
			for c := range g.calls[f] {
				cs = append(cs, c)
			}
			sort.Ints(cs)
			callees[f] = cs
		}
		for _, c := range cs {
			cw := w * g.calls[f][c] / tot
			if visit(n, c, cw, depth+1) {
				self -= cw
			}
		}
		onStack[f] = false
		t.self[n][e] += max(self, 0)
		return true
	}
	for f := range p.funcs {
		if w := g.total[f] - incoming[f]; w > 0 {
			visit(0, f, w, 1)
		}
	}
}

// valueType is the sample type of an event, with the factor its counts
// are multiplied by.
func valueType(event string) (*pprofile.ValueType, int64) {
	switch event {
	case "Time_(10ns)": // Xdebug
		return &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"}, 10
	case "Memory_(bytes)": // Xdebug
		return &pprofile.ValueType{Type: "memory", Unit: "bytes"}, 1
	}
	return &pprofile.ValueType{Type: event, Unit: "count"}, 1
}

// profile expands every event's graph and builds the profile.
func (p *parser) profile() (*pprofile.Profile, []string, error) {
	var warns []string
	sums, have := p.summary, p.haveSummary
	if p.haveTotals {
		sums, have = p.totals, true
	}
	if have && sums[0] != p.selfSum[0] {
		warns = append(warns, fmt.Sprintf("the self costs of %s add up to %d, but the file states a total of %d (a truncated or edited file?)", p.events[0], p.selfSum[0], sums[0]))
	}
	t := &tree{parent: []int{-1}, fn: []int{-1}, self: [][]float64{nil}, children: map[[2]int]int{}, nevents: len(p.events)}
	for e := range p.events {
		p.expand(t, e)
	}
	if t.full {
		warns = append(warns, fmt.Sprintf("the call graph expands into more stacks than the reader makes (%d nodes): the rest of the cost stays with the callers", len(t.parent)-1))
	}

	b := build.New[fnKey, int](nil)
	prof := b.P
	scale := make([]int64, len(p.events))
	for e, name := range p.events {
		vt, k := valueType(name)
		prof.SampleType = append(prof.SampleType, vt)
		scale[e] = k
	}
	prof.DefaultSampleType = prof.SampleType[0].Type
	// The period type says what the profile counts, so that the kind
	// survives a pprof round trip: executed instructions (and the other
	// events, which count only while a thread runs), or Xdebug's time.
	prof.PeriodType = &pprofile.ValueType{Type: "instructions", Unit: "count"}
	if prof.SampleType[0].Unit != "count" {
		prof.PeriodType = &pprofile.ValueType{Type: prof.SampleType[0].Type, Unit: prof.SampleType[0].Unit}
	}
	prof.Period = 1
	prof.Comments = []string{"callgrind: call graph expanded into stacks (" + strings.Join(p.events, " ") + ")"}

	locs := make([]*pprofile.Location, len(p.funcs))
	for n := 1; n < len(t.parent); n++ {
		var vals []int64
		nonzero := false
		for e, w := range t.self[n] {
			v := int64(math.Round(w))
			if v > math.MaxInt64/scale[e] {
				return nil, nil, fmt.Errorf("%w: costs overflow", ErrSyntax)
			}
			vals = append(vals, v*scale[e])
			nonzero = nonzero || v != 0
		}
		if !nonzero {
			continue
		}
		s := &pprofile.Sample{Value: vals}
		for m := n; m > 0; m = t.parent[m] {
			f := t.fn[m]
			if locs[f] == nil {
				k := p.funcs[f]
				name := k.name
				switch {
				case name == "":
					name = "(unknown)"
				case name[0] != '(': // not callgrind's own "(below main)"
					// The name perf script gives: Valgrind
					// demangles with the parameter list, which
					// other readers (and --demangle=no) drop.
					name = perfscript.TidyName(name, "", false)
				}
				fn := b.Function(k, pprofile.Function{Name: name, SystemName: k.name, Filename: k.file})
				locs[f] = b.AddLocation(&pprofile.Location{Line: []pprofile.Line{{Function: fn}}})
			}
			s.Location = append(s.Location, locs[f])
		}
		b.AddSample(s)
	}
	return prof, warns, nil
}
