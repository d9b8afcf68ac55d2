package diff

import (
	"fmt"
	"testing"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// benchPair generates a synthetic base/new pair of the given size.
func benchPair(b testing.TB, stacks int) [2]*profile.Loaded {
	b.Helper()
	var ls [2]*profile.Loaded
	for i, side := range []synth.Side{synth.Base, synth.New} {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.Side = stacks, max(1000, stacks/10), side
		p := synth.Generate(cfg)
		ls[i] = &profile.Loaded{Source: fmt.Sprintf("synth-%s", Side(i)), Format: "pprof", Kind: profile.DetectKind(p), Profile: p}
	}
	return ls
}

// BenchmarkAnalyzer measures Add (both sides) and Diff on synthetic Go CPU
// profiles of 15-45 frames per stack: go test ./diff -bench Analyzer -benchmem
//
// The tree=picture variants also build the merged call tree as the html
// and svg formats ask for it (subtrees under 1/5000 merged), whose cost
// the html format's budget (1.5x the JSON diff) must hold.
func BenchmarkAnalyzer(b *testing.B) {
	for _, c := range []struct {
		n    int
		tree bool
	}{{20_000, false}, {200_000, false}, {200_000, true}} {
		name := fmt.Sprintf("stacks=%d", c.n)
		if c.tree {
			name += "/tree=picture"
		}
		n := c.n
		b.Run(name, func(b *testing.B) {
			ls := benchPair(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				a := NewAnalyzer(Options{CallTree: c.tree, TreeMin: 1.0 / 5000})
				for side, l := range ls {
					if err := a.Add(Side(side), l); err != nil {
						b.Fatal(err)
					}
				}
				if r := a.Diff(); len(r.Methods) == 0 {
					b.Fatal("no method rows")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/stack")
		})
	}
}
