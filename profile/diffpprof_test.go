package profile

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

func sumValues(p *pprofile.Profile, base bool) int64 {
	var n int64
	for _, s := range p.Sample {
		if (s.Label[BaseLabel] != nil) == base {
			n += s.Value[0]
		}
	}
	return n
}

func TestDiffProfile(t *testing.T) {
	base := testCPUProfile()
	newer := testCPUProfile()
	newer.Sample[0].Value = []int64{60, 600_000_000} // main.hot doubled
	newer.Sample = newer.Sample[:2]                  // no more mallocgc
	baseBefore, newBefore := base.String(), newer.String()

	d, err := DiffProfile([]*pprofile.Profile{base}, []int{1}, []*pprofile.Profile{newer}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if base.String() != baseBefore || newer.String() != newBefore {
		t.Errorf("DiffProfile modified its inputs")
	}
	if len(d.SampleType) != 1 || d.SampleType[0].Type != "cpu" || d.SampleType[0].Unit != "nanoseconds" {
		t.Errorf("sample types %v", d.SampleType)
	}
	if d.DefaultSampleType != "" {
		t.Errorf("DefaultSampleType %q", d.DefaultSampleType)
	}
	if err := d.CheckValid(); err != nil {
		t.Fatalf("CheckValid: %v", err)
	}
	for _, s := range d.Sample {
		if len(s.Value) != 1 {
			t.Fatalf("sample has %d values", len(s.Value))
		}
		if lb := s.Label[BaseLabel]; lb != nil {
			if len(lb) != 1 || lb[0] != "true" || s.Value[0] > 0 {
				t.Errorf("base sample %q: label %q value %d", funcNames(s), lb, s.Value[0])
			}
		} else if s.Value[0] < 0 {
			t.Errorf("new sample %q has a negative value", funcNames(s))
		}
	}
	if got := sumValues(d, true); got != -450_000_000 {
		t.Errorf("base total %d, want -450ms", got)
	}
	if got := sumValues(d, false); got != 700_000_000 {
		t.Errorf("new total %d, want 700ms", got)
	}

	// Round trip: the diff is a profile pprof reads back.
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	written := append([]byte(nil), buf.Bytes()...)
	back, err := pprofile.Parse(&buf)
	if err != nil {
		t.Fatalf("Parse(Write(diff)): %v", err)
	}
	if err := back.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if len(back.Sample) != len(d.Sample) || sumValues(back, true) != -450_000_000 || sumValues(back, false) != 700_000_000 {
		t.Errorf("round trip changed the samples: %d samples", len(back.Sample))
	}
	// profdiff's loader recognises it as a diff and says what to pass
	// instead (issue 13); a loader from before that reads it as a CPU
	// profile.
	l, err := Load(context.Background(), writeTemp(t, "diff.pb.gz", written), Options{})
	switch {
	case err != nil && !strings.Contains(err.Error(), "this is a diff written by pprof or profdiff"):
		t.Errorf("loading the diff: %v", err)
	case err == nil && (l.Format != "pprof" || l.Kind != KindCPU):
		t.Errorf("loaded diff: Format %q Kind %q", l.Format, l.Kind)
	}
}

func TestDiffProfileMixed(t *testing.T) {
	// Folded stacks (samples/count, period samples/count) against the
	// samples/count column of a pprof CPU profile, two profiles a side.
	folded, _, err := ParseFolded([]byte("runtime.main;main.main;main.work;main.hot 20\n"))
	if err != nil {
		t.Fatal(err)
	}
	folded2, _, _ := ParseFolded([]byte("runtime.main;main.main;main.work;main.cold 4\n"))
	d, err := DiffProfile([]*pprofile.Profile{folded, folded2}, []int{0, 0}, []*pprofile.Profile{testCPUProfile(), testCPUProfile()}, []int{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if d.SampleType[0].Type != "samples" {
		t.Errorf("sample type %v", d.SampleType[0])
	}
	if got := sumValues(d, true); got != -24 {
		t.Errorf("base total %d, want -24", got)
	}
	if got := sumValues(d, false); got != 90 {
		t.Errorf("new total %d, want 90", got)
	}
	if err := d.CheckValid(); err != nil {
		t.Error(err)
	}
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := pprofile.Parse(&buf); err != nil {
		t.Errorf("round trip: %v", err)
	}
}

func TestDiffProfileExistingLabels(t *testing.T) {
	base := testCPUProfile()
	base.Sample[0].Label = map[string][]string{"handler": {"/api"}}
	d, err := DiffProfile([]*pprofile.Profile{base}, []int{0}, []*pprofile.Profile{testCPUProfile()}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range d.Sample {
		if s.Label["handler"] != nil {
			found = true
			if s.Label[BaseLabel] == nil {
				t.Errorf("labelled base sample lost %s", BaseLabel)
			}
		}
	}
	if !found {
		t.Errorf("the existing label was lost")
	}
	if base.Sample[0].Label[BaseLabel] != nil {
		t.Errorf("DiffProfile labelled its input")
	}
}

func TestDiffProfileBadArguments(t *testing.T) {
	p := testCPUProfile()
	for _, tc := range []struct {
		name    string
		base    []*pprofile.Profile
		baseIdx []int
		new     []*pprofile.Profile
		newIdx  []int
	}{
		{"index out of range", []*pprofile.Profile{p}, []int{2}, []*pprofile.Profile{p}, []int{0}},
		{"negative index", []*pprofile.Profile{p}, []int{0}, []*pprofile.Profile{p}, []int{-1}},
		{"index count", []*pprofile.Profile{p}, nil, []*pprofile.Profile{p}, []int{0}},
		{"nothing", nil, nil, nil, nil},
		{"incompatible types", []*pprofile.Profile{p}, []int{0}, []*pprofile.Profile{p}, []int{1}},
	} {
		if _, err := DiffProfile(tc.base, tc.baseIdx, tc.new, tc.newIdx); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else if !strings.HasPrefix(err.Error(), "building diff profile: ") {
			t.Errorf("%s: error %q", tc.name, err)
		}
	}
}

// The builder, fed one profile at a time over several batches, writes
// the diff DiffProfile writes; an incompatible profile is refused with
// both sample types named and leaves the diff as it was; and what the
// builder holds back between merges stays under its bound.
func TestDiffBuilderBatches(t *testing.T) {
	var b DiffBuilder
	if _, err := b.Profile(); err == nil || !strings.Contains(err.Error(), "no profiles") {
		t.Errorf("empty builder: %v", err)
	}
	// testCPUProfile has 3 samples: enough copies to merge several times.
	n := 2*minDiffBatch/3 + 5
	var bases, news []*pprofile.Profile
	var idx []int
	for i := range n {
		p, q := testCPUProfile(), testCPUProfile()
		q.Sample[0].Value = []int64{60, int64(600_000_000 + i)} // distinct totals
		bases, news, idx = append(bases, p), append(news, q), append(idx, 1)
		if err := b.Add(p, 1, true); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(q, 1, false); err != nil {
			t.Fatal(err)
		}
		if b.nPending > max(minDiffBatch, 6) {
			t.Fatalf("after %d profiles a side the builder holds %d samples back", i+1, b.nPending)
		}
	}
	if b.acc == nil {
		t.Fatal("never merged")
	}
	if err := b.Add(testCPUProfile(), 0, false); err == nil || !strings.Contains(err.Error(), "incompatible sample types cpu/nanoseconds and samples/count") {
		t.Errorf("incompatible profile: %v", err)
	}
	got, err := b.Profile()
	if err != nil {
		t.Fatal(err)
	}
	// DiffProfile adds every base profile before the new ones, so sample
	// order differs; the totals per stack and side must not.
	want, err := DiffProfile(bases, idx, news, idx)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := stackTotals(got), stackTotals(want); !maps.Equal(g, w) || len(g) != 6 {
		t.Errorf("builder's diff %v\nDiffProfile's %v", g, w)
	}
}

// stackTotals sums a diff's values by side and stack.
func stackTotals(p *pprofile.Profile) map[string]int64 {
	m := map[string]int64{}
	for _, s := range p.Sample {
		k := strings.Join(funcNames(s), ";")
		if s.Label[BaseLabel] != nil {
			k = "base " + k
		}
		m[k] += s.Value[0]
	}
	return m
}
