package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/profdiff/profdiff/workloads"
	"github.com/profdiff/profdiff/workloads/wasmhost"
)

// runWasmWorkload is `profdiff workload wasm`: the plugin host at each
// keep-resident setting, in the instantiate loop and/or under concurrent
// HTTP load, each run with its own capture folder, then the side-by-side
// table and the verdict.
func runWasmWorkload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var wf workloadFlags
	var modes, keeps, format, touch string
	var cores, poolSize, pages int
	var cfg wasmhost.Config
	fs := newFlagSet("workload wasm", "  profdiff workload wasm [--mode loop,concurrent] [--keep-resident 0,64KiB,256KiB,1MiB,2MiB] [--connections 16] [--pool-size N]\n", stderr)
	fs.StringVar(&modes, "mode", "loop,concurrent", "loop (one goroutine instantiating in a loop, no HTTP), concurrent (HTTP under the load generator), or both")
	fs.StringVar(&keeps, "keep-resident", "0,64KiB,256KiB,1MiB,2MiB", "keep-resident settings to sweep (bytes memset on teardown, the rest madvised), e.g. 0,1MiB")
	fs.IntVar(&poolSize, "pool-size", wasmhost.DefaultPoolSize, "memory slots in the pool (Wasmtime's total_memories): more live instances are refused with 503")
	fs.IntVar(&pages, "pages", wasmhost.DefaultPages, "guest memory in 64 KiB pages")
	fs.StringVar(&touch, "touch", wasmhost.FormatSize(wasmhost.DefaultTouch), "bytes of its memory the guest touches per request")
	fs.DurationVar(&cfg.Timeout, "timeout", wasmhost.DefaultTimeout, "time limit of each guest call")
	fs.BoolVar(&cfg.Interpreter, "interpreter", false, "run the guest in wazero's interpreter instead of its compiler")
	fs.IntVar(&cores, "cores", runtime.NumCPU(), "GOMAXPROCS of the host (and CPUs it is pinned to)")
	fs.StringVar(&format, "format", "table", "table, markdown or json")
	wf.register(fs, 2)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "wasm" {
		return usagef("workload wasm: unexpected arguments %q", fs.Args())
	}
	if format != "table" && format != "markdown" && format != "json" {
		return usagef("--format: unknown format %q (want table, markdown or json)", format)
	}
	if err := wf.validate(); err != nil {
		return err
	}
	if cores < 1 {
		return usagef("--cores must be at least 1")
	}
	if poolSize < 1 {
		return usagef("--pool-size must be at least 1")
	}
	var ms []string
	for _, m := range strings.Split(modes, ",") {
		m = strings.TrimSpace(m)
		if m != workloads.ModeLoop && m != workloads.ModeConcurrent {
			return usagef("--mode: unknown mode %q (want loop, concurrent or loop,concurrent)", m)
		}
		if !contains(ms, m) {
			ms = append(ms, m)
		}
	}
	var ks []int64
	for _, k := range strings.Split(keeps, ",") {
		n, err := wasmhost.ParseSize(k)
		if err != nil {
			return usagef("--keep-resident: %v", err)
		}
		ks = append(ks, n)
	}
	t, err := wasmhost.ParseSize(touch)
	if err != nil {
		return usagef("--touch: %v", err)
	}
	cfg.PoolSize, cfg.Pages, cfg.Touch = poolSize, pages, int(t)
	// Check the host's settings here, once, rather than in every child.
	probe := cfg
	probe.PoolSize = 1
	if h, err := wasmhost.New(ctx, probe); err != nil {
		return usagef("%v", err)
	} else {
		h.Close()
	}
	conns := wf.connections
	if conns == 0 {
		conns = 16
	}
	dir, err := wf.outDir("wasm")
	if err != nil {
		return err
	}
	var points []workloads.WasmPoint
	for _, m := range ms {
		for _, k := range ks {
			c := cfg
			c.KeepResident = k
			name := fmt.Sprintf("%s-keep-%s", m, wasmhost.FormatSize(k))
			fmt.Fprintf(stderr, "profdiff workload wasm: %s, keep_resident %s, %v + %d s...\n", m, wasmhost.FormatSize(k), wf.warmup, wf.seconds)
			rc := workloads.RunConfig{
				Workload: "wasm", Variant: "pooling", Cores: cores, Connections: conns,
				Warmup: wf.warmup, Seconds: wf.seconds, Out: filepath.Join(dir, name), Log: stderr,
				Args: c.Args(), StatsPath: "/stats",
				Params: map[string]any{"mode": m, "keep_resident_bytes": k, "pool_size": poolSize, "pages": pages, "touch_bytes": t},
			}
			if m == workloads.ModeLoop {
				rc.Path, rc.Loop = "/loop", true
			} else {
				rc.Path = "/plugin"
			}
			res, err := workloads.Run(ctx, rc)
			if err != nil {
				return err
			}
			for _, w := range res.Load.Warnings() {
				fmt.Fprintf(stderr, "profdiff: warning: %s, keep_resident %s: %s\n", m, wasmhost.FormatSize(k), w)
			}
			points = append(points, workloads.WasmPointOf(m, k, res))
		}
	}
	if format != "json" {
		fmt.Fprintf(stdout, "wasm plugin host at %d cores: %s of guest memory, %s touched per request, pool of %d slots; concurrent mode with %d connections;\n%d s per run after %v warmup; capture folders under %s\n\n",
			cores, wasmhost.FormatSize(int64(pages*wasmhost.PageSize)), wasmhost.FormatSize(t), poolSize, conns, wf.seconds, wf.warmup, dir)
	}
	return workloads.WriteWasmSweep(stdout, points, format)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
