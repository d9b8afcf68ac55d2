package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The test binary doubles as the workload child (see child.MaybeRun), for
// the tests that run built-in workloads.
func TestMain(m *testing.M) {
	runLauncherIfAsked()
	runChildIfAsked()
	runDocsCommandIfAsked()
	os.Exit(m.Run())
}

func TestWasmWorkloadUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"workload", "wasm", "--mode", "burst"},
		{"workload", "wasm", "--keep-resident", "0,lots"},
		{"workload", "wasm", "--pool-size", "0"},
		{"workload", "wasm", "--pages", "4", "--touch", "1MiB"},
		{"workload", "wasm", "--format", "csv"},
		{"workload", "wasm", "extra"},
	} {
		_, stderr, code := profdiff(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "profdiff: ") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with a message", args, code, stderr)
		}
	}
}

// A short real sweep: two keep-resident settings in both modes, each with
// its capture folder; the table has both modes side by side and the
// verdict lines; the JSON form carries the same points.
func TestWasmWorkloadSweep(t *testing.T) {
	t.Parallel() // seconds of wall time, overlapping the doc examples
	if testing.Short() {
		t.Skip("runs the wasm host for a few seconds")
	}
	dir := t.TempDir()
	// One keep-resident setting in both modes: the order of a longer sweep
	// and the verdict's ranking are covered by the workloads package and
	// the manual's two-point example.
	out, stderr, code := profdiff(t, "", "workload", "wasm", "--keep-resident", "256KiB", "--pages", "4", "--touch", "128KiB",
		"--connections", "4", "--duration", "1s", "--warmup", "200ms", "--cores", "2", "--format", "json", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Points []struct {
			Mode         string  `json:"mode"`
			KeepResident int64   `json:"keep_resident_bytes"`
			RequestsPerS float64 `json:"requests_per_s"`
			Errors       int64   `json:"errors"`
			Folder       string  `json:"folder"`
		} `json:"points"`
		Verdict struct {
			Lines []string `json:"lines"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []string{"loop/262144", "concurrent/262144"}
	if len(res.Points) != len(want) {
		t.Fatalf("%d points, want %d: %s", len(res.Points), len(want), out)
	}
	for i, p := range res.Points {
		if key := p.Mode + "/" + strconv.FormatInt(p.KeepResident, 10); key != want[i] {
			t.Errorf("point %d is %s, want %s", i, key, want[i])
		}
		if p.RequestsPerS <= 0 || p.Errors != 0 {
			t.Errorf("point %d: %+v", i, p)
		}
		if _, err := os.Stat(filepath.Join(p.Folder, "manifest.json")); err != nil {
			t.Errorf("point %d: %v", i, err)
		}
	}
	if len(res.Verdict.Lines) < 3 || !strings.Contains(strings.Join(res.Verdict.Lines, "\n"), "under concurrency") {
		t.Errorf("verdict %q", res.Verdict.Lines)
	}
	if !strings.Contains(stderr, "wasm host: pool of 1000 slots of 256KiB, keep-resident 256KiB") {
		t.Errorf("the host's settings line is missing from stderr:\n%s", stderr)
	}
}
