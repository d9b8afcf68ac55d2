package diff

import (
	"fmt"
	"math"
	"regexp"
	"sort"

	"github.com/profdiff/profdiff/diff/result"
)

// PeekEdges is the number of callers and of callees a PeekRow keeps (the
// largest by |Δ| in the result's measure); PeekRow.CallersOmitted and
// CalleesOmitted count the rest.
const PeekEdges = 10

// peekTable consumes the sample stream for Options.Peek: per matching
// method its inclusive value per side, and per (method, neighbour) edge the
// value of the samples through it. Memory is bounded by the distinct
// edges of matching methods, not by samples.
type peekTable struct {
	re    *regexp.Regexp
	nodes map[int32]*peekNode
	stamp uint64 // counts samples: an edge or node credited this sample has it
}

type peekNode struct {
	val     [2]float64
	seen    uint64 // stamp: credited for the current sample
	callers map[int32]*peekEdgeAcc
	callees map[int32]*peekEdgeAcc
}

type peekEdgeAcc struct {
	val  [2]float64
	seen uint64
}

func newPeekTable(re *regexp.Regexp) *peekTable {
	return &peekTable{re: re, nodes: map[int32]*peekNode{}}
}

// matches reports whether the pattern matches a spelling: the name a
// frame has in its profile, so a sample's frames match by its own names.
func (t *peekTable) matches(a *Analyzer, sp int32) bool {
	s := &a.spellings[sp]
	if s.peek == 0 {
		s.peek = 2
		if t.re.MatchString(s.name) {
			s.peek = 1
		}
	}
	return s.peek == 1
}

// add credits one bucketed sample: each matching frame once, however often
// it recurs in the stack, and each distinct edge of it once.
func (t *peekTable) add(a *Analyzer, s *Sample) {
	t.stamp++
	for i, id := range s.Stack {
		if !t.matches(a, s.Spellings[i]) {
			continue
		}
		n := t.nodes[id]
		if n == nil {
			n = &peekNode{callers: map[int32]*peekEdgeAcc{}, callees: map[int32]*peekEdgeAcc{}}
			t.nodes[id] = n
		}
		if n.seen != t.stamp {
			n.seen = t.stamp
			n.val[s.Side] += s.Value
		}
		if i+1 < len(s.Stack) {
			t.credit(n.callers, s.Stack[i+1], s)
		}
		if i > 0 {
			t.credit(n.callees, s.Stack[i-1], s)
		}
	}
}

// merge adds the nodes and edges of o, a shard's table, whose method ids
// remap turns into t's. Values are sums of integers: the order in which
// map iteration adds them does not change them.
func (t *peekTable) merge(o *peekTable, remap []int32) {
	for id, on := range o.nodes {
		n := t.nodes[remap[id]]
		if n == nil {
			n = &peekNode{callers: map[int32]*peekEdgeAcc{}, callees: map[int32]*peekEdgeAcc{}}
			t.nodes[remap[id]] = n
		}
		n.val[0] += on.val[0]
		n.val[1] += on.val[1]
		mergeEdges(n.callers, on.callers, remap)
		mergeEdges(n.callees, on.callees, remap)
	}
}

func mergeEdges(dst, src map[int32]*peekEdgeAcc, remap []int32) {
	for id, oe := range src {
		e := dst[remap[id]]
		if e == nil {
			e = &peekEdgeAcc{}
			dst[remap[id]] = e
		}
		e.val[0] += oe.val[0]
		e.val[1] += oe.val[1]
	}
}

func (t *peekTable) credit(m map[int32]*peekEdgeAcc, other int32, s *Sample) {
	e := m[other]
	if e == nil {
		e = &peekEdgeAcc{}
		m[other] = e
	}
	if e.seen != t.stamp {
		e.seen = t.stamp
		e.val[s.Side] += s.Value
	}
}

// rows returns the peeked frames, sorted by |Δ| in measure n, then by
// name, cut to top rows (≤ 0: all), each with its PeekEdges largest
// callers and callees.
func (t *peekTable) rows(a *Analyzer, r *rates, n result.Normalize, bt, nt float64, top int) ([]result.PeekRow, int) {
	vars := a.variants()
	mk := func(id int32, v *[2]float64) result.PeekEdge {
		return result.PeekEdge{Name: a.methodDisplayName(id, vars), Values: r.values(a.unit, v[0], v[1])}
	}
	key := func(v *result.Values) float64 {
		b, nw := measure(n, share(v.BaseValue, bt), share(v.NewValue, nt), v)
		return math.Abs(nw - b)
	}
	edges := func(m map[int32]*peekEdgeAcc) ([]result.PeekEdge, int) {
		out := make([]result.PeekEdge, 0, len(m))
		for id, e := range m {
			out = append(out, mk(id, &e.val))
		}
		sort.Slice(out, func(i, j int) bool { return byMeasure(key, &out[i].Values, &out[j].Values, out[i].Name, out[j].Name) })
		if len(out) > PeekEdges {
			return out[:PeekEdges], len(out) - PeekEdges
		}
		return out, 0
	}
	rows := make([]result.PeekRow, 0, len(t.nodes))
	for id, nd := range t.nodes {
		row := result.PeekRow{Name: a.methodDisplayName(id, vars), Values: r.values(a.unit, nd.val[0], nd.val[1])}
		row.Callers, row.CallersOmitted = edges(nd.callers)
		row.Callees, row.CalleesOmitted = edges(nd.callees)
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool {
		return byMeasure(key, &rows[i].Values, &rows[j].Values, rows[i].Name, rows[j].Name)
	})
	if top > 0 && len(rows) > top {
		return rows[:top], len(rows) - top
	}
	return rows, 0
}

// warning says when the peek pattern matched no frame of any kept sample.
func (t *peekTable) warning() []string {
	if len(t.nodes) > 0 {
		return nil
	}
	return []string{fmt.Sprintf("no frame matches the peek pattern %q", t.re.String())}
}

// byMeasure orders by key descending, then by name.
func byMeasure(key func(*result.Values) float64, a, b *result.Values, an, bn string) bool {
	if ka, kb := key(a), key(b); ka != kb {
		return ka > kb
	}
	return an < bn
}

// methodDisplayName names a method as rows do: by its label (vars:
// Analyzer.variants), qualified by the module of the new side, else the
// base side.
func (a *Analyzer) methodDisplayName(id int32, vars []int32) string {
	m := a.methods[id]
	mod := m.module[result.New]
	if mod == "" {
		mod = m.module[result.Base]
	}
	return a.qualify(m.label(vars[id]), mod)
}
