package render

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/report"
)

// treeOpts are the options the html format runs with (cmd/profdiff's
// treeFor).
func treeOpts(o diff.Options) diff.Options {
	o.CallTree, o.TreeMin = true, TreeMin
	return o
}

// htmlPage renders r as the html format.
func htmlPage(t testing.TB, r *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r, HTML, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var flameBlob = regexp.MustCompile(`<script type="application/json" id="flame1">([^<]*)</script>`)

// flameJSON is the first flame graph's data in a page, indented.
func flameJSON(t testing.TB, page []byte) []byte {
	t.Helper()
	m := flameBlob.FindSubmatch(page)
	if m == nil {
		t.Fatal("the page holds no flame data")
	}
	var b bytes.Buffer
	if err := json.Indent(&b, m[1], "", " "); err != nil {
		t.Fatalf("flame data is not JSON: %v", err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

func TestHTMLFlameDataGolden(t *testing.T) {
	golden(t, "html.dotnet.flame-data.json.golden", flameJSON(t, htmlPage(t, dotnetReport(t, treeOpts(diff.Options{})))))
	golden(t, "html.top.dotnet-net11.flame-data.json.golden", flameJSON(t, htmlPage(t, present.Top(fixture.DotnetTop(t, treeOpts(diff.Options{Top: 8}))))))
}

// The flame data decodes to the tree it came from: every node, its
// values and names, in preorder.
func TestHTMLFlameDataIsTheTree(t *testing.T) {
	r := dotnetReport(t, treeOpts(diff.Options{}))
	var d struct {
		Names []string
		Nodes [][]any
	}
	if err := json.Unmarshal(flameJSON(t, htmlPage(t, r)), &d); err != nil {
		t.Fatal(err)
	}
	i := 0
	var walk func(n *report.Node, parent int)
	walk = func(n *report.Node, parent int) {
		a := d.Nodes[i]
		if int(a[0].(float64)) != parent || d.Names[int(a[1].(float64))] != n.Name || a[3].(float64) != n.Total[0] || a[4].(float64) != n.Total[1] {
			t.Fatalf("node %d is %v, want %s under %d with totals %v", i, a, n.Name, parent, n.Total)
		}
		me := i
		i++
		for _, c := range n.Children {
			walk(c, me)
		}
	}
	walk(reportFlame(r).Tree, -1)
	if i != len(d.Nodes) {
		t.Errorf("%d nodes in the page, %d in the tree", len(d.Nodes), i)
	}
}

func TestHTMLPageParts(t *testing.T) {
	r := dotnetReport(t, treeOpts(diff.Options{}))
	r.Warnings = []string{"base and new <differ> in kind"}
	page := string(htmlPage(t, r))
	for _, want := range []string{
		"<!DOCTYPE html>", "<title>", `<table class="sortable">`, `class="filter"`,
		"<li>base and new &lt;differ&gt; in kind</li>", "widths: <span class=\"width-rule\">larger side</span>; colour: ratio of shares",
		"<code>System.Threading.LowLevelLock.WaitAndAcquire</code>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Self-contained: nothing that fetches.
	for _, bad := range []string{"http://", "https://", "<link", " src=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
}

// A chart is written by chartSVG, and its error is the page's.
func TestHTMLChartUsesChartSVG(t *testing.T) {
	r := &report.Report{Blocks: []report.Block{&report.Chart{Title: "rps"}}}
	var b bytes.Buffer
	err := Write(&b, r, HTML, Options{})
	var want bytes.Buffer
	wantErr := chartSVG(&want, &report.Chart{Title: "rps"})
	if (err == nil) != (wantErr == nil) || (err == nil && !strings.Contains(b.String(), want.String())) {
		t.Errorf("page error %v, chartSVG's %v", err, wantErr)
	}
}

// writeTemp writes a page into the test's temporary folder.
func writeTemp(t testing.TB, name string, page []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
