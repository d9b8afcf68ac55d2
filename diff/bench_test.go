package diff

import (
	"fmt"
	"testing"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// benchPair generates a synthetic base/new pair of the given size.
func benchPair(b *testing.B, stacks int) [2]*profile.Loaded {
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
func BenchmarkAnalyzer(b *testing.B) {
	for _, n := range []int{20_000, 200_000} {
		b.Run(fmt.Sprintf("stacks=%d", n), func(b *testing.B) {
			ls := benchPair(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				a := NewAnalyzer(Options{})
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
