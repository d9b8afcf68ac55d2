package render

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/report"
)

// svgOf renders c, checks that it is well-formed XML with one <svg> root
// and nothing that runs or fetches, and returns it.
func svgOf(t *testing.T, c *report.Chart) string {
	t.Helper()
	var b bytes.Buffer
	if err := chartSVG(&b, c); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.HasPrefix(s, "<svg ") || strings.Contains(s, "<?xml") {
		t.Errorf("not an inline svg element: %.60q", s)
	}
	d := xml.NewDecoder(strings.NewReader(s))
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not valid XML: %v\n%s", err, s)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
			if e.Name.Local == "script" || e.Name.Local == "image" || e.Name.Local == "foreignObject" {
				t.Errorf("chart has a <%s> element", e.Name.Local)
			}
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 {
		t.Errorf("%d root elements, want 1", roots)
	}
	if strings.Contains(s, "http:") || strings.Contains(s, "https:") {
		t.Error("chart holds an address")
	}
	return s
}

// titles are the tooltips of the elements of class cls ("point peak").
func titles(s, cls string) []string {
	re := regexp.MustCompile(`class="` + regexp.QuoteMeta(cls) + `"[^>]*><title>([^<]*)</title>`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

func sweepChart() *report.Chart {
	return &report.Chart{
		Title: "Requests/s by cores", Kind: report.ChartLine, X: "cores", Y: "requests/s", XUnit: "cores", YUnit: "requests/s",
		Series: []report.Series{{Name: "requests/s", Points: []report.Point{
			{X: 1, Y: 9000},
			{X: 2, Y: 12345, Mark: report.MarkPeak, Link: "cores-2/diff-vs-cores-1.html"},
			{X: 4, Y: 11000, Link: "cores-4/diff-vs-cores-1.html"},
			{X: 8, Mark: report.MarkFailed, Label: "8 cores (child exited)"},
		}}},
		Note: "The peak is ringed; a failed run is a red ✕ on the X axis.",
	}
}

// A line chart with a peak, a failed point and links: the peak is ringed
// and labelled, the failed run is a ✕ on the axis and out of the line,
// links wrap their points, and the tooltips read in the units.
func TestChartLine(t *testing.T) {
	s := svgOf(t, sweepChart())
	golden(t, "chart.line-peak-failed.svg.golden", []byte(s))
	if got := titles(s, "point peak"); !slices.Equal(got, []string{"2 cores: 12,345 requests/s (peak)"}) {
		t.Errorf("peak tooltips %q", got)
	}
	if !strings.Contains(s, `r="8" fill="none"`) || !strings.Contains(s, `>peak</text>`) {
		t.Error("the peak has no ring or label")
	}
	if got := titles(s, "point failed"); !slices.Equal(got, []string{"8 cores (child exited): failed"}) {
		t.Errorf("failed tooltips %q", got)
	}
	if !strings.Contains(s, `fill="#d62728" font-size="16" font-weight="bold">✕</text>`) {
		t.Error("the failed point is not a red ✕")
	}
	// The failed point sits on the X axis (chartPlotB + 5).
	if !regexp.MustCompile(`✕`).MatchString(s) || !strings.Contains(s, `y="275" text-anchor="middle" fill="#d62728"`) {
		t.Error("the failed point is not on the X axis")
	}
	if got := titles(s, "point"); !slices.Equal(got, []string{"1 cores: 9,000 requests/s", "4 cores: 11,000 requests/s"}) {
		t.Errorf("plain tooltips %q", got)
	}
	for _, l := range []string{`<a href="cores-2/diff-vs-cores-1.html"><g class="point peak">`, `<a href="cores-4/diff-vs-cores-1.html"><g class="point">`} {
		if !strings.Contains(s, l) {
			t.Errorf("no %s", l)
		}
	}
	line := regexp.MustCompile(`<polyline class="series" points="([^"]*)"`).FindStringSubmatch(s)
	if line == nil || len(strings.Fields(line[1])) != 3 {
		t.Errorf("the line should join the 3 runs that did not fail: %q", line)
	}
	// 1-2-5 ticks in the units: 0 to 15,000 requests/s by 5,000.
	for _, tick := range []string{">0</text>", ">5,000</text>", ">15,000</text>"} {
		if !strings.Contains(s, tick) {
			t.Errorf("no tick %s", tick)
		}
	}
	if strings.Contains(s, ">20,000</text>") {
		t.Error("a tick past the data's step")
	}
}

// Grouped bars with a legend: a bar per series in each category, shares
// as percentages.
func TestChartBars(t *testing.T) {
	c := &report.Chart{Title: "Buckets by share", Kind: report.ChartBars, X: "bucket", Y: "share", YUnit: report.ShareUnit, Series: []report.Series{
		{Name: "base", Points: []report.Point{{Label: "cpu", Y: 0.8}, {Label: "lock-contention", Y: 0}}},
		{Name: "new", Points: []report.Point{{Label: "cpu", Y: 0.7}, {Label: "lock-contention", Y: 0.0298}}},
	}}
	s := svgOf(t, c)
	golden(t, "chart.bars.svg.golden", []byte(s))
	want := []string{"base · cpu: 80.00%", "base · lock-contention: 0.00%", "new · cpu: 70.00%", "new · lock-contention: 2.98%"}
	if got := barTitles(s); !slices.Equal(got, want) {
		t.Errorf("bars %q, want %q", got, want)
	}
	if strings.Count(s, `class="legend"`) != 2 {
		t.Error("no legend of the two series")
	}
	if !strings.Contains(s, ">80%</text>") {
		t.Error("share ticks are not percentages")
	}
}

func barTitles(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<rect class="bar"[^>]*><title>([^<]*)</title>`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// Dots with a threshold: a dot per observation, the dashed threshold line
// with its label, and the note.
func TestChartDots(t *testing.T) {
	limit := 0.045
	c := &report.Chart{Title: "lock-contention: FAIL", Kind: report.ChartDots, X: "side", Y: "share", YUnit: report.ShareUnit,
		Series: []report.Series{
			{Name: "base", Points: []report.Point{{Label: "base", Y: 0.02}, {Label: "base", Y: 0.025}, {Label: "base", Y: 0.025}}},
			{Name: "new", Points: []report.Point{{Label: "new", Y: 0.05}, {Label: "new", Y: 0.06}, {Label: "new", Y: 0.055}}},
		},
		Threshold: &limit, ThresholdLabel: "base 2.50% +2pp = 4.50%", Note: "A dot per profile."}
	s := svgOf(t, c)
	golden(t, "chart.dots-threshold.svg.golden", []byte(s))
	if got := titles(s, "point"); len(got) != 6 || got[0] != "base: 2.00%" || got[5] != "new: 5.50%" {
		t.Errorf("dots %q", got)
	}
	// Equal observations are spread, not drawn on top of each other.
	cx := regexp.MustCompile(`<circle cx="([^"]*)"`).FindAllStringSubmatch(s, -1)
	seen := map[string]bool{}
	for _, m := range cx {
		seen[m[1]] = true
	}
	if len(seen) != 6 {
		t.Errorf("%d distinct dot columns, want 6", len(seen))
	}
	if !strings.Contains(s, `stroke-dasharray="6 4"`) || !strings.Contains(s, ">base 2.50% +2pp = 4.50%</text>") {
		t.Error("no dashed threshold line with its label")
	}
	if !strings.Contains(s, `class="chart-note"`) {
		t.Error("no note")
	}
}

// Bad input is an error or drawn harmlessly, never a panic: no chart, no
// series, values that are not numbers, links that are not relative.
func TestChartEdges(t *testing.T) {
	if err := chartSVG(io.Discard, nil); err == nil {
		t.Error("a nil chart is not an error")
	}
	svgOf(t, &report.Chart{Title: "empty"})
	svgOf(t, &report.Chart{Title: "empty bars", Kind: report.ChartBars})
	nan := report.Chart{Title: "<odd> & \"quoted\"", Kind: report.ChartLine, Series: []report.Series{{Name: "a", Points: []report.Point{
		{X: 1, Y: 2}, {X: 2, Y: zero / zero}, {X: 3, Y: 1, Link: "javascript:alert(1)"}, {X: 4, Y: 1, Link: "https://example.com/"}, {X: 5, Y: 1, Link: "/etc/passwd"},
	}}}}
	s := svgOf(t, &nan)
	if strings.Contains(s, "<a ") {
		t.Errorf("a link that is not relative was kept:\n%s", s)
	}
	if strings.Count(s, `class="point"`) != 4 {
		t.Error("the NaN point should be left out, the others drawn")
	}
}

var zero float64

func TestChartTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 12345, []float64{0, 5000, 10000, 15000}},
		{0, 0.0298, []float64{0, 0.01, 0.02, 0.03}},
		{1, 8, []float64{0, 2, 4, 6, 8}},
		{0, 0, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{-3, 7, []float64{-4, -2, 0, 2, 4, 6, 8}},
	} {
		if got := chartTicks(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("chartTicks(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	for v, want := range map[string]string{"12345.6": "12,345.6", "-1000": "-1,000", "999": "999", "1234567": "1,234,567"} {
		if got := chartGroup(v); got != want {
			t.Errorf("chartGroup(%s) = %s, want %s", v, got, want)
		}
	}
	if got := chartValue(2.5e8, "nanoseconds"); got != "250 ms" {
		t.Errorf("chartValue in nanoseconds = %q", got)
	}
}

// A long note wraps onto lines of its own, each inside the chart (which
// grows to hold them), and none longer than the chart is wide.
func TestChartNoteWraps(t *testing.T) {
	c := sweepChart()
	c.Note = strings.Repeat("a note long enough to need several lines under the chart, ", 4)
	s := svgOf(t, c)
	lines := regexp.MustCompile(`<text class="chart-note" x="\d+" y="(\d+)"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(s, -1)
	h, _ := strconv.Atoi(regexp.MustCompile(`<svg class="chart" width="\d+" height="(\d+)"`).FindStringSubmatch(s)[1])
	if len(lines) < 3 {
		t.Fatalf("%d note lines, want the note wrapped onto several:\n%s", len(lines), s)
	}
	var text []string
	for _, l := range lines {
		if y, _ := strconv.Atoi(l[1]); y > h {
			t.Errorf("note line at y %d below the chart's height %d", y, h)
		}
		if len(l[2]) > 86 {
			t.Errorf("note line of %d characters: %q", len(l[2]), l[2])
		}
		text = append(text, l[2])
	}
	if got, want := strings.Join(strings.Fields(strings.Join(text, " ")), " "), strings.Join(strings.Fields(c.Note), " "); got != want {
		t.Errorf("the note's lines read %q, want %q", got, want)
	}
}
