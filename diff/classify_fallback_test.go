package diff

import (
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
)

// A sample's fallback label (a thread blocked off the CPU) replaces only
// the classifier's default: the frame rules still decide first, and a
// sample without the label that no rule claims stays cpu.
func TestFallbackLabelDecidesLast(t *testing.T) {
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "off-cpu", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "off-cpu", Unit: "nanoseconds"},
		Period:     1,
	}
	add := func(ns int64, fb string, frames ...string) {
		s := &pprofile.Sample{Value: []int64{ns}}
		if fb != "" {
			s.Label = map[string][]string{profile.LabelFallback: {fb}}
		}
		for _, name := range frames {
			f := &pprofile.Function{ID: uint64(len(p.Function) + 1), Name: name}
			l := &pprofile.Location{ID: uint64(len(p.Location) + 1), Line: []pprofile.Line{{Function: f}}}
			p.Function, p.Location = append(p.Function, f), append(p.Location, l)
			s.Location = append(s.Location, l)
		}
		p.Sample = append(p.Sample, s)
	}
	add(100, "wait", "worker_loop", "main")
	add(200, "wait", "pthread_mutex_lock", "worker_loop", "main")
	add(400, "", "compute", "main")
	add(800, "not-a-bucket", "spin", "main")
	a := NewAnalyzer(Options{Top: -1})
	if err := a.Add(Base, &profile.Loaded{Source: "x.pb", Kind: profile.KindWall, Profile: p}); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	want := map[Bucket]float64{Wait: 100, LockContention: 200, CPU: 1200}
	got := map[Bucket]float64{}
	for _, b := range top.Buckets {
		if b.Value != 0 {
			got[b.Bucket] = b.Value
		}
	}
	if len(got) != len(want) {
		t.Errorf("buckets %v, want %v", got, want)
	}
	for b, v := range want {
		if got[b] != v {
			t.Errorf("%s = %v, want %v", b, got[b], v)
		}
	}
}
