package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// stackTotals sums p's values of the sample type typ/unit by stack (frame
// names, leaf first, inlined frames innermost first), under key prefix.
func stackTotals(t *testing.T, into map[string]int64, p *pprofile.Profile, typ, unit, prefix string, sign int64) {
	t.Helper()
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == typ && st.Unit == unit {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no sample type %s/%s in %s", typ, unit, diffSampleTypes(p))
	}
	for _, s := range p.Sample {
		var names []string
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				names = append(names, l.Function.Name)
			}
		}
		into[prefix+strings.Join(names, ";")] += sign * s.Value[idx]
	}
}

// dropZeros removes the stacks whose values cancelled out.
func dropZeros(m map[string]int64) {
	for k, v := range m {
		if v == 0 {
			delete(m, k)
		}
	}
}

func diffSampleTypes(p *pprofile.Profile) string {
	var s []string
	for _, st := range p.SampleType {
		s = append(s, st.Type+"/"+st.Unit)
	}
	return strings.Join(s, ", ")
}

// checkOutputPprof compares, stack by stack and side by side, the pprof
// file out with the inputs it was written from, loaded as top and diff
// load them (the base side negated and labelled pprof::base).
func checkOutputPprof(t *testing.T, out string, bases, news []string) {
	t.Helper()
	got := readPprof(t, out)
	if len(got.SampleType) != 1 {
		t.Fatalf("%d sample types, want 1", len(got.SampleType))
	}
	typ, unit := got.SampleType[0].Type, got.SampleType[0].Unit
	want := map[string]int64{}
	for i, side := range [][]string{bases, news} {
		for _, in := range side {
			l, err := profile.Load(context.Background(), in, profile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			prefix, sign := "new ", int64(1)
			if i == 0 && news != nil {
				prefix, sign = "base ", -1
			}
			stackTotals(t, want, l.Profile, typ, unit, prefix, sign)
		}
	}
	have := map[string]int64{}
	for _, s := range got.Sample {
		if len(s.Label["bucket"]) != 1 {
			t.Fatalf("sample without its bucket: %v", s.Label)
		}
		prefix := "new "
		if len(s.Label[profile.BaseLabel]) == 1 {
			if s.Value[0] > 0 {
				t.Fatalf("base sample not negated: %d", s.Value[0])
			}
			prefix = "base "
		}
		one := &pprofile.Profile{SampleType: got.SampleType, Sample: []*pprofile.Sample{s}}
		stackTotals(t, have, one, typ, unit, prefix, 1)
	}
	dropZeros(want)
	dropZeros(have)
	var diffs []string
	for k, v := range want {
		if have[k] != v {
			diffs = append(diffs, k)
		}
	}
	for k := range have {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, k)
		}
	}
	sort.Strings(diffs)
	for i, k := range diffs {
		if i == 5 {
			t.Errorf("... and %d more", len(diffs)-5)
			break
		}
		t.Errorf("stack %q: written %d, inputs %d", k, have[k], want[k])
	}
	if len(want) == 0 {
		t.Fatal("the inputs have no samples")
	}
}

// blockedGoroutines starts n goroutines parked in a few distinct stacks
// and returns what ends them.
func blockedGoroutines(n int) func() {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	mu.Lock()
	for i := range n {
		wg.Add(1)
		switch i % 3 {
		case 0:
			go func() { defer wg.Done(); <-stop }()
		case 1:
			go func() { defer wg.Done(); mu.Lock(); mu.Unlock() }()
		default:
			go func() {
				defer wg.Done()
				select {
				case <-stop:
				}
			}()
		}
	}
	return func() { close(stop); mu.Unlock(); wg.Wait() }
}

// diff --output-pprof and top --output-pprof write every stack of the
// inputs with its value: read back with pprof's library, the written
// profile's per-stack totals of each side are the inputs'. The inputs are
// the .NET folded pair and goroutine profiles the Go runtime writes of
// this test (inlined frames, addresses, several goroutine stacks).
func TestOutputPprofStacks(t *testing.T) {
	dir := t.TempDir()
	gor := func(name string) string {
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	g1 := gor("g1.pb.gz")
	done := blockedGoroutines(30)
	g2 := gor("g2.pb.gz")
	done()
	out := filepath.Join(dir, "out.pb.gz")
	for _, c := range []struct {
		name        string
		args        []string
		bases, news []string
	}{
		{"diff folded", []string{"diff", net10, net11}, []string{net10}, []string{net11}},
		{"diff goroutine", []string{"diff", g1, g2}, []string{g1}, []string{g2}},
		{"diff several", []string{"diff", "--base", net10, "--base", net11, "--new", net11}, []string{net10, net11}, []string{net11}},
		{"top folded", []string{"top", net11}, []string{net11}, nil},
		{"top merged", []string{"top", g1, g2}, []string{g1, g2}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{c.args[0], "--format", "json", "--output-pprof", out}, c.args[1:]...)
			_, stderr, code := profdiff(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkOutputPprof(t, out, c.bases, c.news)
		})
	}
}

// diff --output-pprof costs about what the report of the same diff does:
// on a pair of 30,000-stack synthetic CPU profiles its peak RSS, measured
// in a subprocess, is at most twice the JSON report's (merging the pprof
// models took 7x on the 200,000-stack pair), and what it writes holds
// every stack of both sides. Skipped with -short and under the race
// detector.
func TestOutputPprofCostsAboutTheReport(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("two subprocess runs on 30,000-stack profiles")
	}
	dir := t.TempDir()
	var paths [2]string
	for side, name := range []string{"base", "new"} {
		paths[side] = filepath.Join(dir, name+".pb.gz")
		cfg := synth.DefaultConfig()
		cfg.Stacks, cfg.Side = 30_000, synth.Side(side)
		if err := synth.WriteFile(paths[side], cfg); err != nil {
			t.Fatal(err)
		}
	}
	_, code, cpuJSON, rssJSON := runMeasured(t, dir, "diff", "--format", "json", paths[0], paths[1])
	if code != 0 {
		t.Fatalf("diff: exit %d", code)
	}
	out := filepath.Join(dir, "diff.out.pb.gz")
	stderr, code, cpuPprof, rssPprof := runMeasured(t, dir, "diff", "--format", "json", "--output-pprof", out, paths[0], paths[1])
	if code != 0 {
		t.Fatalf("diff --output-pprof: exit %d: %s", code, stderr)
	}
	t.Logf("report %.1f MB (%v of CPU), with --output-pprof %.1f MB (%v)", float64(rssJSON)/1e6, cpuJSON, float64(rssPprof)/1e6, cpuPprof)
	if rssPprof > 2*rssJSON {
		t.Errorf("--output-pprof peaks at %.1f MB, more than twice the report's %.1f MB", float64(rssPprof)/1e6, float64(rssJSON)/1e6)
	}
	checkOutputPprof(t, out, paths[:1], paths[1:])
}
