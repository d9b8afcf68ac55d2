package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/workloads"
)

// A one-run sweep of the global-lock server projected to 8 cores: the
// JSON has a projection labelled as one, the lock measured by the server
// (three acquisitions per request, one lock, a hold time), the USL not
// fitted (one point) with the reason, a peak cause and the assumptions;
// the table says PROJECTION.
func TestWorkloadJSONProject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, stderr, code := profdiff(t, "", "workload", "json", "--variant", "global-lock", "--cores", "1", "--project", "8", "--duration", "1s",
		"--warmup", "100ms", "--connections", "16", "--perf=false", "--format", "json", "--out", filepath.Join(dir, "json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Runs       []workloads.SweepRow  `json:"runs"`
		Projection *workloads.Projection `json:"projection"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p := doc.Projection
	if p == nil || p.Label != workloads.ProjectionLabel || p.ToCores != 8 || len(doc.Runs) != 1 {
		t.Fatalf("projection %+v\n%s", p, out)
	}
	// Three acquisitions a request, up to the requests in flight when the
	// window's counters are read: at most --connections at each end.
	const conns = 16
	if l := p.Lock; l == nil || l.Shards != 1 || l.Requests == 0 || math.Abs(l.AcquisitionsPerRequest-3) > 2*3*conns/float64(l.Requests) ||
		l.HoldUS <= 0 || l.TimedHolds == 0 || l.BusiestShare != 1 {
		t.Errorf("lock measure %+v (not measured: %q)", p.Lock, p.LockWhyNot)
	}
	if p.USL != nil || !strings.Contains(p.USLWhyNot, "1 successful point(s)") || p.Cause == "" || len(p.Assumptions) == 0 ||
		p.Curve[len(p.Curve)-1].Cores != 8 || p.DemandUS <= 0 {
		t.Errorf("projection %+v", p)
	}
	if _, ok := doc.Runs[0].Buckets["cpu"]; !ok {
		t.Errorf("runs lost their buckets: %+v", doc.Runs)
	}

	out, stderr, code = profdiff(t, "", "workload", "json", "--variant", "sharded", "--cores", "1", "--project", "64", "--duration", "1s",
		"--warmup", "100ms", "--connections", "16", "--perf=false", "--out", filepath.Join(dir, "sharded"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{workloads.ProjectionLabel + " to 64 cores: ", "Assumptions:", "USL not fitted: ", "shards per core"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "projected peak (lock)") {
		t.Errorf("the sharded server projects a lock-bound peak below 64 cores:\n%s", out)
	}
}

// Two runs of a sweep each hold a perf recording (where perf can record),
// and profdiff diff --kind perf diffs the two folders' recordings.
func TestWorkloadPerfDiff(t *testing.T) {
	t.Parallel()
	if st := capture.ProbePerf(); st.Err != nil {
		t.Skipf("perf cannot record here: %v", st.Err)
	}
	// A recording the capture notes as spoiled (perf missed most of its
	// window, or lost events) is made again, once; the notes are in the
	// failure message. (Before runs waited for perf to be ready, a busy
	// machine made its enable late by up to the whole window, twice in
	// .ci/run.)
	var dir, log string
	for try := 1; ; try++ {
		dir = t.TempDir()
		_, stderr, code := profdiff(t, "", "workload", "json", "--cores", "1,2", "--duration", "1s", "--warmup", "100ms", "--connections", "16", "--out", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		log = stderr
		spoiled := perfSpoiled(t, filepath.Join(dir, "cores-1"), filepath.Join(dir, "cores-2"))
		if spoiled == "" {
			break
		}
		if try == 2 {
			t.Fatalf("both sweeps' perf recordings were spoiled, the second: %s\n%s", spoiled, log)
		}
		t.Logf("sweep %d: %s; sweeping again", try, spoiled)
	}
	out, stderr, code := profdiff(t, "", "diff", "--kind", "perf", filepath.Join(dir, "cores-1"), filepath.Join(dir, "cores-2"))
	if code != 0 {
		t.Fatalf("diff --kind perf: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"base: cores-1/" + capture.PerfFile, "new:  cores-2/" + capture.PerfFile, "sample type cpu-clock/nanoseconds"} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q:\n%s\nthe sweep said:\n%s", want, out, log)
		}
	}
}

// perfSpoiled is the first capture note in dirs that says its perf
// recording missed most of its window or lost events, with its folder;
// "" when there is none.
func perfSpoiled(t *testing.T, dirs ...string) string {
	t.Helper()
	for _, d := range dirs {
		m, err := capture.ReadManifest(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range m.Notes {
			if strings.Contains(n, "span only") || strings.Contains(n, "perf: perf says") {
				return filepath.Base(d) + ": " + n
			}
		}
	}
	return ""
}
