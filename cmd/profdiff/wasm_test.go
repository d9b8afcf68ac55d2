package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/render/browser"
	"github.com/profdiff/profdiff/diff/wait/waittest"
)

// The test binary doubles as the workload child (see child.MaybeRun), for
// the tests that run built-in workloads.
func TestMain(m *testing.M) {
	runLauncherIfAsked()
	runChildIfAsked()
	runDocsCommandIfAsked()
	code := waittest.Main(m) // m.Run, then remove the wait test program's runs
	removeFixtures()
	browser.Close() // the Chromium of the html tests
	os.Exit(code)
}

func TestWasmWorkloadUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"workload", "wasm", "--mode", "burst"},
		{"workload", "wasm", "--keep-resident", "0,lots"},
		{"workload", "wasm", "--pool-size", "0"},
		{"workload", "wasm", "--pages", "4", "--touch", "1MiB"},
		{"workload", "wasm", "--format", "csv"},
		{"workload", "wasm", "extra"},
		{"workload", "wasm", "--modules", "0"},
		{"workload", "wasm", "--modules", "1,x"},
		{"workload", "wasm", "--touch", "16KiB,lots"},
		{"workload", "wasm", "--max-unused-warm-slots", "-1"},
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
		"--connections", "4", "--duration", "1s", "--warmup", "200ms", "--cores", "2", "--perf=false", "--format", "json", "--out", dir)
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

// A real grid: two working sets by one and two modules in the loop. Each
// cell has its folder and its points carry the cell; two modules lease two
// slots where one module reuses one; the verdict names each cell and
// counts the reversals.
func TestWasmWorkloadGrid(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the wasm host for a few seconds")
	}
	dir := t.TempDir()
	out, stderr, code := profdiff(t, "", "workload", "wasm", "--mode", "loop", "--keep-resident", "128KiB", "--pages", "4", "--touch", "16KiB,64KiB",
		"--modules", "1,2", "--duration", "1s", "--warmup", "50ms", "--cores", "1", "--perf=false", "--format", "json", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Points []struct {
			Touch        int64   `json:"touch_bytes"`
			Modules      int     `json:"modules"`
			KeepResident int64   `json:"keep_resident_bytes"`
			RequestsPerS float64 `json:"requests_per_s"`
			SlotsTouched int     `json:"slots_touched"`
			Folder       string  `json:"folder"`
		} `json:"points"`
		Verdict struct {
			Lines []string `json:"lines"`
			Cells []struct {
				Touch      int64 `json:"touch_bytes"`
				Modules    int   `json:"modules"`
				LoopWinner int64 `json:"loop_winner"`
			} `json:"cells"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Points) != 4 || len(res.Verdict.Cells) != 4 {
		t.Fatalf("%d points, %d cells; want 4 and 4:\n%s", len(res.Points), len(res.Verdict.Cells), out)
	}
	for i, p := range res.Points {
		wantTouch, wantModules := []int64{16 << 10, 64 << 10}[i/2], []int{1, 2}[i%2]
		if p.Touch != wantTouch || p.Modules != wantModules || p.RequestsPerS <= 0 {
			t.Errorf("point %d: %+v; want touch %d, %d modules", i, p, wantTouch, wantModules)
		}
		if p.SlotsTouched != p.Modules {
			t.Errorf("point %d: %d slots leased by one goroutine over %d modules round robin, want one per module", i, p.SlotsTouched, p.Modules)
		}
		wantDir := filepath.Join(dir, fmt.Sprintf("touch-%dKiB-modules-%d", p.Touch>>10, p.Modules))
		if !strings.HasPrefix(p.Folder, wantDir) {
			t.Errorf("point %d in %s, want under %s", i, p.Folder, wantDir)
		}
		if _, err := os.Stat(filepath.Join(p.Folder, "manifest.json")); err != nil {
			t.Error(err)
		}
	}
	all := strings.Join(res.Verdict.Lines, "\n")
	for _, want := range []string{"touch 16KiB, 1 module: loop", "touch 64KiB, 2 modules: loop"} {
		if !strings.Contains(all, want) {
			t.Errorf("verdict lacks %q:\n%s", want, all)
		}
	}
}
