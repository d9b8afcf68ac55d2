package diff

import (
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// A sample's fallback label (a thread blocked off the CPU) replaces only
// the classifier's default: the frame rules still decide first, and a
// sample without the label that no rule claims stays cpu.
func TestFallbackLabelDecidesLast(t *testing.T) {
	fb := func(b string) map[string][]string { return map[string][]string{profile.LabelFallback: {b}} }
	p := stacksProfile([]stackSample{
		{100, fb("wait"), []string{"worker_loop", "main"}},
		{200, fb("wait"), []string{"pthread_mutex_lock", "worker_loop", "main"}},
		{400, nil, []string{"compute", "main"}},
		{800, fb("not-a-bucket"), []string{"spin", "main"}},
	})
	a := NewAnalyzer(Options{Top: -1})
	if err := a.Add(result.Base, &profile.Loaded{Source: "x.pb", Kind: profile.KindWall, Profile: p}); err != nil {
		t.Fatal(err)
	}
	checkBuckets(t, a.Top(), map[rules.Bucket]float64{rules.Wait: 100, rules.LockContention: 200, rules.CPU: 1200})
}

// stackSample is one sample of stacksProfile: nanoseconds, labels and
// frame names, leaf first.
type stackSample struct {
	ns     int64
	labels map[string][]string
	frames []string
}

// stacksProfile is a one-type wall-clock profile (nanoseconds) of these
// samples, one function and location per distinct name.
func stacksProfile(samples []stackSample) *pprofile.Profile {
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "wall", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:     1,
	}
	locs := map[string]*pprofile.Location{}
	for _, ss := range samples {
		s := &pprofile.Sample{Value: []int64{ss.ns}, Label: ss.labels}
		for _, name := range ss.frames {
			l := locs[name]
			if l == nil {
				f := &pprofile.Function{ID: uint64(len(p.Function) + 1), Name: name}
				l = &pprofile.Location{ID: uint64(len(p.Location) + 1), Line: []pprofile.Line{{Function: f}}}
				p.Function, p.Location = append(p.Function, f), append(p.Location, l)
				locs[name] = l
			}
			s.Location = append(s.Location, l)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// checkBuckets compares a top's non-zero buckets with want.
func checkBuckets(t *testing.T, top *result.TopResult, want map[rules.Bucket]float64) {
	t.Helper()
	got := map[rules.Bucket]float64{}
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
