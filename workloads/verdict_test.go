package workloads

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/workloads/loadgen"
)

func verdictOf(t *testing.T, v *report.Verdict) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.Report(&b, &report.Report{Verdict: v}, render.Table); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// sweepRun is a run of cores with rps requests/s and a lock-contention
// share.
func sweepRun(cores int, rps, lock float64) *Result {
	r := &Result{Config: RunConfig{Cores: cores, Out: "out"}, Kind: profile.KindWall,
		Load: &loadgen.Report{RPSOK: rps, Non2xx: map[string]int64{}}}
	r.Buckets[rules.LockContention], r.Buckets[rules.CPU] = lock, 1-lock
	return r
}

// Lock contention appears from the first core count where it is a point
// above the 1-core run; per-core requests/s at 8 cores is 40% of 1 core's;
// the peak and a failed run are named.
func TestSweepVerdict(t *testing.T) {
	failed := Failed(RunConfig{Cores: 16, Out: "out/cores-16"}, &ChildError{Reason: "child exited (status 2)"})
	rows := SweepRows([]*Result{sweepRun(1, 1000, 0.002), sweepRun(2, 1900, 0.008), sweepRun(4, 2560, 0.15), sweepRun(8, 3200, 0.41), failed})
	v := sweepVerdict(rows)
	got := verdictOf(t, v)
	want := "Verdict: lock-contention appears from 4 cores (0.20% at 1 core → 41.00% at 8 cores); requests/s per core falls to 40% of 1 core's at 8 cores.\n" +
		"Peak: 3200 requests/s at 8 cores.\n" +
		"The 16-core run failed: child exited (status 2).\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if v.Tone != report.ToneFail {
		t.Errorf("tone %v, want failure", v.Tone)
	}
	// The same conclusion as JSON's structured verdict.
	c := SweepConclusion(rows)
	if a := c.Appears; a == nil || a.Bucket != rules.LockContention || a.FromCores != 4 || a.FirstCores != 1 || a.TopCores != 8 || a.TopShare != 0.41 {
		t.Errorf("appears %+v", c.Appears)
	}
	if p := c.PerCore; p == nil || p.FirstCores != 1 || p.LastCores != 8 || p.Fraction < 0.399 || p.Fraction > 0.401 {
		t.Errorf("per core %+v", c.PerCore)
	}
	if c.PeakCores != 8 || c.PeakRequestsPerS != 3200 || len(c.Failed) != 1 || c.Failed[0].Cores != 16 || len(c.FailedRequests) != 0 {
		t.Errorf("peak %d at %g, failed %+v, failed requests %+v", c.PeakCores, c.PeakRequestsPerS, c.Failed, c.FailedRequests)
	}
	if wantSum := strings.ReplaceAll(strings.TrimPrefix(strings.TrimSuffix(want, "\n"), "Verdict: "), "\n", " "); c.Summary != wantSum {
		t.Errorf("summary %q, want %q", c.Summary, wantSum)
	}
}

// A sweep that scales: no bucket appears (one that rises a little is not
// one that appears), per-core requests/s holds, and
// the verdict's tone is neutral.
func TestSweepVerdictScales(t *testing.T) {
	runs := []*Result{sweepRun(1, 1000, 0.002), sweepRun(2, 2000, 0.004), sweepRun(4, 4200, 0.006)}
	// io rises by five points without doubling: it does not appear.
	for i, io := range []float64{0.60, 0.62, 0.65} {
		runs[i].Buckets[rules.IO], runs[i].Buckets[rules.CPU] = io, runs[i].Buckets[rules.CPU]-io
	}
	rows := SweepRows(runs)
	v := sweepVerdict(rows)
	got := verdictOf(t, v)
	if got != "Verdict: requests/s per core rises to 105% of 1 core's at 4 cores.\nPeak: 4200 requests/s at 4 cores.\n" || v.Tone != report.ToneNone {
		t.Errorf("got %q (tone %v)", got, v.Tone)
	}
	if sweepVerdict(nil) != nil {
		t.Error("an empty sweep has a verdict")
	}
}

// The wasm sweep's verdict is the lines of Verdict, in the tone of
// failure when a point failed.
func TestWasmVerdictLines(t *testing.T) {
	points := []WasmPoint{
		{Mode: ModeLoop, KeepResident: 0, RequestsPerS: 900},
		{Mode: ModeLoop, KeepResident: 1 << 20, RequestsPerS: 4700},
		WasmPointOf(ModeLoop, 2<<20, Failed(RunConfig{Out: "out/loop-keep-2"}, &ChildError{Reason: "child killed by signal 9 (killed)"})),
	}
	v := wasmVerdict(points)
	want := Verdict(points).Lines
	got := strings.Split(strings.TrimPrefix(strings.TrimSuffix(verdictOf(t, v), "\n"), "Verdict: "), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") || v.Tone != report.ToneFail {
		t.Errorf("got %q (tone %v), want %q", got, v.Tone, want)
	}
	if wasmVerdict(nil) != nil {
		t.Error("no points, a verdict")
	}
}
