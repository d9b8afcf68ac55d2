package workloads

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

func runWasm(t *testing.T, mode string, cfg wasmhost.Config, conns int, log *syncBuf) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rc := RunConfig{
		Workload: "wasm", Variant: "pooling", Cores: 2, Connections: conns, Path: "/plugin",
		Warmup: 300 * time.Millisecond, Seconds: 1, Out: filepath.Join(t.TempDir(), mode),
		Args: cfg.Args(), StatsPath: "/stats", Log: log,
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
// that load.
func TestWasmWorkloadModes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and drives load for a few seconds")
	}
	cfg := wasmhost.Config{KeepResident: 64 << 10, Pages: 4, Touch: 128 << 10}
	for _, mode := range []string{ModeLoop, ModeConcurrent} {
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
