// The workloads' tables (core-count sweep, wasm sweep, load report) are
// laid out by this package like every other report; their golden files
// live here with the others. An external test package, since workloads
// imports render.
package render_test

import (
	"bytes"
	"testing"

	"github.com/profdiff/profdiff/diff/internal/golden"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/workloads"
	"github.com/profdiff/profdiff/workloads/loadgen"
)

// sampleSweep is a fixed 1/2/4-core sweep: it peaks at 2 cores, and the
// 4-core run had failed requests.
func sampleSweep() []workloads.SweepRow {
	run := func(cores int, rps, p99, cpu float64, non2xx int64, lock, wait, gc float64) *workloads.Result {
		r := &workloads.Result{
			Config: workloads.RunConfig{Cores: cores, Out: "out/cores-" + string(rune('0'+cores))},
			Load: &loadgen.Report{RPSOK: rps, LatencyMS: loadgen.Latency{P99: p99}, ServerCPUPerRequestUS: cpu,
				Non2xx: map[string]int64{}},
			Kind: profile.KindWall,
		}
		if non2xx > 0 {
			r.Load.Non2xx["503"] = non2xx
		}
		r.Buckets[rules.CPU] = 1 - lock - wait - gc
		r.Buckets[rules.LockContention], r.Buckets[rules.Wait], r.Buckets[rules.GC] = lock, wait, gc
		return r
	}
	return workloads.SweepRows([]*workloads.Result{
		run(1, 10500, 1.234, 88.25, 0, 0.01, 0.40, 0.05),
		run(2, 19800.4, 2.5, 91.04, 0, 0.0486, 0.35, 0.06),
		run(4, 15000, 40.125, 140.55, 12, 0.3021, 0.2, 0.08),
	})
}

func TestSweepRenders(t *testing.T) {
	for _, f := range []string{"table", "markdown", "json"} {
		var b bytes.Buffer
		if err := workloads.WriteSweep(&b, sampleSweep(), f); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "./diff/render", "sweep."+f, b.Bytes())
	}
}

// Fixed points: the loop prefers 1MiB, concurrency prefers 2MiB, and one
// concurrent point has pool refusals.
func samplePoints() []workloads.WasmPoint {
	return []workloads.WasmPoint{
		{Mode: workloads.ModeLoop, KeepResident: 0, Connections: 1, RequestsPerS: 900, CPUPerRequestUS: 1100, P99MS: 2.5, FaultsPerRequest: 272},
		{Mode: workloads.ModeLoop, KeepResident: 1 << 20, Connections: 1, RequestsPerS: 4700, CPUPerRequestUS: 196, P99MS: 0.8, FaultsPerRequest: 16},
		{Mode: workloads.ModeLoop, KeepResident: 2 << 20, Connections: 1, RequestsPerS: 4100, CPUPerRequestUS: 150, P99MS: 1, FaultsPerRequest: 0.2},
		{Mode: workloads.ModeConcurrent, KeepResident: 0, Connections: 16, RequestsPerS: 700, CPUPerRequestUS: 1200, P99MS: 40, FaultsPerRequest: 280},
		{Mode: workloads.ModeConcurrent, KeepResident: 1 << 20, Connections: 16, RequestsPerS: 3000, CPUPerRequestUS: 280, P99MS: 12, Errors: 120, PoolRefused: 130, FaultsPerRequest: 17},
		{Mode: workloads.ModeConcurrent, KeepResident: 2 << 20, Connections: 16, RequestsPerS: 3600, CPUPerRequestUS: 230, P99MS: 9, FaultsPerRequest: -1},
	}
}

func TestWasmSweepRenders(t *testing.T) {
	for _, f := range []string{"table", "markdown", "json"} {
		var b bytes.Buffer
		if err := workloads.WriteWasmSweep(&b, samplePoints(), f); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "./diff/render", "wasm-sweep."+f, b.Bytes())
	}
}

// The human report, clean and with every kind of trouble: failed
// requests, socket errors with examples, reconnects and warmup failures.
func TestReportTextGolden(t *testing.T) {
	clean := &loadgen.Report{
		URL: "http://127.0.0.1:8080/", Engine: "epoll", Connections: 16, ConnectionsOpened: 16,
		DurationS: 5, Sent: 52000, OK: 52000, Non2xx: map[string]int64{}, RPSOK: 10400,
		LatencyMS: loadgen.Latency{P50: 0.5, P90: 1.25, P99: 3.0625, Max: 12}, ServerCPUPerRequestUS: 96.125,
		WarmupS: 1, TimeoutS: 2.5,
	}
	troubled := &loadgen.Report{
		URL: "http://127.0.0.1:8080/plugin", Connections: 8, ConnectionsOpened: 11,
		DurationS: 2.004, Sent: 900, OK: 850, Non2xx: map[string]int64{"503": 30, "500": 5}, SocketErrors: 15,
		SocketErrorKinds:    map[string]int64{"read": 10, "connect": 5},
		SocketErrorExamples: map[string]string{"read": "connection reset by peer", "connect": "connection refused"},
		RPSOK:               424.15, LatencyMS: loadgen.Latency{P50: 10, P90: 20.5, P99: 40.123, Max: 99.9999},
		WarmupS: 0.3, WarmupFailed: 3, TimeoutS: 0.1234567,
	}
	for name, r := range map[string]*loadgen.Report{"clean": clean, "troubled": troubled} {
		var b bytes.Buffer
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "./diff/render", "load-report."+name+".txt", b.Bytes())
	}
}
