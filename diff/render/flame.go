package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/units"
)

// The differential flame graph, in the html format (drawn by the page's
// script) and the svg format (drawn here), follows one set of rules, set
// out in this file; the page's script mirrors them and the browser tests
// hold the two to the same colours and tooltips.
//
// Width. A frame's width is, by default, the larger of its two sides:
// its own self share (of its side's total) on whichever side has more,
// plus the widths of its children, so that a frame present on one side
// only keeps room and children always fit inside their parent (flameOrder).
// The page can instead size frames by the new side alone (removed frames
// then have no width) or hide removed frames.
//
// Colour. A frame is coloured by the change of its inclusive value in the
// result's measure (rate where both rates are known and the measure is
// rate, value for the value measure, share otherwise) on a diverging scale
// anchored at fixed ratios, never at the largest change: ×1 is neutral,
// ×4 and more the full "grew" colour, ×¼ and less the full "shrank"
// colour, log-linear between (flameChange). A new frame is the full grew
// colour; a removed frame is outlined and hatched in the shrank colour.
// Two palettes: red–blue (the default) and orange–purple, which readers
// with red–green colour blindness tell apart as well.
//
// Bucket. Every frame carries its dominant bucket as a band along its
// base, in the bucket's colour (bucketColors).

// FlameClamp is the ratio at which a frame's colour is full: ×4 grew, ×¼
// shrank.
const FlameClamp = 4.0

// Palette is a diverging palette: Grew, Neutral and Shrank colours, hex.
type Palette struct {
	Name    string `json:"name"`
	Grew    string `json:"grew"`
	Neutral string `json:"neutral"`
	Shrank  string `json:"shrank"`
}

// Palettes are the flame graph's palettes, the default first.
var Palettes = []Palette{
	{Name: "red-blue", Grew: "#d73027", Neutral: "#eeeeee", Shrank: "#4575b4"},
	{Name: "orange-purple", Grew: "#e66101", Neutral: "#eeeeee", Shrank: "#5e3c99"},
}

// bucketColors are the bucket bands' colours, by bucket name (grey for
// any other: bucketColor).
var bucketColors = map[string]string{
	"cpu": "#8c8c8c", "wait": "#74add1", "lock-contention": "#c51b7d",
	"gc": "#e0b000", "io": "#1b9e77", "syscall": "#8c510a",
}

// flameSides returns a node's two sides in the flame's measure.
func flameSides(f *report.Flame, n *report.Node) (float64, float64) {
	root := f.Tree.Total
	switch {
	case f.Measure == report.MeasureValue:
		return n.Total[0], n.Total[1]
	case f.Measure == report.MeasureRate && f.RateFactor[0] > 0 && f.RateFactor[1] > 0:
		return n.Total[0] * f.RateFactor[0], n.Total[1] * f.RateFactor[1]
	}
	return frac(n.Total[0], root[0]), frac(n.Total[1], root[1])
}

func frac(v, total float64) float64 {
	if total == 0 {
		return 0
	}
	return v / total
}

// flameChange is a node's colour position: -1 (shrank ×¼ or more, or
// removed) … 0 (unchanged) … +1 (grew ×4 or more, or new).
func flameChange(f *report.Flame, n *report.Node) float64 {
	b, nw := flameSides(f, n)
	switch {
	case f.Sides < 2 || b == nw:
		return 0
	case b == 0:
		return 1
	case nw == 0:
		return -1
	}
	return math.Max(-1, math.Min(1, math.Log(nw/b)/math.Log(FlameClamp)))
}

// flameColor is the colour at change c (see flameChange) in palette p:
// the neutral colour mixed linearly, channel by channel, towards Grew or
// Shrank by |c|, written as #rrggbb.
func flameColor(p Palette, c float64) string {
	to := p.Grew
	if c < 0 {
		to = p.Shrank
	}
	a, b := hexRGB(p.Neutral), hexRGB(to)
	t := math.Abs(c)
	var out [3]int
	for i := range out {
		out[i] = int(math.Round(float64(a[i]) + (float64(b[i])-float64(a[i]))*t))
	}
	return fmt.Sprintf("#%02x%02x%02x", out[0], out[1], out[2])
}

func hexRGB(s string) [3]int {
	var c [3]int
	fmt.Sscanf(strings.TrimPrefix(s, "#"), "%02x%02x%02x", &c[0], &c[1], &c[2])
	return c
}

// flameSelfWidth is a node's own part of its width (see the rules
// above): the larger of its self shares.
func flameSelfWidth(f *report.Flame, n *report.Node) float64 {
	root := f.Tree.Total
	return math.Max(frac(n.Self[0], root[0]), frac(n.Self[1], root[1]))
}

// FlameMaxDepth is the deepest row the svg and html flame graphs draw,
// counted from the drawing's root (0): a recursion thousands of frames
// deep would make a picture too tall for any viewer (a browser's canvas
// stops near 32,000 pixels). Deeper frames still count in their callers'
// widths, and a note under the picture says they are left out.
const FlameMaxDepth = 800

// flameOrder is a flame's tree in preorder (children in the tree's
// order), each node's parent's index (-1 for the root), its depth and
// its width by the larger side as a fraction of the root's sides: its
// larger self share plus its children's widths. The root's width is 1
// when nothing was removed or added, and more otherwise; a drawing scales
// the root to its full width. Widths are summed once, bottom-up, so the
// cost is linear in the nodes however deep the tree is; steps counts the
// node visits of both passes.
type flameOrder struct {
	flame  *report.Flame
	nodes  []*report.Node
	parent []int32
	depth  []int32
	width  []float64
	steps  int
}

// newFlameOrder orders the flame's tree (see flameOrder) without
// recursion, so a stack of any depth costs no goroutine stack either.
func newFlameOrder(f *report.Flame) *flameOrder {
	o := &flameOrder{flame: f}
	type item struct {
		n      *report.Node
		parent int32
		depth  int32
	}
	todo := []item{{f.Tree, -1, 0}}
	for len(todo) > 0 {
		it := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		me := int32(len(o.nodes))
		o.nodes = append(o.nodes, it.n)
		o.parent = append(o.parent, it.parent)
		o.depth = append(o.depth, it.depth)
		o.steps++
		for i := len(it.n.Children) - 1; i >= 0; i-- { // pushed last to first: popped in order
			todo = append(todo, item{it.n.Children[i], me, it.depth + 1})
		}
	}
	o.width = make([]float64, len(o.nodes))
	for i := len(o.nodes) - 1; i >= 0; i-- { // children come after their parent
		o.width[i] += flameSelfWidth(f, o.nodes[i]) // width[i] held its children's sum
		if p := o.parent[i]; p >= 0 {
			o.width[p] += o.width[i]
		}
		o.steps++
	}
	return o
}

// maxDepth is the depth of the deepest node.
func (o *flameOrder) maxDepth() int {
	d := int32(0)
	for _, x := range o.depth {
		d = max(d, x)
	}
	return int(d)
}

// flameTip is a frame's tooltip: "base 12 ms/s (0.27%) → new 310 ms/s
// (4.86%) · +4.59pp · 18x", each side's rate (or value, where the rate is
// unknown) and share, the share delta, and the ratio in the measure; one
// side's "310 ms/s (4.86%)" for a single profile. An "other" frame starts
// with what it merges.
func flameTip(f *report.Flame, n *report.Node) string {
	side := func(s int) string {
		share := Pct(frac(n.Total[s], f.Tree.Total[s]))
		if f.RateFactor[s] > 0 && f.RateUnit != "" {
			return units.Format(n.Total[s]*f.RateFactor[s], f.RateUnit) + " (" + share + ")"
		}
		return units.Format(n.Total[s], f.Unit) + " (" + share + ")"
	}
	var tip string
	if f.Sides < 2 {
		tip = side(0)
	} else {
		tip = "base " + side(0) + " → new " + side(1) + " · " + PP(frac(n.Total[1], f.Tree.Total[1])-frac(n.Total[0], f.Tree.Total[0]))
		b, nw := flameSides(f, n)
		if note := units.RatioNote(b, nw); note != "" {
			tip += " · " + note
		}
	}
	if n.Other > 0 {
		tip = fmt.Sprintf("%d frames too narrow to draw, merged: %s", n.Other, tip)
	}
	return n.Name + "\n" + tip
}
