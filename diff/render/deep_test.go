package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/report"
)

// deepFlame is a flame of one stack depth frames deep under the root,
// on both sides (built leaf first, without recursion).
func deepFlame(depth int) *report.Flame {
	var n *report.Node
	for d := depth; d >= 1; d-- {
		c := &report.Node{Name: fmt.Sprintf("f%d", d), Total: [2]float64{1, 2}}
		if n == nil {
			c.Self = c.Total
		} else {
			c.Children = []*report.Node{n}
		}
		n = c
	}
	root := &report.Node{Name: "root", Total: n.Total, Children: []*report.Node{n}}
	return &report.Flame{Tree: root, Sides: 2, Unit: "count", Labels: [2]string{"base", "new"}, Buckets: []string{"cpu"}}
}

// TestFlameDeepStack: a stack 100,000 frames deep is laid out in work
// linear in its frames (two visits a node: the order and the widths),
// and the svg and html pictures draw at most FlameMaxDepth rows under the
// root, each with a note saying the deeper frames are left out.
func TestFlameDeepStack(t *testing.T) {
	const depth = 100_000
	f := deepFlame(depth)
	o := newFlameOrder(f)
	if len(o.nodes) != depth+1 || o.steps != 2*(depth+1) {
		t.Errorf("ordering %d nodes took %d visits, want %d nodes in %d", len(o.nodes), o.steps, depth+1, 2*(depth+1))
	}
	if o.width[0] != 1 || o.width[len(o.width)-1] != 1 {
		t.Errorf("root and leaf widths %g and %g, want 1 (one stack fills the drawing)", o.width[0], o.width[len(o.width)-1])
	}
	r := &report.Report{Blocks: []report.Block{f}}
	svg := renderSVG(t, r)
	d := parseSVG(t, svg)
	if got := len(d.frames()); got != FlameMaxDepth+1 {
		t.Errorf("svg draws %d frames, want the root and %d rows", got, FlameMaxDepth)
	}
	note := fmt.Sprintf("The call tree is %d frames deep: frames deeper than %d are not drawn", depth, FlameMaxDepth)
	if !bytes.Contains(svg, []byte(note)) {
		t.Errorf("the svg caption lacks %q", note)
	}
	// The drawing's size follows the rows drawn, not the stack's depth.
	if len(svg) > 1<<20 {
		t.Errorf("svg of %d drawn rows is %d bytes, want under 1 MiB", FlameMaxDepth, len(svg))
	}
	var page bytes.Buffer
	if err := Write(&page, r, HTML, Options{}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{
		fmt.Sprintf(`<p class="deep">the call tree is %d frames deep: frames more than %d below the shown root are not drawn`, depth, FlameMaxDepth),
		fmt.Sprintf(`"maxDepth":%d`, FlameMaxDepth),
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the html page lacks %q", want)
		}
	}
	// The page carries every node (the script zooms into deep ones):
	// its size is linear in the frames, under 64 bytes a frame here.
	if len(html) > 64*depth+1<<20 {
		t.Errorf("html of %d frames is %d bytes, want under %d", depth, len(html), 64*depth+1<<20)
	}
}

// A tree that fits the depth draws every row, with no note.
func TestFlameShallowNoNote(t *testing.T) {
	f := deepFlame(FlameMaxDepth)
	svg := renderSVG(t, &report.Report{Blocks: []report.Block{f}})
	if got := len(parseSVG(t, svg).frames()); got != FlameMaxDepth+1 {
		t.Errorf("svg draws %d frames, want all %d", got, FlameMaxDepth+1)
	}
	if bytes.Contains(svg, []byte("frames deep")) {
		t.Error("a tree that fits has a depth note")
	}
}

// BenchmarkFlameDeep lays out a stack 100,000 frames deep as svg and as
// html (go test ./diff/render -run '^$' -bench FlameDeep).
func BenchmarkFlameDeep(b *testing.B) {
	r := &report.Report{Blocks: []report.Block{deepFlame(100_000)}}
	for _, format := range []Format{SVG, HTML} {
		b.Run(string(format), func(b *testing.B) {
			for b.Loop() {
				var buf bytes.Buffer
				if err := Write(&buf, r, format, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
