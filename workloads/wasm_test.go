package workloads

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/workloads/wasmhost"
)

// Fixed points (the same as diff/render's wasm-sweep golden test): the loop prefers 1MiB, concurrency prefers 2MiB, and one
// concurrent point has pool refusals.
func samplePoints() []WasmPoint {
	return []WasmPoint{
		{Mode: ModeLoop, KeepResident: 0, Connections: 1, RequestsPerS: 900, CPUPerRequestUS: 1100, P99MS: 2.5, FaultsPerRequest: 272},
		{Mode: ModeLoop, KeepResident: 1 << 20, Connections: 1, RequestsPerS: 4700, CPUPerRequestUS: 196, P99MS: 0.8, FaultsPerRequest: 16},
		{Mode: ModeLoop, KeepResident: 2 << 20, Connections: 1, RequestsPerS: 4100, CPUPerRequestUS: 150, P99MS: 1, FaultsPerRequest: 0.2},
		{Mode: ModeConcurrent, KeepResident: 0, Connections: 16, RequestsPerS: 700, CPUPerRequestUS: 1200, P99MS: 40, FaultsPerRequest: 280},
		{Mode: ModeConcurrent, KeepResident: 1 << 20, Connections: 16, RequestsPerS: 3000, CPUPerRequestUS: 280, P99MS: 12, Errors: 120, PoolRefused: 130, FaultsPerRequest: 17},
		{Mode: ModeConcurrent, KeepResident: 2 << 20, Connections: 16, RequestsPerS: 3600, CPUPerRequestUS: 230, P99MS: 9, FaultsPerRequest: -1},
	}
}

func TestWasmVerdict(t *testing.T) {
	v := Verdict(samplePoints())
	if v.LoopWinner != 1<<20 || v.ConcurrentWinner != 2<<20 {
		t.Fatalf("winners %d, %d", v.LoopWinner, v.ConcurrentWinner)
	}
	all := strings.Join(v.Lines, "\n")
	for _, want := range []string{
		"loop (1 goroutine, no HTTP): keep_resident 1MiB wins with 4700 requests/s, 15% ahead of keep_resident 2MiB and 5.2x the worst, keep_resident 0.",
		"concurrent (16 connections): keep_resident 2MiB wins",
		"The loop's winner does NOT win under concurrency: keep_resident 1MiB ranks 2 of 3 there, 17% below 2MiB.",
		"concurrent, keep_resident 1MiB: 120 requests failed (130 refused by the full pool)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("verdict lacks %q:\n%s", want, all)
		}
	}
	same := samplePoints()
	same[5].RequestsPerS = 100
	if v := Verdict(same); !strings.Contains(strings.Join(v.Lines, "\n"), "also wins under concurrency") {
		t.Errorf("same winner: %q", v.Lines)
	}
	if v := Verdict(same[:3]); v.ConcurrentWinner != -1 || len(v.Lines) != 1 {
		t.Errorf("loop only: %+v", v)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runWasm runs the wasm host in mode for a 1 s window after a 100 ms
// warmup, without perf (TestRunRecordsPerf covers the recording; perf's
// exit and perf script would add seconds to every run).
func runWasm(t *testing.T, mode string, cfg wasmhost.Config, conns int, log *syncBuf) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rc := RunConfig{
		Workload: "wasm", Variant: "pooling", Cores: 2, Connections: conns, Path: "/plugin",
		Warmup: 100 * time.Millisecond, Seconds: 1, Out: filepath.Join(t.TempDir(), mode),
		Args: cfg.Args(), StatsPath: "/stats", Log: log, NoPerf: true,
	}
	if mode == ModeLoop {
		rc.Path, rc.Loop = "/loop", true
	}
	res, err := Run(ctx, rc)
	if err != nil {
		t.Fatalf("%s: %v\nlog:\n%s", mode, err, log.String())
	}
	return res
}

// Loop and concurrent modes end to end, short: both serve requests, write a
// manifest with the host's stats and capture CPU and wall-clock profiles
// that load. By default only the loop mode runs: the concurrent mode's path
// (HTTP load, the host's stats, WasmPointOf) is that of
// TestWasmPoolCapacityIsALoggedError and of the JSON server's runs;
// PROFDIFF_TEST_LONG runs both.
func TestWasmWorkloadModes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and drives load for a few seconds")
	}
	cfg := wasmhost.Config{KeepResident: 64 << 10, Pages: 4, Touch: 128 << 10}
	modes := []string{ModeLoop}
	if longTests() {
		modes = append(modes, ModeConcurrent)
	}
	for _, mode := range modes {
		var log syncBuf
		r := runWasm(t, mode, cfg, 4, &log)
		if r.Load.OK == 0 || r.Load.Failed() != 0 {
			t.Errorf("%s: load %+v\nlog:\n%s", mode, r.Load, log.String())
		}
		if r.Load.ServerCPUPerRequestUS <= 0 {
			t.Errorf("%s: no CPU per request", mode)
		}
		p := WasmPointOf(mode, cfg.KeepResident, r)
		if p.RequestsPerS != r.Load.RPSOK || p.PoolRefused != 0 || p.FaultsPerRequest < 0 {
			t.Errorf("%s: point %+v", mode, p)
		}
		if _, ok := r.Manifest.Params["server_stats"]; !ok {
			t.Errorf("%s: manifest has no server_stats", mode)
		}
		for _, k := range []string{"cpu", "wall"} {
			f, ok := r.Manifest.File(k)
			if !ok {
				t.Errorf("%s: no %s profile (errors %q)", mode, k, r.Manifest.Errors)
				continue
			}
			if _, err := profile.Load(context.Background(), filepath.Join(r.Config.Out, f.Path), profile.Options{}); err != nil {
				t.Errorf("%s: %v", mode, err)
			}
		}
		if _, err := os.Stat(filepath.Join(r.Config.Out, "manifest.json")); err != nil {
			t.Error(err)
		}
	}
}

// A pool smaller than the connections refuses requests: they are counted as
// errors (503s, not throughput), the host logs the limit with a running
// count, and its own refusal count covers the load generator's.
func TestWasmPoolCapacityIsALoggedError(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and drives load")
	}
	var log syncBuf
	r := runWasm(t, ModeConcurrent, wasmhost.Config{PoolSize: 2, Pages: 4, Touch: 128 << 10}, 8, &log)
	n503 := r.Load.Non2xx["503"]
	if n503 == 0 || r.Load.Failed() != n503 {
		t.Fatalf("non-2xx %v, failed %d: want only 503s, some", r.Load.Non2xx, r.Load.Failed())
	}
	p := WasmPointOf(ModeConcurrent, 0, r)
	if p.Errors != n503 || p.PoolRefused < n503 {
		t.Errorf("point %+v: errors should be the 503s (%d), the pool's refusals at least that", p, n503)
	}
	out := log.String()
	if !strings.Contains(out, "plugin pool full: all 2 memory slots are in use (the pool's size") || !strings.Contains(out, "so far") {
		t.Errorf("no pool-full log line with a running count; log:\n%s", out)
	}
	if !strings.Contains(out, "pool-full: ") || !strings.Contains(out, "request(s) failed in all") {
		t.Errorf("no pool-full summary at shutdown; log:\n%s", out)
	}
	if ws := r.Load.Warnings(); len(ws) == 0 || !strings.Contains(ws[0], "this is not saturation") {
		t.Errorf("report warnings %q", ws)
	}
}

// Over a grid, every cell gets its verdict lines and outcome, a reversal
// says by how much, one under NoisePct is called noise, and the last line
// counts the cells that reverse.
func TestWasmGridVerdict(t *testing.T) {
	pt := func(touch int64, modules int, mode string, keep int64, rps float64) WasmPoint {
		return WasmPoint{Mode: mode, KeepResident: keep, Touch: touch, Modules: modules, Connections: 16, RequestsPerS: rps, FaultsPerRequest: 1}
	}
	points := []WasmPoint{
		// 16KiB×1: same winner (0) in both modes.
		pt(16<<10, 1, ModeLoop, 0, 9000), pt(16<<10, 1, ModeLoop, 2<<20, 6000),
		pt(16<<10, 1, ModeConcurrent, 0, 7000), pt(16<<10, 1, ModeConcurrent, 2<<20, 4000),
		// 256KiB×8: the loop prefers 2MiB, concurrency 0 by 40%.
		pt(256<<10, 8, ModeLoop, 0, 2000), pt(256<<10, 8, ModeLoop, 2<<20, 2400),
		pt(256<<10, 8, ModeConcurrent, 0, 3000), pt(256<<10, 8, ModeConcurrent, 2<<20, 1800),
		// 1MiB×8: reversed by 2%: noise.
		pt(1<<20, 8, ModeLoop, 0, 600), pt(1<<20, 8, ModeLoop, 2<<20, 2400),
		pt(1<<20, 8, ModeConcurrent, 0, 2500), pt(1<<20, 8, ModeConcurrent, 2<<20, 2450),
	}
	v := Verdict(points)
	if len(v.Cells) != 3 {
		t.Fatalf("%d cells, want 3: %+v", len(v.Cells), v.Cells)
	}
	c := v.Cells[1]
	if !c.Reversed || c.WithinNoise || c.LoopWinner != 2<<20 || c.ConcurrentWinner != 0 || c.LossPct < 39.9 || c.LossPct > 40.1 || c.LoopGainPct < 19.9 || c.LoopGainPct > 20.1 {
		t.Errorf("cell 256KiB×8: %+v; want reversed by 40%%, the loop's winner 20%% ahead in the loop", c)
	}
	if v.Cells[0].Reversed || !v.Cells[2].Reversed || !v.Cells[2].WithinNoise {
		t.Errorf("cells: %+v", v.Cells)
	}
	all := strings.Join(v.Lines, "\n")
	for _, want := range []string{
		"touch 16KiB, 1 module: The loop's winner also wins under concurrency.",
		"touch 256KiB, 8 modules: The loop's winner does NOT win under concurrency: keep_resident 2MiB ranks 2 of 2 there, 40% below 0.",
		"touch 1MiB, 8 modules: The loop's winner does NOT win under concurrency: keep_resident 2MiB ranks 2 of 2 there, 2% below 0 (under 5%: within run-to-run noise).",
		"The loop's winner loses under concurrency by 5% or more in 1 of 3 cells: touch 256KiB, 8 modules (−40%).",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("verdict lacks %q:\n%s", want, all)
		}
	}
	if v := Verdict(points[:4]); len(v.Cells) != 1 || strings.Contains(strings.Join(v.Lines, "\n"), "touch ") {
		t.Errorf("one cell: lines name it: %q", v.Lines)
	}
	// The table leads each row with its cell; the charts add the grid's
	// reversal chart with one bar per cell (100, 60, 98).
	rep := WasmSweepReport(points)
	tbl := rep.Blocks[0].(*report.Table)
	if tbl.Columns[0].Name != "touch" || tbl.Columns[1].Name != "modules" || len(tbl.Rows) != 6 {
		t.Errorf("grid table: columns %v, %d rows", tbl.Columns[:3], len(tbl.Rows))
	}
	last := rep.Blocks[len(rep.Blocks)-1].(*report.Chart)
	var ys []float64
	for _, p := range last.Series[0].Points {
		ys = append(ys, math.Round(p.Y))
	}
	if !strings.Contains(last.Title, "by cell") || fmt.Sprint(ys) != "[100 60 98]" {
		t.Errorf("reversal chart %q: %v, want [100 60 98]", last.Title, ys)
	}
}
