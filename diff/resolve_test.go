package diff

import (
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
)

// A location with several lines (a call inlined into another) is
// resolved on first sight and read from the resolver's fast path after:
// every later sample of it must keep each line's own frame rule, on the
// model's path and the streaming decoder's. Here an inlined leaf with no
// rule sits in the same location as the collector's worker loop, a strong
// gc rule: the stack is gc time, whichever sight of it.
func TestInlinedFrameRules(t *testing.T) {
	fns := []*pprofile.Function{
		{ID: 1, Name: "main.leafHelper"},
		{ID: 2, Name: "runtime.gcBgMarkWorker"},
		{ID: 3, Name: "main.work"},
		{ID: 4, Name: "main.main"},
	}
	inl := &pprofile.Location{ID: 1, Address: 0x1000, Line: []pprofile.Line{{Function: fns[0], Line: 3}, {Function: fns[1], Line: 40}}}
	leaf := &pprofile.Location{ID: 2, Address: 0x2000, Line: []pprofile.Line{{Function: fns[2], Line: 7}}}
	root := &pprofile.Location{ID: 3, Address: 0x3000, Line: []pprofile.Line{{Function: fns[3], Line: 9}}}
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1, Function: fns, Location: []*pprofile.Location{inl, leaf, root},
	}
	for range 4 { // three more sights of each stack after the first
		p.Sample = append(p.Sample,
			&pprofile.Sample{Location: []*pprofile.Location{inl, root}, Value: []int64{10}},
			&pprofile.Sample{Location: []*pprofile.Location{leaf, root}, Value: []int64{1}})
	}
	r := rawFile(t, t.TempDir(), "inlined.pb.gz", p, profile.Options{})
	model, stream := bothPaths(t, Options{}, [2][]*profile.Raw{{r}, {r}})
	for path, a := range map[string]*Analyzer{"model": model, "stream": stream} {
		for _, b := range a.Diff().Buckets {
			want := map[Bucket]float64{GC: 40.0 / 44, CPU: 4.0 / 44}[b.Bucket]
			if !near(b.Base, want) || !near(b.New, want) {
				t.Errorf("%s path, %v: shares %v / %v, want %v on each side", path, b.Bucket, b.Base, b.New, want)
			}
		}
	}
}
