package diff

import (
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
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
			want := map[rules.Bucket]float64{rules.GC: 40.0 / 44, rules.CPU: 4.0 / 44}[b.Bucket]
			if !near(b.Base, want) || !near(b.New, want) {
				t.Errorf("%s path, %v: shares %v / %v, want %v on each side", path, b.Bucket, b.Base, b.New, want)
			}
		}
	}
}

// An Analyzer that walks many streamed profiles serially (the gate's)
// memoizes each function's frame across them, by side and module: a
// function met first in a location without a mapping, then in a
// library's, takes the library's module from the second profile, as the
// model's walk gives it; the other side, which meets it in the library
// first, takes it too.
func TestInfoFrameMemoModules(t *testing.T) {
	mk := func(mapFile string) *pprofile.Profile {
		fn := &pprofile.Function{ID: 1, Name: "memoTestLeaf"}
		root := &pprofile.Function{ID: 2, Name: "main.main"}
		loc := &pprofile.Location{ID: 1, Address: 0x1000, Line: []pprofile.Line{{Function: fn, Line: 3}}}
		top := &pprofile.Location{ID: 2, Address: 0x2000, Line: []pprofile.Line{{Function: root, Line: 9}}}
		p := &pprofile.Profile{
			SampleType: []*pprofile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
			PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"},
			Period:     1, Function: []*pprofile.Function{fn, root}, Location: []*pprofile.Location{loc, top},
			Sample: []*pprofile.Sample{{Location: []*pprofile.Location{loc, top}, Value: []int64{5}}},
		}
		if mapFile != "" {
			m := &pprofile.Mapping{ID: 1, Start: 0x1000, Limit: 0x3000, File: mapFile, HasFunctions: true}
			p.Mapping = []*pprofile.Mapping{m}
			loc.Mapping, top.Mapping = m, m
		}
		return p
	}
	dir := t.TempDir()
	bare := rawFile(t, dir, "bare.pb.gz", mk(""), profile.Options{})
	lib := rawFile(t, dir, "lib.pb.gz", mk("/usr/lib/libmemo.so"), profile.Options{})
	sides := [2][]*profile.Raw{{bare, lib}, {lib}}
	for _, serial := range []bool{true, false} {
		model, stream := NewAnalyzer(Options{}), NewAnalyzer(Options{})
		if serial {
			model.OnSample(func(*Sample) {})
			stream.OnSample(func(*Sample) {})
		}
		for side, rs := range sides {
			for _, r := range rs {
				l, err := r.Load()
				if err != nil {
					t.Fatal(err)
				}
				if err := model.Add(result.Side(side), l); err != nil {
					t.Fatal(err)
				}
				in, err := Prepare(r)
				if err != nil || !in.Streamed() {
					t.Fatalf("Prepare: %v", err)
				}
				if err := stream.AddInput(result.Side(side), in); err != nil {
					t.Fatal(err)
				}
			}
		}
		mod := func(a *Analyzer, side result.Side) string {
			for _, m := range a.methods {
				if m.key == "memoTestLeaf" {
					return m.module[side]
				}
			}
			return "(no method)"
		}
		stream.flush()
		model.flush()
		for _, side := range []result.Side{result.Base, result.New} {
			want := "libmemo.so"
			if got := mod(model, side); got != want {
				t.Errorf("serial %v: the model's module on side %d is %q, want %q", serial, side, got, want)
			}
			if got := mod(stream, side); got != want {
				t.Errorf("serial %v: the stream's module on side %d is %q, want %q", serial, side, got, want)
			}
		}
	}
}
