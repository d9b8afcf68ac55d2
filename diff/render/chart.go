package render

import (
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/units"
)

// The chart's frame, in SVG pixels: a fixed size so that pages lay out
// the same whatever the data.
const (
	chartW, chartH         = 640, 340
	chartPlotL, chartPlotR = 80, 620 // plot area, left and right
	chartPlotT, chartPlotB = 56, 270 // top and bottom
)

// chartSeriesColors are the series' colours in order (base blue, new orange,
// then others); colour-blind safe (Okabe–Ito).
var chartSeriesColors = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00"}

const chartFailed = "#d62728"

// chartSVG writes chart c as an inline <svg> element for the html format:
// no XML prolog, no xmlns (HTML puts an inline svg in its namespace, and
// the page holds no address), no script, nothing fetched, and valid XML. It has the
// title, axes with 1-2-5 ticks labelled in the axis units (amounts such
// as nanoseconds scaled, report.ShareUnit as percentages, other numbers plain),
// a legend when there are several series, a <title> tooltip per point
// ("4 cores: 12,345 requests/s"; a line chart's Point.Label, when set,
// stands for the X part), a ring and "peak" on MarkPeak, a red ✕ on the X
// axis with a "failed" tooltip on MarkFailed, Point.Link as an <a href>
// around the point (relative links only), the threshold as a dashed line
// with its label, and the note as a caption. Y always spans zero.
// Points whose value is not finite are not drawn.
func chartSVG(w io.Writer, c *report.Chart) error {
	if c == nil {
		return errors.New("chart: no chart")
	}
	cv := newChartCanvas(c)
	var note []string
	if c.Note != "" {
		note = wrap(c.Note, 86) // about 7 px a character at 12 px
	}
	h := chartH + 16*max(0, len(note)-1)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" font-family="sans-serif" font-size="12">`+"\n",
		chartW, h, chartW, h, chartEsc(c.Title))
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", chartEsc(c.Title))
	fmt.Fprintf(&b, `<text class="chart-title" x="%d" y="20" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`+"\n", chartW/2, chartEsc(c.Title))
	cv.legend(&b)
	cv.axes(&b)
	switch c.Kind {
	case report.ChartBars:
		cv.bars(&b)
	case report.ChartDots:
		cv.dots(&b)
	default:
		cv.lines(&b)
	}
	cv.threshold(&b)
	for i, line := range note {
		fmt.Fprintf(&b, `<text class="chart-note" x="%d" y="%d" fill="#555">%s</text>`+"\n", chartPlotL-60, chartH-8+16*i, chartEsc(line))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// chartCanvas is a chart with its scales worked out.
type chartCanvas struct {
	c      *report.Chart
	cats   []string // X categories (bars and dots), in order of appearance
	xt, yt []float64
}

func newChartCanvas(c *report.Chart) *chartCanvas {
	cv := &chartCanvas{c: c}
	ylo, yhi := 0.0, 0.0
	xlo, xhi := math.Inf(1), math.Inf(-1)
	seen := map[string]bool{}
	for _, s := range c.Series {
		for _, p := range s.Points {
			if c.Kind != report.ChartLine && !seen[p.Label] {
				seen[p.Label] = true
				cv.cats = append(cv.cats, p.Label)
			}
			if chartFinite(p.X) {
				xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
			}
			if p.Mark != report.MarkFailed && chartFinite(p.Y) {
				ylo, yhi = math.Min(ylo, p.Y), math.Max(yhi, p.Y)
			}
		}
	}
	if t := c.Threshold; t != nil && chartFinite(*t) {
		ylo, yhi = math.Min(ylo, *t), math.Max(yhi, *t)
	}
	cv.yt = chartTicks(ylo, yhi)
	if c.Kind == report.ChartLine {
		if xlo > xhi {
			xlo, xhi = 0, 1
		}
		cv.xt = wholeTicks(c.Series)
		if len(cv.xt) < 2 {
			cv.xt = chartTicks(xlo, xhi)
		}
	}
	return cv
}

// wholeTicks are the X values of a line chart whose values are all
// whole numbers, few enough to label each (core counts: 1, 2, 4, 8),
// sorted; none otherwise.
func wholeTicks(series []report.Series) []float64 {
	var xs []float64
	for _, s := range series {
		for _, p := range s.Points {
			if !chartFinite(p.X) || p.X != math.Trunc(p.X) {
				return nil
			}
			if !slices.Contains(xs, p.X) {
				xs = append(xs, p.X)
			}
		}
	}
	if len(xs) > 12 {
		return nil
	}
	slices.Sort(xs)
	return xs
}

func chartFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// chartTicks are 1-2-5 steps covering lo..hi, about five of them; a span
// of nothing is widened to one step.
func chartTicks(lo, hi float64) []float64 {
	if hi <= lo {
		hi = lo + math.Max(1, math.Abs(lo))
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	var ts []float64
	for i := first; i <= last; i++ {
		// Rounded to the step's precision so 0.1+0.2 prints as 0.3.
		v, _ := strconv.ParseFloat(strconv.FormatFloat(i*step, 'g', 12, 64), 64)
		ts = append(ts, v)
	}
	return ts
}

// y is the pixel row of value v.
func (cv *chartCanvas) y(v float64) float64 {
	lo, hi := cv.yt[0], cv.yt[len(cv.yt)-1]
	return chartPlotB - (v-lo)/(hi-lo)*(chartPlotB-chartPlotT)
}

// x is the pixel column of value v (line charts).
func (cv *chartCanvas) x(v float64) float64 {
	lo, hi := cv.xt[0], cv.xt[len(cv.xt)-1]
	return chartPlotL + (v-lo)/(hi-lo)*(chartPlotR-chartPlotL)
}

// band is category i's centre and width (bars and dots).
func (cv *chartCanvas) band(i int) (centre, width float64) {
	width = float64(chartPlotR-chartPlotL) / float64(max(1, len(cv.cats)))
	return chartPlotL + width*(float64(i)+0.5), width
}

func (cv *chartCanvas) catIndex(label string) int {
	for i, c := range cv.cats {
		if c == label {
			return i
		}
	}
	return 0
}

// axes draws the grid, the ticks and their labels, and the axis names.
func (cv *chartCanvas) axes(b *strings.Builder) {
	c := cv.c
	for _, t := range cv.yt {
		y := cv.y(t)
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#ddd"/>`, chartPlotL, chartPx(y), chartPlotR, chartPx(y))
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", chartPlotL-6, chartPx(y+4), chartEsc(chartTick(t, c.YUnit)))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, chartPlotL, chartPlotB, chartPlotR, chartPlotB)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", chartPlotL, chartPlotT, chartPlotL, chartPlotB)
	if c.Kind == report.ChartLine {
		for _, t := range cv.xt {
			x := cv.x(t)
			fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#333"/>`, chartPx(x), chartPlotB, chartPx(x), chartPlotB+4)
			fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", chartPx(x), chartPlotB+18, chartEsc(chartTick(t, c.XUnit)))
		}
	} else {
		for i, cat := range cv.cats {
			x, _ := cv.band(i)
			fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", chartPx(x), chartPlotB+18, chartEsc(cat))
		}
	}
	fmt.Fprintf(b, `<text class="axis-x" x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", (chartPlotL+chartPlotR)/2, chartPlotB+40, chartEsc(chartAxisName(c.X, c.XUnit)))
	fmt.Fprintf(b, `<text class="axis-y" transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (chartPlotT+chartPlotB)/2, chartEsc(chartAxisName(c.Y, c.YUnit)))
}

// legend names the series, top right, when there are several.
func (cv *chartCanvas) legend(b *strings.Builder) {
	if len(cv.c.Series) < 2 {
		return
	}
	x := chartPlotL
	for i, s := range cv.c.Series {
		fmt.Fprintf(b, `<g class="legend"><rect x="%d" y="30" width="10" height="10" fill="%s"/><text x="%d" y="39">%s</text></g>`+"\n",
			x, chartSeriesColor(i), x+14, chartEsc(s.Name))
		x += 30 + 7*width(s.Name)
	}
}

func chartSeriesColor(i int) string { return chartSeriesColors[i%len(chartSeriesColors)] }

// lines draws each series' points joined in order, failed points left
// out of the line.
func (cv *chartCanvas) lines(b *strings.Builder) {
	for i, s := range cv.c.Series {
		var path []string
		for _, p := range s.Points {
			if p.Mark != report.MarkFailed && chartFinite(p.X) && chartFinite(p.Y) {
				path = append(path, chartPx(cv.x(p.X))+","+chartPx(cv.y(p.Y)))
			}
		}
		if len(path) > 1 {
			fmt.Fprintf(b, `<polyline class="series" points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(path, " "), chartSeriesColor(i))
		}
		for _, p := range s.Points {
			if chartFinite(p.X) {
				cv.point(b, i, p, cv.x(p.X), cv.tip(s, p, cv.lineX(p)))
			}
		}
	}
}

// lineX is the X part of a line chart point's tooltip.
func (cv *chartCanvas) lineX(p report.Point) string {
	if p.Label != "" {
		return p.Label
	}
	return units.Format(p.X, cv.c.XUnit)
}

// bars draws a group per category, a bar per series.
func (cv *chartCanvas) bars(b *strings.Builder) {
	n := max(1, len(cv.c.Series))
	for i, s := range cv.c.Series {
		for _, p := range s.Points {
			centre, width := cv.band(cv.catIndex(p.Label))
			bw := width * 0.8 / float64(n)
			x := centre - width*0.4 + bw*float64(i)
			if p.Mark == report.MarkFailed || !chartFinite(p.Y) {
				cv.point(b, i, p, x+bw/2, cv.tip(s, p, p.Label))
				continue
			}
			top, bottom := cv.y(math.Max(p.Y, 0)), cv.y(math.Min(p.Y, 0))
			cv.open(b, p)
			fmt.Fprintf(b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				chartPx(x+1), chartPx(top), chartPx(bw-2), chartPx(bottom-top), chartSeriesColor(i), chartEsc(cv.tip(s, p, p.Label)))
			cv.close(b, p)
			b.WriteString("\n")
		}
	}
}

// dots draws each observation as a dot in its category: the series
// present in a category side by side, a series' dots spread across its
// slot in order (deterministic jitter, so equal values stay distinct).
func (cv *chartCanvas) dots(b *strings.Builder) {
	present := map[string][]int{} // category → series with points there
	count := map[[2]string]int{}  // category, series name → points
	for i, s := range cv.c.Series {
		for _, p := range s.Points {
			if k := [2]string{p.Label, strconv.Itoa(i)}; count[k] == 0 {
				present[p.Label] = append(present[p.Label], i)
				count[k]++
			} else {
				count[k]++
			}
		}
	}
	for i, s := range cv.c.Series {
		k := map[string]int{}
		for _, p := range s.Points {
			in := present[p.Label]
			centre, width := cv.band(cv.catIndex(p.Label))
			slot := width * 0.6 / float64(len(in))
			left := centre - width*0.3 + slot*float64(slices.Index(in, i))
			x := left + slot*(float64(k[p.Label])+0.5)/float64(count[[2]string{p.Label, strconv.Itoa(i)}])
			k[p.Label]++
			cv.point(b, i, p, x, cv.tip(s, p, p.Label))
		}
	}
}

// tip is a point's tooltip: "[series · ]X: Y" or "X: failed".
func (cv *chartCanvas) tip(s report.Series, p report.Point, x string) string {
	v := "failed"
	if p.Mark != report.MarkFailed {
		v = chartValue(p.Y, cv.c.YUnit)
	}
	t := x + ": " + v
	if x == "" {
		t = v
	}
	if len(cv.c.Series) > 1 && s.Name != "" && s.Name != x {
		t = s.Name + " · " + t
	}
	return t
}

// point draws one marker at column x: a dot, a ring and "peak" on the
// peak, a red ✕ on the X axis for a failed point, inside its link.
func (cv *chartCanvas) point(b *strings.Builder, series int, p report.Point, x float64, tip string) {
	failed := p.Mark == report.MarkFailed || !chartFinite(p.Y)
	if failed && p.Mark != report.MarkFailed {
		return // not a number: nothing to draw
	}
	cv.open(b, p)
	switch {
	case failed:
		fmt.Fprintf(b, `<g class="point failed"><title>%s</title><text x="%s" y="%s" text-anchor="middle" fill="%s" font-size="16" font-weight="bold">✕</text></g>`,
			chartEsc(tip), chartPx(x), chartPx(chartPlotB+5), chartFailed)
	case p.Mark == report.MarkPeak:
		y := cv.y(p.Y)
		fmt.Fprintf(b, `<g class="point peak"><title>%s (peak)</title><circle cx="%s" cy="%s" r="4" fill="%s"/><circle cx="%s" cy="%s" r="8" fill="none" stroke="#000" stroke-width="1.5"/><text x="%s" y="%s" text-anchor="middle" font-weight="bold">peak</text></g>`,
			chartEsc(tip), chartPx(x), chartPx(y), chartSeriesColor(series), chartPx(x), chartPx(y), chartPx(x), chartPx(y-12))
	default:
		fmt.Fprintf(b, `<g class="point"><title>%s</title><circle cx="%s" cy="%s" r="4" fill="%s"/></g>`, chartEsc(tip), chartPx(x), chartPx(cv.y(p.Y)), chartSeriesColor(series))
	}
	cv.close(b, p)
	b.WriteString("\n")
}

// open and close wrap a point in its link, when it has a relative one.
func (cv *chartCanvas) open(b *strings.Builder, p report.Point) {
	if chartLink(p.Link) {
		fmt.Fprintf(b, `<a href="%s">`, chartEsc(p.Link))
	}
}

func (cv *chartCanvas) close(b *strings.Builder, p report.Point) {
	if chartLink(p.Link) {
		b.WriteString("</a>")
	}
}

// chartLink accepts a path beside the page: no scheme ("javascript:",
// "https:"), not absolute.
func chartLink(l string) bool {
	if l == "" || strings.HasPrefix(l, "/") || strings.HasPrefix(l, `\`) {
		return false
	}
	colon, slash := strings.Index(l, ":"), strings.Index(l, "/")
	return colon < 0 || (slash >= 0 && slash < colon)
}

// threshold draws the threshold as a dashed line with its label.
func (cv *chartCanvas) threshold(b *strings.Builder) {
	t := cv.c.Threshold
	if t == nil || !chartFinite(*t) {
		return
	}
	y := cv.y(*t)
	label := cv.c.ThresholdLabel
	if label == "" {
		label = chartValue(*t, cv.c.YUnit)
	}
	fmt.Fprintf(b, `<g class="threshold"><title>%s</title><line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"/><text x="%d" y="%s" text-anchor="end" fill="%s">%s</text></g>`+"\n",
		chartEsc(label), chartPlotL, chartPx(y), chartPlotR, chartPx(y), chartFailed, chartPlotR, chartPx(y-4), chartFailed, chartEsc(label))
}

// chartTick is a tick's value in the axis unit: an amount scaled
// ("250 ms"), a share as a percentage, other numbers bare (the unit is in
// the axis name).
func chartTick(v float64, unit string) string {
	switch scaled := units.Scaled(unit); {
	case scaled && v == 0:
		return "0" // not "0 s" under "100 µs"
	case scaled:
		return units.Format(v, unit)
	case unit == report.ShareUnit:
		return strconv.FormatFloat(v*100, 'g', 10, 64) + "%"
	}
	return chartGroup(strconv.FormatFloat(v, 'g', 12, 64))
}

// chartValue is a value in a tooltip, with its unit: "12,345 requests/s",
// "4.86%", "310 ms".
func chartValue(v float64, unit string) string {
	scaled := units.Scaled(unit)
	switch {
	case scaled:
		return units.Format(v, unit)
	case unit == report.ShareUnit:
		return percent(v, 2)
	}
	s := units.Sig3(v)
	if math.Abs(v) >= 1000 {
		s = strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	s = chartGroup(s)
	if unit != "" && unit != "count" {
		s += " " + unit
	}
	return s
}

// chartAxisName is an axis title with its unit when the ticks do not carry it.
func chartAxisName(name, unit string) string {
	if units.Scaled(unit) || unit == report.ShareUnit || unit == "" || strings.Contains(name, unit) {
		return name
	}
	return name + " (" + unit + ")"
}

// chartGroup puts thousands separators in a number's integer part:
// "12345.6" → "12,345.6".
func chartGroup(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	frac := ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s, frac = s[:i], s[i:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s + frac
}

// chartPx is a pixel coordinate with one decimal, the same on every machine.
func chartPx(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func chartEsc(s string) string { return html.EscapeString(s) }
