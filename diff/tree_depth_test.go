package diff

import (
	"fmt"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

// TestTreeDepthCut: the built call tree stops at its maximum depth (here
// 100 rather than MaxTreeDepth, to stay small): a stack 150 frames deep
// ends at level 100 with the value of the frames below as that frame's
// self, the totals stay whole, a shallower stack is untouched, and the
// result warns once. The builder descends a level a frame, so without the
// cut a hostile stack of a million frames overflows its goroutine stack.
func TestTreeDepthCut(t *testing.T) {
	frames := make([]string, 150)
	for i := range frames {
		frames[i] = fmt.Sprintf("f%d", i)
	}
	text := strings.Join(frames, ";") + " 7\n" + strings.Join(frames[:3], ";") + " 2\n"
	p, _, err := profile.ParseFolded([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	a := NewAnalyzer(Options{CallTree: true})
	a.tree.maxDepth = 100
	if err := a.Add(result.Base, &profile.Loaded{Source: "deep.folded", Format: "folded", Kind: profile.DetectKind(p), Profile: p}); err != nil {
		t.Fatal(err)
	}
	r := a.Top()
	depth, n := 0, r.Tree
	for len(n.Children) > 0 {
		// The deep stack's path: the child with the most value.
		next := n.Children[0]
		for _, c := range n.Children {
			if c.Total[0] > next.Total[0] {
				next = c
			}
		}
		n = next
		depth++
	}
	if depth != 100 || n.Name != "f99" || n.Self[0] != 7 || n.Total[0] != 7 {
		t.Errorf("the deep path ends at depth %d in %s (self %g, total %g), want depth 100 in f99 with self 7", depth, n.Name, n.Self[0], n.Total[0])
	}
	if r.Tree.Total[0] != 9 {
		t.Errorf("root total %g, want 9", r.Tree.Total[0])
	}
	cut := 0
	for _, w := range r.Warnings {
		if strings.Contains(w, "the call tree is cut at 100 frames deep") {
			cut++
		}
	}
	if cut != 1 {
		t.Errorf("%d warnings of the cut, want 1: %q", cut, r.Warnings)
	}
}
