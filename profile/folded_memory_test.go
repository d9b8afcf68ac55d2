package profile

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestFoldedDistinctStacksMemory: a folded file of many distinct stacks
// (here 200,000 of three frames, the shape of a file crafted to make a
// reader hold one sample a line) costs the reader a bounded number of
// bytes a stack, counting every allocation the parse makes: nothing is
// grown by copying. The bound is the samples' own size (pprof's Sample,
// its location list and value) plus the table of stacks seen.
func TestFoldedDistinctStacksMemory(t *testing.T) {
	const n = 200_000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "pkg.a%03d;pkg.b%03d;pkg.c%03d %d\n", i/10000, i/100%100, i%100, i%7+1)
	}
	text := []byte(b.String())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, _, err := ParseFolded(text)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != n {
		t.Fatalf("%d samples, want %d", len(p.Sample), n)
	}
	per := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("%d distinct stacks (%d bytes of text): %.0f bytes allocated a stack", n, len(text), per)
	if per > 250 {
		t.Errorf("parsing allocated %.0f bytes a distinct stack, want at most 250", per)
	}
}
