package render

import (
	"fmt"
	"sync"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// bigPair is the synthetic pair of cmd/benchcmp and diff's benchmarks
// (200,000 stacks a side), diffed as the html format asks (call tree,
// TreeMin); built once.
var bigPair = sync.OnceValue(func() *result.Result { return synthPair(treeOpts(diff.Options{})) })

// foldedPair is bigPair diffed as the folded formats ask (every stack,
// as the profiles named its frames, unbuilt); built once.
var foldedPair = sync.OnceValue(func() *result.Result {
	return synthPair(diff.Options{CallTree: true, TreeFrames: true, TreeStacks: true})
})

// synthPair diffs the synthetic pair with opts.
func synthPair(opts diff.Options) *result.Result {
	const stacks = 200_000
	a := diff.NewAnalyzer(opts)
	for i, side := range []synth.Side{synth.Base, synth.New} {
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Functions, cfg.Side = stacks, max(1000, stacks/10), side
		p := synth.Generate(cfg)
		l := &profile.Loaded{Source: fmt.Sprintf("synth-%d", i), Format: "pprof", Kind: profile.DetectKind(p), Profile: p}
		if err := a.Add(result.Side(i), l); err != nil {
			panic(err)
		}
	}
	return a.Diff()
}

// BenchmarkFolded writes the big pair's stacks as the difffolded format
// (go test ./diff/render -run '^$' -bench Folded): the writer alone, from
// the engine's unbuilt stacks.
func BenchmarkFolded(b *testing.B) { benchFormat(b, DiffFolded, foldedPair()) }

// BenchmarkHTML and BenchmarkJSON lay out the same big result as the page
// and as JSON, with its call tree (as the html format builds it) and
// without (as the json format does): the page must take at most 1.5 times
// JSON's time (go test ./diff/render -run '^$' -bench 'HTML|JSON').
func BenchmarkHTML(b *testing.B) { benchFormat(b, HTML, bigPair()) }

func BenchmarkJSON(b *testing.B) {
	b.Run("tree", func(b *testing.B) { benchFormat(b, JSON, bigPair()) })
	b.Run("no-tree", func(b *testing.B) {
		r := *bigPair()
		r.Tree = nil
		benchFormat(b, JSON, &r)
	})
}

// BenchmarkTable lays out the big result in the table format, unlimited
// and fitted to 100 columns (go test ./diff/render -run '^$' -bench Table):
// measuring, shortening and wrapping its cells.
func BenchmarkTable(b *testing.B) {
	b.Run("unlimited", func(b *testing.B) { benchFormat(b, Table, bigPair()) })
	b.Run("width-100", func(b *testing.B) { benchFormat(b, Table, bigPair(), Options{Width: 100}) })
}

// benchFormat writes r in format f, with o[0] if given.
func benchFormat(b *testing.B, f Format, r *result.Result, o ...Options) {
	var opts Options
	if len(o) > 0 {
		opts = o[0]
	}
	b.ResetTimer()
	var n countWriter
	for b.Loop() {
		n = 0
		if err := Write(&n, present.Diff(r), f, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "bytes")
}

// countWriter counts what is written.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
