package render

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/units"
)

// flameData is what the page's script draws a flame graph from, embedded
// once per graph as JSON: the flame's rules (clamp, palettes, bucket
// colours, the units' ladders, so that the script formats amounts as
// amount does) and the tree as flat arrays.
//
// Names holds each distinct frame name once. Nodes are the tree in
// preorder (children in the tree's order), each
// [parent, name, bucket, total base, total new, self base, self new]
// followed, when set, by its Other count and then its bucket split as a
// flat [bucket, base, new, …] list (Other is 0 when only the split is
// there). Parent is the index of the parent node (-1 for the root); name
// indexes Names and bucket Buckets. Values are in Unit, rounded to six
// significant digits (whole numbers as they are).
type flameData struct {
	Sides        int                   `json:"sides"`
	Unit         string                `json:"unit"`
	RateUnit     string                `json:"rateUnit"`
	RateFactor   [2]float64            `json:"rateFactor"`
	Measure      string                `json:"measure"`
	Labels       [2]string             `json:"labels"`
	Clamp        float64               `json:"clamp"`
	Palettes     []Palette             `json:"palettes"`
	Buckets      []string              `json:"buckets"`
	BucketColors []string              `json:"bucketColors"`
	Units        map[string]*unitScale `json:"units"`
	MaxDepth     int                   `json:"maxDepth"` // FlameMaxDepth: deeper rows below the view's root are not drawn
	Names        []string              `json:"names"`
	Nodes        json.RawMessage       `json:"nodes"`
}

// unitScale is a scaled unit's ladder (units.Ladder) for the script.
type unitScale struct {
	Base  float64  `json:"base"`
	Steps [][2]any `json:"steps"` // [size, name]
	Zero  string   `json:"zero"`
}

// newFlameData builds a flame graph's data; it stops with the context's
// cause when chk's context ends.
func newFlameData(f *report.Flame, chk stop.Check) (*flameData, error) {
	d := &flameData{Sides: f.Sides, Unit: f.Unit, RateUnit: f.RateUnit, RateFactor: f.RateFactor,
		Measure: string(f.Measure), Labels: f.Labels, Clamp: FlameClamp, MaxDepth: FlameMaxDepth, Palettes: Palettes, Units: map[string]*unitScale{},
		Buckets: []string{}, BucketColors: []string{}}
	for _, name := range f.Buckets {
		d.Buckets = append(d.Buckets, name)
		d.BucketColors = append(d.BucketColors, bucketColors[name])
	}
	for _, u := range []string{f.Unit, f.RateUnit} {
		if l, ok := units.Lookup(u); ok {
			us := &unitScale{Base: l.Base, Zero: l.Zero}
			for _, s := range l.Steps {
				us.Steps = append(us.Steps, [2]any{s.Size, s.Name})
			}
			d.Units[u] = us
		}
	}
	index := map[string]int{}
	var b strings.Builder
	b.WriteByte('[')
	count := 0
	var err error
	var walk func(n *report.Node, parent int)
	walk = func(n *report.Node, parent int) {
		if err == nil {
			err = chk.Err()
		}
		if err != nil {
			return
		}
		id, ok := index[n.Name]
		if !ok {
			id = len(d.Names)
			index[n.Name] = id
			d.Names = append(d.Names, n.Name)
		}
		if count > 0 {
			b.WriteString(",\n")
		}
		me := count
		count++
		fmt.Fprintf(&b, "[%d,%d,%d,%s,%s,%s,%s", parent, id, n.Bucket,
			compactNum(n.Total[0]), compactNum(n.Total[1]), compactNum(n.Self[0]), compactNum(n.Self[1]))
		if n.Other > 0 || len(n.Split) > 0 {
			fmt.Fprintf(&b, ",%d", n.Other)
		}
		if len(n.Split) > 0 {
			b.WriteString(",[")
			for i, s := range n.Split {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%d,%s,%s", s.Bucket, compactNum(s.Value[0]), compactNum(s.Value[1]))
			}
			b.WriteByte(']')
		}
		b.WriteByte(']')
		for _, c := range n.Children {
			walk(c, me)
		}
	}
	walk(f.Tree, -1)
	b.WriteByte(']')
	d.Nodes = json.RawMessage(b.String())
	return d, err
}

// compactNum is v for the page: whole numbers as they are, others with
// six significant digits.
func compactNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// measureWords is what a flame graph's colour compares, for its caption.
func measureWords(f *report.Flame) string {
	switch {
	case f.Measure == report.MeasureValue:
		return "ratio of values"
	case f.Measure == report.MeasureRate && f.RateFactor[0] > 0 && f.RateFactor[1] > 0:
		return "ratio of rates"
	}
	return "ratio of shares"
}

// otherShares are the shares of each side's total held by "other" frames.
func otherShares(n *report.Node, root [2]float64) (s [2]float64) {
	if n.Other > 0 {
		return [2]float64{frac(n.Total[0], root[0]), frac(n.Total[1], root[1])}
	}
	for _, c := range n.Children {
		o := otherShares(c, root)
		s[0], s[1] = s[0]+o[0], s[1]+o[1]
	}
	return s
}

// writeFlame writes a flame graph: its controls, the canvas the script
// draws on, its caption and legend, and its data (id names the data).
func writeFlame(ew *errWriter, f *report.Flame, id string, chk stop.Check) error {
	if f.Tree == nil {
		return nil
	}
	fd, err := newFlameData(f, chk)
	if err != nil {
		return err
	}
	data, err := json.Marshal(fd)
	if err != nil {
		return err
	}
	ew.printf("<section class=\"flame\" data-flame=\"%s\">\n", id)
	ew.printf("<h2>Flame graph</h2>\n<div class=\"controls\"></div>\n")
	if f.Sides > 1 {
		ew.printf("<p class=\"caption\">widths: <span class=\"width-rule\">larger side</span>; colour: %s (%s → %s), full at ×%g and ×1/%g</p>\n",
			measureWords(f), html.EscapeString(f.Labels[0]), html.EscapeString(f.Labels[1]), FlameClamp, FlameClamp)
	} else {
		ew.printf("<p class=\"caption\">widths: share of %s; colour: bucket</p>\n", html.EscapeString(f.Labels[0]))
	}
	ew.printf("<div class=\"legend\"></div>\n<div class=\"status\"></div>\n")
	if depth := newFlameOrder(f).maxDepth(); depth > FlameMaxDepth {
		ew.printf("<p class=\"deep\">the call tree is %d frames deep: frames more than %d below the shown root are not drawn; click a deep frame to zoom in</p>\n", depth, FlameMaxDepth)
	}
	ew.printf("<div class=\"graph\"><canvas></canvas><div class=\"tip\" hidden></div></div>\n")
	if o := otherShares(f.Tree, f.Tree.Total); o[0] > 0 || o[1] > 0 {
		ew.printf("<p class=\"other\">frames narrower than 1/%.0f merged into 'other': %s of %s", 1/TreeMin, Pct1(o[0]), html.EscapeString(f.Labels[0]))
		if f.Sides > 1 {
			ew.printf(", %s of %s", Pct1(o[1]), html.EscapeString(f.Labels[1]))
		}
		ew.printf("</p>\n")
	}
	// JSON in a script element: "</" must not end it early.
	ew.printf("<script type=\"application/json\" id=\"%s\">%s</script>\n</section>\n", id, strings.ReplaceAll(string(data), "</", `<\/`))
	return nil
}
