package render

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/report"
)

// svgDoc is the part of the svg format the tests read: the frames.
type svgDoc struct {
	XMLName xml.Name
	Groups  []svgGroup `xml:"g"`
}

type svgGroup struct {
	Class string `xml:"class,attr"`
	Title string `xml:"title"`
	Rects []struct {
		Class  string `xml:"class,attr"`
		X      string `xml:"x,attr"`
		Width  string `xml:"width,attr"`
		Fill   string `xml:"fill,attr"`
		Stroke string `xml:"stroke,attr"`
	} `xml:"rect"`
	Text string `xml:"text"`
}

// frames are the document's frame groups.
func (d *svgDoc) frames() []svgGroup {
	var out []svgGroup
	for _, g := range d.Groups {
		if strings.HasPrefix(g.Class, "frame") {
			out = append(out, g)
		}
	}
	return out
}

// frame is the first frame whose tooltip is for name.
func (d *svgDoc) frame(t *testing.T, name string) svgGroup {
	t.Helper()
	for _, g := range d.frames() {
		if strings.HasPrefix(g.Title, name+"\n") {
			return g
		}
	}
	t.Fatalf("no frame for %s", name)
	return svgGroup{}
}

// parseSVG checks that b is well-formed XML, an SVG document with no
// script and no external reference, and reads its frames.
func parseSVG(t *testing.T, b []byte) *svgDoc {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	first := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if first && (el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg") {
			t.Fatalf("root element %v, want svg in the SVG namespace", el.Name)
		}
		first = false
		if el.Name.Local == "script" || el.Name.Local == "image" || el.Name.Local == "foreignObject" {
			t.Errorf("element <%s> in a static SVG", el.Name.Local)
		}
		for _, a := range el.Attr {
			if a.Name.Local == "href" || strings.HasPrefix(a.Name.Local, "on") ||
				strings.Contains(a.Value, "url(") && !strings.HasPrefix(a.Value, "url(#") {
				t.Errorf("<%s %s=%q>: an external reference or a script", el.Name.Local, a.Name.Local, a.Value)
			}
		}
	}
	var d svgDoc
	if err := xml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func renderSVG(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, SVG, Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGoldenSVG: profdiff diff --format svg net10.folded net11.folded.
func TestGoldenSVG(t *testing.T) {
	r := dotnetReport(t, diff.Options{CallTree: true, TreeMin: TreeMin})
	b := renderSVG(t, r)
	golden(t, "diff.dotnet.svg.golden", b)
	d := parseSVG(t, b)
	f := reportFlame(r)
	grew := d.frame(t, "System.Threading.LowLevelLock.WaitAndAcquire")
	if grew.Rects[0].Fill != Palettes[0].Grew {
		t.Errorf("WaitAndAcquire (18x) filled %s, want the grew colour %s", grew.Rects[0].Fill, Palettes[0].Grew)
	}
	if len(grew.Rects) < 2 || grew.Rects[1].Class != "bucket" || grew.Rects[1].Fill != bucketColors["lock-contention"] {
		t.Errorf("WaitAndAcquire's bucket band %+v, want a lock-contention band", grew.Rects)
	}
	gone := d.frame(t, "SystemNative_WaitForSocketEvents")
	if !strings.Contains(gone.Class, "removed") || gone.Rects[0].Fill != "url(#removed)" || gone.Rects[0].Stroke != Palettes[0].Shrank || grew.Rects[0].Stroke == Palettes[0].Shrank {
		t.Errorf("SystemNative_WaitForSocketEvents (removed) is %q filled %s stroked %s, want hatched and outlined in %s",
			gone.Class, gone.Rects[0].Fill, gone.Rects[0].Stroke, Palettes[0].Shrank)
	}
	// Every tooltip is its node's flameTip: the titles are the tips of
	// the nodes wide enough to draw.
	var want []string
	scale := (svgWidth - 2*svgPad) / flameWidth(f, f.Tree)
	var walk func(n *report.Node)
	walk = func(n *report.Node) {
		if flameWidth(f, n)*scale < svgMinPx {
			return
		}
		want = append(want, flameTip(f, n))
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(f.Tree)
	var got []string
	for _, g := range d.frames() {
		got = append(got, g.Title)
	}
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("%d titles, want the %d tips of the drawn nodes", len(got), len(want))
	}
	for _, s := range []string{"≤¼x", "≥4x", ">new<", ">removed<", ">lock-contention<", "Width: the larger side", "No frame was too narrow to keep"} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("the legend or caption lacks %q", s)
		}
	}
}

func TestSVGOneSide(t *testing.T) {
	r := present.Top(net11Top(t, TreeMin))
	d := parseSVG(t, renderSVG(t, r))
	g := d.frame(t, "System.Threading.LowLevelLock.WaitAndAcquire")
	if g.Rects[0].Fill != bucketColors["lock-contention"] {
		t.Errorf("one side: WaitAndAcquire filled %s, want its bucket's colour", g.Rects[0].Fill)
	}
	if want := "System.Threading.LowLevelLock.WaitAndAcquire\n162 (1.62%)"; g.Title != want {
		t.Errorf("one-side tooltip %q, want %q", g.Title, want)
	}
	for _, g := range d.frames() {
		if strings.Contains(g.Class, "removed") || strings.Contains(g.Title, "→") {
			t.Errorf("one side: frame %q is %q", g.Title, g.Class)
		}
	}
}

// TestSVGLayout: narrow frames are not drawn but keep their room, names
// are escaped and labels cut to fit.
func TestSVGLayout(t *testing.T) {
	tree := node("root", [2]float64{},
		node("a<&>\"b", [2]float64{500, 500}),
		node("tiny", [2]float64{0.1, 0.1}),
		node("z", [2]float64{499.9, 499.9}))
	f := &report.Flame{Tree: tree, Sides: 2, Unit: "count", Labels: [2]string{"base", "new"}}
	d := parseSVG(t, renderSVG(t, &report.Report{Blocks: []report.Block{f}}))
	if len(d.frames()) != 3 {
		t.Fatalf("%d frames drawn, want root, a and z (tiny is 0.12 px)", len(d.frames()))
	}
	if g := d.frame(t, "a<&>\"b"); g.Text != "a<&>\"b" {
		t.Errorf("label %q, want the escaped name back", g.Text)
	}
	z := d.frame(t, "z")
	x, _ := strconv.ParseFloat(z.Rects[0].X, 64)
	if want := svgPad + (svgWidth-2*svgPad)*0.5001; x < want-0.01 || x > want+0.01 {
		t.Errorf("z starts at %g, want %g (after a and the undrawn tiny)", x, want)
	}
	for _, c := range []struct {
		name string
		w    float64
		want string
	}{
		{"short", 100, "short"},
		{"a.very.long.name", 60, "a.very.."},
		{"abc", 20, ""},
		// Five characters' room: a wide rune takes two.
		{"計算する関数", 6 + 5*svgCharW, "計.."},
	} {
		if got := svgLabel(c.name, c.w); got != c.want {
			t.Errorf("svgLabel(%q, %g) = %q, want %q", c.name, c.w, got, c.want)
		}
	}
	if err := Write(io.Discard, dotnetReport(t, diff.Options{}), SVG, Options{}); err == nil || err.Error() != "this report has no svg form (no call tree)" {
		t.Errorf("svg of a report without a tree: %v", err)
	}
}

func TestSVGOtherCaption(t *testing.T) {
	tree := node("root", [2]float64{},
		node("a", [2]float64{90, 80}),
		&report.Node{Name: "other", Total: [2]float64{10, 20}, Self: [2]float64{10, 20}, Other: 4})
	f := &report.Flame{Tree: tree, Sides: 2, Unit: "count", Labels: [2]string{"base", "new"}}
	if got, want := flameOther(newFlameOrder(f)), `"other" frames merge 4 subtrees too narrow to draw, holding 10.00% of base and 20.00% of new.`; got != want {
		t.Errorf("caption %q, want %q", got, want)
	}
	d := parseSVG(t, renderSVG(t, &report.Report{Blocks: []report.Block{f}}))
	if g := d.frame(t, "other"); !strings.Contains(g.Class, "other") {
		t.Errorf("the other frame's class is %q", g.Class)
	}
}

// chromium is the browser the tests render in, or "" when none is
// installed.
func chromium() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	p, _ := exec.LookPath("chromium")
	return p
}

// TestSVGInBrowser renders the seed's svg in headless Chromium and checks
// the screenshot shows the grew, shrank-hatch and bucket colours.
func TestSVGInBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("chromium is not installed (/usr/bin/chromium or on PATH)")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()
	svg := filepath.Join(dir, "seed.svg")
	if err := os.WriteFile(svg, renderSVG(t, dotnetReport(t, diff.Options{CallTree: true, TreeMin: TreeMin})), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "seed.png")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1200,300", "--screenshot="+shot, "file://"+svg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	fh, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, bl>>8)]++
		}
	}
	for _, c := range []string{Palettes[0].Grew, Palettes[0].Shrank, bucketColors["lock-contention"], bucketColors["io"]} {
		if seen[c] < 20 {
			t.Errorf("the screenshot (%s) has %d pixels of %s", shot, seen[c], c)
		}
	}
}
