package render

// The html format in a real browser (headless Chromium through the
// browser harness; skipped when Chromium is absent): the page loads from
// file:// with no errors and no requests, and its script agrees with the
// Go rules of flame.go on colours, tooltips and totals.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render/browser"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/units"
	"github.com/profdiff/profdiff/profile"
)

// TestMain stops the Chromium the browser tests share after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	browser.Close()
	os.Exit(code)
}

const (
	waitAndAcquire = "System.Threading.LowLevelLock.WaitAndAcquire"
	socketEvents   = "SystemNative_WaitForSocketEvents"
)

// frame is an entry of the page's profdiff.frames().
type frame struct {
	Name, Color, Bucket string
	Removed             bool
	Other               int
	X, Y, Width         float64
	Depth               int
}

// openPage writes r's page and opens it, checking that it loaded clean:
// no console errors or exceptions, no request but the page itself.
func openPage(t *testing.T, r *report.Report) *browser.Page {
	t.Helper()
	p := browser.Open(t, writeTemp(t, "page.html", htmlPage(t, r)))
	t.Cleanup(func() { checkClean(t, p) })
	checkClean(t, p)
	return p
}

func checkClean(t *testing.T, p *browser.Page) {
	t.Helper()
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("the page logged errors: %q", errs)
	}
	for _, u := range p.Requests() {
		if u != p.URL {
			t.Errorf("the page requested %s", u)
		}
	}
}

func frames(t *testing.T, p *browser.Page) []frame {
	t.Helper()
	var fs []frame
	p.Eval(`profdiff.frames()`, &fs)
	if len(fs) == 0 {
		t.Fatal("the page drew no frames")
	}
	return fs
}

func findFrame(fs []frame, name string) *frame {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

// firstNode is the first node named name in preorder.
func firstNode(n *report.Node, name string) *report.Node {
	if n.Name == name {
		return n
	}
	for _, c := range n.Children {
		if m := firstNode(c, name); m != nil {
			return m
		}
	}
	return nil
}

// sideText is a side's amount and share as flameTip writes it.
func sideText(f *report.Flame, v float64, s int) string {
	share := Pct(frac(v, f.Tree.Total[s]))
	if f.RateFactor[s] > 0 && f.RateUnit != "" {
		return units.Format(v*f.RateFactor[s], f.RateUnit) + " (" + share + ")"
	}
	return units.Format(v, f.Unit) + " (" + share + ")"
}

// searchStatus is the status the page must show for a search, from the
// Go tree: matching frames, and their totals counting nested matches once.
func searchStatus(f *report.Flame, re *regexp.Regexp) string {
	count, sum := 0, [2]float64{}
	var walk func(n *report.Node, inside bool)
	walk = func(n *report.Node, inside bool) {
		m := re.MatchString(n.Name)
		if m {
			count++
			if !inside {
				sum[0], sum[1] = sum[0]+n.Total[0], sum[1]+n.Total[1]
			}
		}
		for _, c := range n.Children {
			walk(c, inside || m)
		}
	}
	walk(f.Tree, false)
	s := fmt.Sprintf("%d frames match · ", count)
	if f.Sides < 2 {
		return s + sideText(f, sum[0], 0)
	}
	return s + "base " + sideText(f, sum[0], 0) + " → new " + sideText(f, sum[1], 1)
}

func flameOf(t *testing.T, r *report.Report) *report.Flame {
	t.Helper()
	for _, b := range r.Blocks {
		if f, ok := b.(*report.Flame); ok {
			return f
		}
	}
	t.Fatal("the report has no flame graph")
	return nil
}

func TestBrowserDiffFlame(t *testing.T) {
	r := dotnetReport(t, treeOpts(diff.Options{}))
	f := flameOf(t, r)
	p := openPage(t, r)

	// Tooltips: the script's text is flameTip's.
	for _, name := range []string{f.Tree.Name, waitAndAcquire, socketEvents, "System.Threading.Monitor.Wait(class System.Object,int32)"} {
		var got string
		p.Eval(fmt.Sprintf(`profdiff.tooltip(%q)`, name), &got)
		if want := flameTip(f, firstNode(f.Tree, name)); got != want {
			t.Errorf("tooltip of %s:\n got %q\nwant %q", name, got, want)
		}
	}
	// Colours: the grown lock frame is the grew end; the removed frame is
	// there, marked removed.
	fs := frames(t, p)
	wa := findFrame(fs, waitAndAcquire)
	if wa == nil {
		t.Fatalf("%s is not drawn", waitAndAcquire)
	}
	if want := flameColor(Palettes[0], flameChange(f, firstNode(f.Tree, waitAndAcquire))); wa.Color != want || want != Palettes[0].Grew {
		t.Errorf("%s is %s, want %s (Go's), the grew end %s", waitAndAcquire, wa.Color, want, Palettes[0].Grew)
	}
	if want := flameColor(Palettes[0], flameChange(f, f.Tree)); fs[0].Color != want {
		t.Errorf("root is %s, want %s", fs[0].Color, want)
	}
	if se := findFrame(fs, socketEvents); se == nil || !se.Removed || se.Color != Palettes[0].Shrank {
		t.Errorf("%s: %+v, want drawn as removed in %s", socketEvents, se, Palettes[0].Shrank)
	}

	// Search totals the matches as the Go tree does.
	var status string
	p.Eval(`profdiff.search("WaitAndAcquire")`, &status)
	if want := searchStatus(f, regexp.MustCompile("WaitAndAcquire")); status != want {
		t.Errorf("search status %q, want %q", status, want)
	}
	p.Eval(`document.querySelector(".flame .status").textContent`, &status)
	if !strings.HasPrefix(status, "1 frame") && !strings.Contains(status, "frames match") {
		t.Errorf("the status line reads %q", status)
	}
	p.Eval(`profdiff.search("")`, nil)

	// Zoom makes the frame the root of the view, full width; reset undoes.
	var root string
	p.Eval(fmt.Sprintf(`profdiff.zoom(%q)`, waitAndAcquire), &root)
	fs = frames(t, p)
	if root != waitAndAcquire || fs[0].Name != waitAndAcquire || fs[0].Depth != 0 || fs[0].X != 0 {
		t.Errorf("after zoom the root is %q, first frame %+v", root, fs[0])
	}
	var width float64
	p.Eval(`document.querySelector(".flame canvas").width`, &width)
	if math.Abs(fs[0].Width-width) > 1 {
		t.Errorf("zoomed root is %.1f px wide in a %.0f px canvas", fs[0].Width, width)
	}
	p.Eval(`document.querySelector(".flame button").click(); profdiff.root()`, &root)
	if root != f.Tree.Name {
		t.Errorf("after reset the root is %q", root)
	}

	// The hide-removed toggle (the real checkbox) removes the removed frame.
	p.Eval(`document.querySelector(".flame input[type=checkbox]").click()`, nil)
	if se := findFrame(frames(t, p), socketEvents); se != nil {
		t.Errorf("%s still drawn with removed frames hidden", socketEvents)
	}
	p.Eval(`document.querySelector(".flame input[type=checkbox]").click()`, nil)

	// Orientation: in flame mode the root is at the bottom.
	setSelect(t, p, "orientation", "flame")
	fs = frames(t, p)
	if fs[0].Depth != 0 || fs[0].Y < fs[len(fs)-1].Y {
		t.Errorf("flame orientation: root at y=%v, a leaf at y=%v", fs[0].Y, fs[len(fs)-1].Y)
	}
	setSelect(t, p, "orientation", "icicle")

	// Palette: the other palette's grew end.
	setSelect(t, p, "palette", "1")
	if wa := findFrame(frames(t, p), waitAndAcquire); wa == nil || wa.Color != Palettes[1].Grew {
		t.Errorf("orange-purple: %s is %+v, want %s", waitAndAcquire, wa, Palettes[1].Grew)
	}
	setSelect(t, p, "palette", "0")

	// Width by the new side: a removed frame has no width.
	setSelect(t, p, "width", "new")
	if findFrame(frames(t, p), socketEvents) != nil {
		t.Errorf("%s drawn with widths by the new side", socketEvents)
	}
	setSelect(t, p, "width", "larger")

	// Bucket filter: only frames holding lock contention remain.
	setSelect(t, p, "bucket", fmt.Sprint(int(rules.LockContention)))
	fs = frames(t, p)
	if findFrame(fs, waitAndAcquire) == nil || findFrame(fs, socketEvents) != nil {
		t.Errorf("lock-contention filter: %s drawn %v, %s drawn %v", waitAndAcquire, findFrame(fs, waitAndAcquire) != nil, socketEvents, findFrame(fs, socketEvents) != nil)
	}
	for _, fr := range fs {
		if !holdsBucket(f.Tree, fr.Name, rules.LockContention) {
			t.Errorf("lock-contention filter draws %s, which holds none", fr.Name)
		}
	}
	setSelect(t, p, "bucket", "-1")

	// The real mouse: hovering shows the same tooltip, clicking zooms.
	fs = frames(t, p)
	wa = findFrame(fs, waitAndAcquire)
	var at struct{ X, Y float64 }
	p.Eval(fmt.Sprintf(`(() => { const c = document.querySelector(".flame canvas"); c.scrollIntoView();
		const r = c.getBoundingClientRect(); return {x: r.left + %f, y: r.top + %f}; })()`, wa.X+wa.Width/2, wa.Y+8), &at)
	if err := p.Do(chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, at.X, at.Y)); err != nil {
		t.Fatal(err)
	}
	var shown string
	p.Eval(`document.querySelector(".flame .tip").textContent`, &shown)
	if want := flameTip(f, firstNode(f.Tree, waitAndAcquire)); shown != want {
		t.Errorf("hover over %s shows %q, want %q", waitAndAcquire, shown, want)
	}
	if err := p.Do(chromedp.MouseClickXY(at.X, at.Y)); err != nil {
		t.Fatal(err)
	}
	if p.Eval(`profdiff.root()`, &root); root != waitAndAcquire {
		t.Errorf("clicking %s zooms to %q", waitAndAcquire, root)
	}
	p.Eval(`profdiff.reset()`, nil)

	// An invalid pattern says so and drops the last search's highlight;
	// a search inside a zoom says where it counted; a bucket with no
	// samples says so rather than drawing nothing.
	p.Eval(`profdiff.search("WaitAndAcquire")`, nil)
	if p.Eval(`profdiff.search("(")`, &status); !strings.HasPrefix(status, "invalid regexp") {
		t.Errorf("search for ( says %q", status)
	}
	var dimmed bool
	p.Eval(`(() => { const c = document.querySelector(".flame canvas"), g = c.getContext("2d");
		const px = g.getImageData(0, 0, c.width, c.height).data;
		for (let k = 0; k < px.length; k += 4) if (px[k] === 255 && px[k+1] === 0 && px[k+2] === 255) return false;
		return true; })()`, &dimmed)
	if !dimmed {
		t.Error("after an invalid pattern the last search's magenta outlines are still drawn")
	}
	p.Eval(`profdiff.search("")`, nil)
	p.Eval(fmt.Sprintf(`profdiff.zoom(%q)`, waitAndAcquire), nil)
	if p.Eval(`profdiff.search("Wait")`, &status); !strings.HasSuffix(status, "(within "+waitAndAcquire+")") {
		t.Errorf("search inside a zoom says %q", status)
	}
	p.Eval(`profdiff.search("")`, nil)
	p.Eval(`profdiff.reset()`, nil)
	setSelect(t, p, "bucket", strconv.Itoa(int(rules.Syscall)))
	if p.Eval(`document.querySelector(".flame .status").textContent`, &status); status != "no samples to draw in syscall" {
		t.Errorf("the seed's syscall bucket (empty) shows %q", status)
	}
	setSelect(t, p, "bucket", "-1")

	screenshot(t, p)
}

// setSelect picks value in the flame's select labelled label, as a user.
func setSelect(t *testing.T, p *browser.Page, label, value string) {
	t.Helper()
	var ok bool
	p.Eval(fmt.Sprintf(`(() => { for (const l of document.querySelectorAll(".flame label")) if (l.firstChild.textContent === %q) {
		const s = l.querySelector("select"); s.value = %q; s.dispatchEvent(new Event("change")); return s.value === %[2]q; } return false; })()`, label, value), &ok)
	if !ok {
		t.Fatalf("no %s select with the value %s", label, value)
	}
}

// holdsBucket reports whether some node named name has a value in b.
func holdsBucket(n *report.Node, name string, b rules.Bucket) bool {
	if n.Name == name {
		if len(n.Split) == 0 && n.Bucket == int(b) {
			return true
		}
		for _, s := range n.Split {
			if s.Bucket == int(b) && s.Value[0]+s.Value[1] > 0 {
				return true
			}
		}
	}
	for _, c := range n.Children {
		if holdsBucket(c, name, b) {
			return true
		}
	}
	return false
}

// screenshot checks the page is not blank: many distinct colours.
func screenshot(t *testing.T, p *browser.Page) {
	t.Helper()
	data := p.Screenshot()
	path := filepath.Join(t.TempDir(), "page.png")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if n := distinctColors(img); n < 50 {
		t.Errorf("screenshot %s has %d distinct colours: blank?", path, n)
	}
}

func distinctColors(img image.Image) int {
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	return len(seen)
}

// The method table sorts by a column's raw values and filters its rows.
func TestBrowserTables(t *testing.T) {
	r := dotnetReport(t, treeOpts(diff.Options{}))
	p := openPage(t, r)
	const table = `[...document.querySelectorAll("table")].find(t => t.tHead.rows[0].cells[0].textContent === "Method")`
	var vals []float64
	p.Eval(`(() => { const t = `+table+`; t.tHead.rows[0].cells[1].click(); t.tHead.rows[0].cells[1].click();
		return [...t.tBodies[0].rows].map(r => parseFloat(r.cells[1].dataset.v)); })()`, &vals)
	if len(vals) < 10 {
		t.Fatalf("method table rows: %v", vals)
	}
	for i := 1; i < len(vals); i++ {
		if vals[i] > vals[i-1] {
			t.Fatalf("base column not sorted descending: %v", vals)
		}
	}
	var methods *report.Table
	for _, b := range r.Blocks {
		if tb, ok := b.(*report.Table); ok && tb.Columns[0].Name == "Method" {
			methods = tb
		}
	}
	want := 0
	for _, row := range methods.Rows {
		if strings.Contains(strings.ToLower(row[0].Text), "wait") {
			want++
		}
	}
	var count string
	p.Eval(`(() => { const t = `+table+`, box = t.parentElement.querySelector(".filter input"); box.value = "wait";
		box.dispatchEvent(new Event("input")); return t.parentElement.querySelector(".filter .count").textContent; })()`, &count)
	if wantText := fmt.Sprintf("%d of %d rows", want, len(methods.Rows)); !strings.HasPrefix(count, wantText) || want == 0 {
		t.Errorf("filter 'wait': %q, want %q", count, wantText)
	}
}

func TestBrowserTopFlame(t *testing.T) {
	r := present.Top(fixture.DotnetTop(t, treeOpts(diff.Options{Top: 8})))
	f := flameOf(t, r)
	p := openPage(t, r)
	var got string
	p.Eval(fmt.Sprintf(`profdiff.tooltip(%q)`, waitAndAcquire), &got)
	if want := flameTip(f, firstNode(f.Tree, waitAndAcquire)); got != want {
		t.Errorf("tooltip: got %q, want %q", got, want)
	}
	for _, fr := range frames(t, p) {
		if fr.Other == 0 && fr.Color != bucketColors[fr.Bucket] {
			t.Errorf("top frame %s is %s, want its bucket's %s", fr.Name, fr.Color, bucketColors[fr.Bucket])
		}
	}
	var status string
	p.Eval(`profdiff.search("Wait")`, &status)
	if want := searchStatus(f, regexp.MustCompile("Wait")); status != want {
		t.Errorf("search: %q, want %q", status, want)
	}
	screenshot(t, p)
}

func TestBrowserVerdict(t *testing.T) {
	r := present.Top(fixture.DotnetTop(t, treeOpts(diff.Options{Top: 8})))
	r.Verdict = &report.Verdict{Lines: []report.Line{{report.Text("Lock contention grew, led by "), report.Code("acquire")}}, Tone: report.ToneGrowth}
	p := openPage(t, r)
	var text string
	p.Eval(`document.getElementById("verdict").textContent`, &text)
	if text != "Verdict: Lock contention grew, led by acquire" {
		t.Errorf("verdict box reads %q", text)
	}
}

// goroutineProfile is a real Go goroutine profile of this process taken
// while extra goroutines wait in parked (0 or more).
func goroutineProfile(t *testing.T, name string, parked int) *profile.Loaded {
	t.Helper()
	defer browser.Park(t, parked)()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 0); err != nil {
		t.Fatal(err)
	}
	l, err := profile.Parse(name, b.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A real Go profile, as top and as a diff: the page works and its
// tooltips are flameTip's.
func TestBrowserGoProfile(t *testing.T) {
	base, new := goroutineProfile(t, "base.pb.gz", 0), goroutineProfile(t, "new.pb.gz", 20)
	a := diff.NewAnalyzer(treeOpts(diff.Options{}))
	if err := a.Add(result.Base, base); err != nil {
		t.Fatal(err)
	}
	top := present.Top(a.Top())
	if err := a.Add(result.New, new); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*report.Report{"top": top, "diff": present.Diff(a.Diff())} {
		t.Run(name, func(t *testing.T) {
			f := flameOf(t, r)
			p := openPage(t, r)
			fs := frames(t, p)
			for _, fr := range fs[:min(5, len(fs))] {
				var got string
				p.Eval(fmt.Sprintf(`profdiff.tooltip(%q)`, fr.Name), &got)
				if want := flameTip(f, firstNode(f.Tree, fr.Name)); got != want {
					t.Errorf("tooltip of %s: %q, want %q", fr.Name, got, want)
				}
			}
		})
	}
}

// The 200,000-stack synthetic pair's page: at most about 3 MB, and its
// first paint (the mark the script sets once drawn) within a second.
func TestBrowserBigPage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 200,000-stack pair takes seconds to build")
	}
	if browser.Path() == "" {
		t.Skip("chromium is not installed (apt-get install chromium): skipping the browser test")
	}
	r := present.Diff(bigPair())
	page := htmlPage(t, r)
	t.Logf("page: %d bytes, %d nodes", len(page), countNodes(flameOf(t, r).Tree))
	if len(page) > 3<<20 {
		t.Errorf("page is %d bytes, over 3 MiB", len(page))
	}
	p := openPage(t, r)
	var ms float64
	p.Eval(`performance.getEntriesByName("profdiff-painted")[0].startTime`, &ms)
	drawn := len(frames(t, p))
	// The paint time is logged, not asserted (speed is for benchmarks: on
	// a loaded CI machine a 1 s limit failed at 1048 ms); the page must
	// have painted, and drawn frames.
	t.Logf("first paint at %.0f ms, %d frames drawn", ms, drawn)
	if ms <= 0 || drawn == 0 {
		t.Errorf("first paint at %.0f ms with %d frames drawn: the page did not paint", ms, drawn)
	}
	// "other" frames: grey, flameTip's tooltip, and the line under the graph.
	var tip, line string
	p.Eval(`profdiff.tooltip("other")`, &tip)
	if want := flameTip(flameOf(t, r), firstNode(flameOf(t, r).Tree, "other")); tip != want {
		t.Errorf("other's tooltip %q, want %q", tip, want)
	}
	p.Eval(`document.querySelector(".flame .other").textContent`, &line)
	if !strings.HasPrefix(line, "frames narrower than 1/5000 merged into 'other': ") {
		t.Errorf("the line under the graph reads %q", line)
	}
	t.Log(line)
}

func countNodes(n *report.Node) int {
	c := 1
	for _, k := range n.Children {
		c += countNodes(k)
	}
	return c
}

// The script formats numbers as units.go and cell.go do, ties included
// (Go rounds an exact half to even, toFixed away from zero).
func TestBrowserNumberFormat(t *testing.T) {
	tree := &report.Node{Name: "root", Total: [2]float64{1e9, 2e9}, Self: [2]float64{1e9, 2e9}}
	r := &report.Report{Blocks: []report.Block{&report.Flame{Tree: tree, Sides: 2, Unit: "nanoseconds", RateUnit: "s/s",
		RateFactor: [2]float64{1e-10, 1e-10}, Measure: report.MeasureRate, Labels: [2]string{"base", "new"}}}}
	p := openPage(t, r)
	values := []float64{0, 1, 0.5, 1.125, 2.5, -1.125, 999.96, 999.4, 1000.5, 0.012, 3.2e-5, 12e6, 4.79e9, 123456789, 1 << 40, 0.30000000000000004}
	for _, unit := range []string{"nanoseconds", "s/s", "count", "cores"} {
		var got []string
		js, _ := jsonMarshal(values)
		p.Eval(fmt.Sprintf(`%s.map(v => profdiff.amount(v, %q))`, js, unit), &got)
		for i, v := range values {
			if want := units.Format(v, unit); got[i] != want {
				t.Errorf("amount(%v, %s): script %q, Go %q", v, unit, got[i], want)
			}
		}
	}
	shares := []float64{0, 1, 0.0486, 0.00125, 0.04125, 0.5, -0.00001, 0.0459, -0.00125, 1.0 / 3}
	var pcts, pps []string
	js, _ := jsonMarshal(shares)
	p.Eval(string(js)+`.map(profdiff.pct)`, &pcts)
	p.Eval(string(js)+`.map(profdiff.pp)`, &pps)
	for i, v := range shares {
		if pcts[i] != Pct(v) || pps[i] != PP(v) {
			t.Errorf("%v: script %s %s, Go %s %s", v, pcts[i], pps[i], Pct(v), PP(v))
		}
	}
}

var jsonMarshal = json.Marshal

// TestBrowserDeepFlame: the page draws at most FlameMaxDepth rows under
// the shown root of a stack 3,000 frames deep, in a canvas no taller
// than those rows, and zooming into a deep frame draws the rows below it.
func TestBrowserDeepFlame(t *testing.T) {
	const depth = 3000
	p := openPage(t, &report.Report{Blocks: []report.Block{deepFlame(depth)}})
	fs := frames(t, p)
	deepest := 0
	for _, f := range fs {
		deepest = max(deepest, f.Depth)
	}
	if len(fs) != FlameMaxDepth+1 || deepest != FlameMaxDepth {
		t.Errorf("the page drew %d frames, %d deep; want %d, %d deep", len(fs), deepest, FlameMaxDepth+1, FlameMaxDepth)
	}
	var height float64
	p.Eval(`parseFloat(document.querySelector(".flame canvas").style.height)`, &height)
	if height > float64(FlameMaxDepth+1)*17 {
		t.Errorf("the canvas is %g px tall, want at most %d rows of 17", height, FlameMaxDepth+1)
	}
	var root string
	p.Eval(`profdiff.zoom("f2500")`, &root)
	fs = frames(t, p)
	if root != "f2500" || len(fs) != depth-2500+1 || fs[len(fs)-1].Name != fmt.Sprintf("f%d", depth) {
		t.Errorf("zoomed into f2500 (root %q): %d frames drawn, last %q; want %d down to f%d", root, len(fs), fs[len(fs)-1].Name, depth-2500+1, depth)
	}
}
