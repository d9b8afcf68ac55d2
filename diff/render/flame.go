package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/profdiff/profdiff/diff"
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
// only keeps room and children always fit inside their parent (flameWidth).
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

// flameWidth is a node's width by the larger side, as a fraction of the
// root's sides (see the rules above): the larger self share plus the
// children's widths. The root's is 1 when nothing was removed or added,
// and more otherwise; a drawing scales the root to its full width.
func flameWidth(f *report.Flame, n *report.Node) float64 {
	root := f.Tree.Total
	w := math.Max(frac(n.Self[0], root[0]), frac(n.Self[1], root[1]))
	for _, c := range n.Children {
		w += flameWidth(f, c)
	}
	return w
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

// DiffPictures are the html-only blocks of a diff beside its tables: the
// bucket bars and, when the result holds a call tree, the differential
// flame graph. The gate's page shows its merged sides with them.
func DiffPictures(r *diff.Result) []report.Block {
	blocks := bucketCharts(r)
	if f := diffFlame(r); f != nil {
		blocks = append(blocks, f)
	}
	return blocks
}

// diffFlame is the flame-graph block of a diff whose result holds a call
// tree (nil when it holds none).
func diffFlame(r *diff.Result) report.Block {
	if r.Tree == nil {
		return nil
	}
	return &report.Flame{Tree: flameTree(r.Tree), Sides: 2, Unit: r.Unit, RateUnit: r.RateUnit, Measure: report.Measure(r.Normalize),
		RateFactor: [2]float64{factor(r.Base.TotalRate, r.Base.Total), factor(r.New.TotalRate, r.New.Total)}, Labels: [2]string{"base", "new"}, Buckets: bucketNames()}
}

// topFlame is the flame graph of a top listing (one side).
func topFlame(t *diff.TopResult) report.Block {
	if t.Tree == nil {
		return nil
	}
	return &report.Flame{Tree: flameTree(t.Tree), Sides: 1, Unit: t.Unit, RateUnit: t.RateUnit, Measure: report.Measure(t.Normalize),
		RateFactor: [2]float64{factor(t.TotalRate, t.Total), 0}, Labels: [2]string{"profile", ""}, Buckets: bucketNames()}
}

// factor is a side's rate per unit of value: its total rate over its
// total (0 when the rate is unknown or the side empty).
func factor(rate *float64, total float64) float64 {
	if rate == nil || total == 0 {
		return 0
	}
	return *rate / total
}

// flameTree is the engine's call tree as the report's: the same nodes,
// children in the same order, buckets as indexes into bucketNames and a
// node's bucket split in bucket order (never map order).
func flameTree(n *diff.CallNode) *report.Node {
	out := &report.Node{Name: n.Name, Total: n.Total, Self: n.Self, Bucket: int(n.Bucket), Other: n.Other}
	for _, b := range diff.Buckets {
		if v, ok := n.Buckets[b]; ok {
			out.Split = append(out.Split, report.BucketValue{Bucket: int(b), Value: v})
		}
	}
	if len(n.Children) > 0 {
		out.Children = make([]*report.Node, len(n.Children))
		for i, c := range n.Children {
			out.Children[i] = flameTree(c)
		}
	}
	return out
}

// bucketNames are the buckets' names, indexed by diff.Bucket.
func bucketNames() []string {
	names := make([]string, len(diff.Buckets))
	for i, b := range diff.Buckets {
		names[i] = b.String()
	}
	return names
}
