package workloads

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
)

// TestRunRecordsPerf: where perf can record, a workload run's capture
// folder holds the child's perf script text beside the Go profiles, with
// what it recorded in the manifest, and profdiff loads it as a CPU
// profile with kernel frames (the loopback network stack the server
// spends its time in).
//
// It runs in parallel with the other parallel tests of the package, which
// mostly wait too: after the window, perf's own exit and perf script take
// a second or two.
func TestRunRecordsPerf(t *testing.T) {
	t.Parallel()
	if st := capture.ProbePerf(); st.Err != nil {
		t.Skipf("perf cannot record here: %v", st.Err)
	}
	res := runJSON(t, "baseline", 1, true)
	f, ok := res.Manifest.File(capture.PerfKind)
	if !ok {
		t.Fatalf("no perf file (notes %q, errors %q)", res.Manifest.Notes, res.Manifest.Errors)
	}
	if f.Path != capture.PerfFile || f.Samples == 0 || len(f.Events) == 0 || f.Events[0] != "cpu-clock" ||
		!strings.Contains(f.Command, "-p ") || !strings.Contains(f.Command, "-e cpu-clock") {
		t.Errorf("perf entry %+v", f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := profile.Load(ctx, filepath.Join(res.Config.Out, f.Path), profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != profile.KindCPU {
		t.Errorf("perf text loaded as kind %s", l.Kind)
	}
	kernel := false
	for _, s := range l.Profile.Sample {
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil && strings.Contains(ln.Function.Name, "tcp_") {
					kernel = true
				}
			}
		}
	}
	if !kernel {
		t.Error("no kernel TCP frame in the server's perf recording")
	}
}
