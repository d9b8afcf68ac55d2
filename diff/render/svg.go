package render

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/report"
)

// The svg format is the report's flame graph (its *report.Flame) alone: a
// static SVG 1.1 document, no script and nothing fetched, drawn by the
// rules of flame.go in flame orientation (the root at the bottom, as
// FlameGraph draws it). Each frame is a <g class="frame"> holding a
// <title> (its tooltip, flameTip, which browsers show on hover), its
// rectangle, its bucket band and its label; under the graph a legend and a
// caption say what width and colour mean and what the "other" frames hold.
const (
	svgWidth  = 1200.0 // the document's width, px
	svgPad    = 10.0   // left and right margin
	svgTop    = 34.0   // the title's room above the frames
	svgRow    = 16.0   // a frame row's height, its 1 px gap included
	svgBand   = 3.0    // the bucket band along a frame's base
	svgFont   = 11.0   // the labels' font size (monospace)
	svgCharW  = 0.6 * svgFont
	svgMinPx  = 0.5 // frames narrower are not drawn (their width still counts)
	svgMinLbl = 3   // labels shorter than this many characters are left out
)

// svgFrame is a frame placed on the drawing.
type svgFrame struct {
	n     *report.Node
	x, w  float64
	depth int
}

// writeSVG writes the svg format.
func writeSVG(w io.Writer, r *report.Report, chk stop.Check) error {
	f := reportFlame(r)
	if f == nil || f.Tree == nil {
		return errors.New("this report has no svg form (no call tree)")
	}
	frames, depth, order, err := layoutFlame(f, chk)
	if err != nil {
		return err
	}
	legendY := svgTop + float64(depth+1)*svgRow + 18
	height := legendY + 88
	if flameDeepNote(order.maxDepth()) != "" {
		height += 15 // the caption's extra line
	}
	ew := &errWriter{w: w}
	ew.printf("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n")
	ew.printf("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%s\" height=\"%s\" viewBox=\"0 0 %s %s\" font-family=\"monospace\" font-size=\"%s\">\n",
		svgNum(svgWidth), svgNum(height), svgNum(svgWidth), svgNum(height), svgNum(svgFont))
	title := "Flame graph"
	if f.Sides >= 2 {
		title = "Differential flame graph: " + f.Labels[0] + " → " + f.Labels[1]
	}
	ew.printf("<title>%s</title>\n", svgEsc(title))
	shrank := Palettes[0].Shrank
	ew.printf("<defs><pattern id=\"removed\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" patternTransform=\"rotate(45)\">"+
		"<rect width=\"6\" height=\"6\" fill=\"#ffffff\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"%s\" stroke-width=\"2.5\"/></pattern></defs>\n", shrank)
	ew.printf("<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n")
	ew.printf("<text x=\"%s\" y=\"22\" font-size=\"15\" font-family=\"sans-serif\">%s</text>\n", svgNum(svgPad), svgEsc(title))
	for _, fr := range frames {
		svgFrameTo(ew, f, fr, svgTop+float64(depth-fr.depth)*svgRow)
		if ew.err != nil {
			return ew.err // the writer failed or was stopped: no use formatting the rest
		}
	}
	svgLegend(ew, f, order, legendY)
	ew.printf("</svg>\n")
	return ew.err
}

// layoutFlame places the frames wide enough to draw and no deeper than
// FlameMaxDepth, parents before their children and children in the
// tree's order, each child starting where its elder sibling ends (from
// the parent's left edge), and returns them with the deepest drawn depth
// and the tree's order. The root's width (flameOrder) fills the drawing.
// It stops with the context's cause when chk's context ends.
func layoutFlame(f *report.Flame, chk stop.Check) ([]svgFrame, int, *flameOrder, error) {
	o := newFlameOrder(f)
	rootW := o.width[0]
	if rootW <= 0 {
		return nil, 0, o, nil
	}
	scale := (svgWidth - 2*svgPad) / rootW
	var out []svgFrame
	depth := 0
	// x and next are each node's left edge and where its next child
	// starts; a node is drawn when its parent is and it is wide enough.
	x := make([]float64, len(o.nodes))
	next := make([]float64, len(o.nodes))
	drawn := make([]bool, len(o.nodes))
	for i, n := range o.nodes {
		if err := chk.Err(); err != nil {
			return nil, 0, o, err
		}
		w := o.width[i] * scale
		if p := o.parent[i]; p < 0 {
			x[i] = svgPad
		} else {
			x[i] = next[p]
			next[p] += w
			if !drawn[p] {
				continue
			}
		}
		next[i] = x[i]
		d := int(o.depth[i])
		if w < svgMinPx || d > FlameMaxDepth {
			continue
		}
		drawn[i] = true
		out = append(out, svgFrame{n: n, x: x[i], w: w, depth: d})
		depth = max(depth, d)
	}
	return out, depth, o, nil
}

// removed reports whether a node of a comparison is absent from the new
// side.
func removed(f *report.Flame, n *report.Node) bool {
	return f.Sides >= 2 && n.Total[1] == 0 && n.Total[0] > 0
}

// svgFrameTo draws one frame with its top at y.
func svgFrameTo(ew *errWriter, f *report.Flame, fr svgFrame, y float64) {
	n := fr.n
	class := "frame"
	if n.Other > 0 {
		class += " other"
	}
	fill, band := flameFill(f, n), bucketColor(f, n.Bucket)
	stroke := ""
	if fr.w >= 3 {
		stroke = ` stroke="#ffffff" stroke-width="0.5"` // neighbours of one colour stay apart; thinner frames keep their colour
	}
	if removed(f, n) {
		class += " removed"
		fill = "url(#removed)"
		stroke = fmt.Sprintf(" stroke=\"%s\" stroke-width=\"1\"", Palettes[0].Shrank)
	}
	h := svgRow - 1
	ew.printf("<g class=\"%s\"><title>%s</title>", class, svgEsc(flameTip(f, n)))
	ew.printf("<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"%s/>",
		svgNum(fr.x), svgNum(y), svgNum(fr.w), svgNum(h), fill, stroke)
	if f.Sides >= 2 {
		ew.printf("<rect class=\"bucket\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"/>",
			svgNum(fr.x), svgNum(y+h-svgBand), svgNum(fr.w), svgNum(svgBand), band)
	}
	if label := svgLabel(n.Name, fr.w); label != "" {
		ew.printf("<text x=\"%s\" y=\"%s\" fill=\"%s\">%s</text>",
			svgNum(fr.x+3), svgNum(y+h-svgBand-2), textOn(fill), svgEsc(label))
	}
	ew.printf("</g>\n")
}

// flameFill is a frame's colour: by change for a comparison, by bucket
// for one profile.
func flameFill(f *report.Flame, n *report.Node) string {
	if f.Sides < 2 {
		return bucketColor(f, n.Bucket)
	}
	return flameColor(Palettes[0], flameChange(f, n))
}

// bucketColor is the band colour of bucket b of the flame (grey for one
// without).
func bucketColor(f *report.Flame, b int) string {
	if b >= 0 && b < len(f.Buckets) {
		if c, ok := bucketColors[f.Buckets[b]]; ok {
			return c
		}
	}
	return "#8c8c8c"
}

// textOn is a label's colour on a fill: white on dark colours, else black.
func textOn(fill string) string {
	if !strings.HasPrefix(fill, "#") {
		return "#000000"
	}
	c := hexRGB(fill)
	if 0.299*float64(c[0])+0.587*float64(c[1])+0.114*float64(c[2]) < 140 {
		return "#ffffff"
	}
	return "#000000"
}

// svgLabel is a frame's name cut to fit w pixels ("..": cut), or "" when
// fewer than svgMinLbl characters fit. A wide rune (CJK) takes two
// characters' room, as in a terminal (see width).
func svgLabel(name string, w float64) string {
	fit := int((w - 6) / svgCharW)
	if fit < svgMinLbl {
		return ""
	}
	if width(name) <= fit {
		return name
	}
	return cutWidth(name, fit-2) + ".."
}

// svgLegend draws the colour scale's fixed anchors and the bucket colours
// at y, and the caption under them.
func svgLegend(ew *errWriter, f *report.Flame, o *flameOrder, y float64) {
	x := svgPad
	swatch := func(fill, stroke, label string) {
		ew.printf("<rect x=\"%s\" y=\"%s\" width=\"14\" height=\"11\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1\"/>",
			svgNum(x), svgNum(y-9), fill, stroke)
		ew.printf("<text x=\"%s\" y=\"%s\">%s</text>\n", svgNum(x+18), svgNum(y), svgEsc(label))
		x += 18 + float64(utf8.RuneCountInString(label))*svgCharW + 14
	}
	head := func(label string) {
		ew.printf("<text x=\"%s\" y=\"%s\">%s</text>\n", svgNum(x), svgNum(y), svgEsc(label))
		x += float64(utf8.RuneCountInString(label))*svgCharW + 8
	}
	ew.printf("<g class=\"legend\">\n")
	if f.Sides >= 2 {
		head("change:")
		p := Palettes[0]
		for _, a := range []struct {
			c     float64
			label string
		}{{-1, "≤¼x"}, {-0.5, "½x"}, {0, "1x"}, {0.5, "2x"}, {1, "≥4x"}, {1, "new"}} {
			c := flameColor(p, a.c)
			swatch(c, c, a.label)
		}
		swatch("url(#removed)", p.Shrank, "removed")
		x += 16
	}
	head("bucket:")
	for b, name := range f.Buckets {
		swatch(bucketColor(f, b), bucketColor(f, b), name)
	}
	for i, line := range flameCaption(f, o) {
		ew.printf("<text x=\"%s\" y=\"%s\">%s</text>\n", svgNum(svgPad), svgNum(y+22+float64(i)*15), svgEsc(line))
	}
	ew.printf("</g>\n")
}

// flameCaption says what the drawing shows: its sides, the width rule,
// the colour measure and what the "other" frames hold.
func flameCaption(f *report.Flame, o *flameOrder) []string {
	unit := f.Unit
	if f.RateUnit != "" && (f.RateFactor[0] > 0 || f.RateFactor[1] > 0) {
		unit += ", rates in " + f.RateUnit
	}
	var lines []string
	if f.Sides < 2 {
		lines = []string{
			"One profile (values in " + unit + "); root at the bottom; hover a frame for its numbers.",
			"Width: each frame's share of the total (its self plus its callees'); colour: the frame's bucket.",
			flameOther(o),
		}
	} else {
		lines = []string{
			"Sides: " + f.Labels[0] + " → " + f.Labels[1] + " (values in " + unit + "); root at the bottom; hover a frame for its numbers.",
			"Width: the larger side, each frame's larger self share (of its side's total) plus its callees', so removed frames keep their room.",
			"Colour: change of the frame's total in " + flameMeasure(f) + ", " + f.Labels[1] + " ÷ " + f.Labels[0] +
				", full at ×4 and ×¼ (fixed, not scaled to the largest change); band along the base: the frame's bucket.",
			flameOther(o),
		}
	}
	if note := flameDeepNote(o.maxDepth()); note != "" {
		lines = append(lines, note)
	}
	return lines
}

// flameDeepNote says that frames deeper than FlameMaxDepth are not drawn,
// for a tree as deep as depth ("" for one that fits).
func flameDeepNote(depth int) string {
	if depth <= FlameMaxDepth {
		return ""
	}
	return fmt.Sprintf("The call tree is %d frames deep: frames deeper than %d are not drawn (their time still counts in their callers' widths).", depth, FlameMaxDepth)
}

// flameMeasure names the measure colour compares (see flameSides).
func flameMeasure(f *report.Flame) string {
	switch {
	case f.Measure == report.MeasureValue:
		return "value"
	case f.Measure == report.MeasureRate && f.RateFactor[0] > 0 && f.RateFactor[1] > 0:
		return "rate (" + f.RateUnit + ")"
	}
	return "share"
}

// flameOther says what the "other" frames hold, per side.
func flameOther(o *flameOrder) string {
	var held [2]float64
	merged := 0
	for _, n := range o.nodes {
		if n.Other > 0 {
			merged += n.Other
			held[0] += n.Total[0]
			held[1] += n.Total[1]
		}
	}
	f := o.flame
	if merged == 0 {
		return `No frame was too narrow to keep: there is no "other" frame.`
	}
	s := fmt.Sprintf(`"other" frames merge %d subtrees too narrow to draw, holding %s of %s`,
		merged, Pct(frac(held[0], f.Tree.Total[0])), f.Labels[0])
	if f.Sides >= 2 {
		s += fmt.Sprintf(" and %s of %s", Pct(frac(held[1], f.Tree.Total[1])), f.Labels[1])
	}
	return s + "."
}

// svgNum writes a coordinate with at most two decimals, no trailing zeros.
func svgNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// svgEsc escapes text for XML character data and attribute values.
func svgEsc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
