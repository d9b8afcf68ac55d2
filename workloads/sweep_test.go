package workloads

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/workloads/loadgen"
)

// A sweep whose first run failed: that row says why, with no numbers;
// efficiency is relative to the first run that did not fail, and the peak
// is among those.
func TestSweepFailedRow(t *testing.T) {
	ok := func(cores int, rps float64) *Result {
		r := &Result{Config: RunConfig{Cores: cores, Out: "out"}, Kind: profile.KindCPU,
			Load: &loadgen.Report{RPSOK: rps, LatencyMS: loadgen.Latency{P99: 1.5}, Non2xx: map[string]int64{}}}
		r.Buckets[rules.CPU] = 1
		return r
	}
	failed := Failed(RunConfig{Cores: 1, Out: "out/cores-1"}, &ChildError{Reason: "child exited (status 2)"})
	rows := SweepRows([]*Result{failed, ok(2, 1000), ok(4, 3000)})
	if rows[0].Failed != "child exited (status 2)" || rows[0].Peak || rows[0].Efficiency != 0 || rows[0].Folder != "out/cores-1" {
		t.Errorf("failed row %+v", rows[0])
	}
	if rows[1].Efficiency != 1 || rows[2].Efficiency != 1.5 || !rows[2].Peak || rows[1].Peak {
		t.Errorf("rows %+v", rows[1:])
	}
	var b bytes.Buffer
	if err := WriteSweep(&b, rows, "table"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var failedLine string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "failed: ") {
			failedLine = l
		}
	}
	if !strings.Contains(failedLine, "│     1 │          – │") || !strings.HasSuffix(strings.TrimRight(failedLine, "│ "), "failed: child exited (status 2)") ||
		strings.Contains(failedLine, "0.00%") {
		t.Errorf("failed row %q in\n%s", failedLine, out)
	}
	if !strings.Contains(out, "Bucket shares from each run's CPU profile. Efficiency: requests/s per core relative to 2 core(s).") {
		t.Errorf("note:\n%s", out)
	}
	js, _ := json.Marshal(rows)
	if !strings.Contains(string(js), `"failed":"child exited (status 2)"`) || strings.Count(string(js), `"failed"`) != 1 {
		t.Errorf("JSON: %s", js)
	}
}

// A failed run of the wasm sweep is a failed point: "failed" in its cells,
// a verdict line with the reason, and no part in choosing the winner.
func TestWasmSweepFailedPoint(t *testing.T) {
	failed := WasmPointOf(ModeLoop, 0, Failed(RunConfig{Out: "out/loop-keep-0"}, &ChildError{Reason: "child killed by signal 9 (killed)"}))
	if failed.Failed != "child killed by signal 9 (killed)" || failed.RequestsPerS != 0 || failed.Folder != "out/loop-keep-0" {
		t.Errorf("point %+v", failed)
	}
	points := []WasmPoint{failed, {Mode: ModeLoop, KeepResident: 1 << 20, Connections: 1, RequestsPerS: 500, FaultsPerRequest: 3}}
	v := Verdict(points)
	if v.LoopWinner != 1<<20 || !slices.Contains(v.Lines, "loop, keep_resident 0: failed: child killed by signal 9 (killed).") {
		t.Errorf("verdict %+v", v)
	}
	var b bytes.Buffer
	if err := WriteWasmSweep(&b, points, "markdown"); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "|             0 |") {
			row = l
		}
	}
	if strings.Count(row, " – |") != 4 || !strings.Contains(row, " failed |") {
		t.Errorf("failed row %q in\n%s", row, b.String())
	}
}
