package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/workloads"
	"github.com/profdiff/profdiff/workloads/wasmhost"
)

// wasmFlags are the flags of `profdiff workload wasm`.
type wasmFlags struct {
	wf                   workloadFlags
	modes, keeps, touch  string
	modules              string
	maxWarm              int
	out                  outputFlags
	cores, poolSize, pgs int
	host                 wasmhost.Config // Timeout and Interpreter
}

// wasmSweep is the validated sweep: which runs, on what host.
type wasmSweep struct {
	wf    workloadFlags
	modes []string
	keeps []int64
	// cells are the grid's (working set, modules) pairs, touch outermost.
	cells []wasmCell
	cores int
	conns int
	host  wasmhost.Config // all but KeepResident, Touch and Modules, which each run sets
}

// wasmCell is one (working set, modules) pair of the grid.
type wasmCell struct {
	touch   int64
	modules int
}

// dir is the cell's folder under the sweep's ("touch-16KiB-modules-8"),
// "" when the sweep has one cell.
func (sw *wasmSweep) cellDir(c wasmCell) string {
	if len(sw.cells) == 1 {
		return ""
	}
	return fmt.Sprintf("touch-%s-modules-%d", wasmhost.FormatSize(c.touch), c.modules)
}

// workloadWasmCommand is `profdiff workload wasm`: the plugin host at each
// keep-resident setting, in the instantiate loop and/or under concurrent
// HTTP load, each run with its own capture folder, then the side-by-side
// table and the verdict.
func workloadWasmCommand(fs *flag.FlagSet) runFunc {
	var f wasmFlags
	fs.StringVar(&f.modes, "mode", "loop,concurrent", "loop (one goroutine instantiating in a loop, no HTTP), concurrent (HTTP under the load generator), or both")
	fs.StringVar(&f.keeps, "keep-resident", "0,64KiB,256KiB,1MiB,2MiB", "keep-resident settings to sweep (bytes memset on teardown, the rest madvised), e.g. 0,1MiB")
	fs.IntVar(&f.poolSize, "pool-size", wasmhost.DefaultPoolSize, "memory slots in the pool (Wasmtime's total_memories): more live instances are refused with 503")
	fs.IntVar(&f.pgs, "pages", wasmhost.DefaultPages, "guest memory in 64 KiB pages")
	fs.StringVar(&f.touch, "touch", wasmhost.FormatSize(wasmhost.DefaultTouch), "bytes of its memory the guest touches per request; a list sweeps them, e.g. 16KiB,256KiB,1MiB")
	fs.StringVar(&f.modules, "modules", "1", "plugin modules sharing the pool, requests spread over them round robin; a list sweeps them, e.g. 1,8")
	fs.IntVar(&f.maxWarm, "max-unused-warm-slots", wasmhost.DefaultMaxUnusedWarmSlots, "free slots that may stay bound to other modules before a module takes one of theirs (Wasmtime's max_unused_warm_slots)")
	durationVar(fs, &f.host.Timeout, "timeout", wasmhost.DefaultTimeout, "time limit of each guest call")
	fs.BoolVar(&f.host.Interpreter, "interpreter", false, "run the guest in wazero's interpreter instead of its compiler")
	fs.IntVar(&f.cores, "cores", runtime.NumCPU(), "GOMAXPROCS of the host (and CPUs it is pinned to)")
	f.out.register(fs, sweepFormats...)
	f.wf.register(fs, 2*time.Second)
	return func(ctx context.Context, e env, pos []string) error {
		if len(pos) != 1 || pos[0] != "wasm" {
			return usagef("workload wasm: unexpected arguments %q", pos)
		}
		o, err := f.out.resolve("workload wasm", e)
		if err != nil {
			return err
		}
		sw, err := f.sweep(ctx)
		if err != nil {
			return err
		}
		dir, err := sw.wf.outDir("wasm", e.stderr)
		if err != nil {
			return err
		}
		points, results, err := sw.run(ctx, e, dir)
		if err != nil {
			return err
		}
		rep := workloads.WasmSweepReport(points)
		rep.Title = "profdiff workload wasm: the plugin host by keep-resident setting"
		rep.Blocks = append([]report.Block{sw.header(dir)}, rep.Blocks...)
		if o.format != render.HTML {
			return o.write(e.stdout, rep)
		}
		return sweepPages{
			cmd: "workload wasm", dir: dir, diffs: wasmDiffs(points, results),
			intro: "Diff pages, each run against the first of its mode (click a bar to open its page):",
			key:   func(series string, p report.Point) string { return series + "/" + p.Label },
		}.write(ctx, e, rep, o)
	}
}

// header says what ran: the host's settings, the concurrent mode's
// connections when it ran, the windows and where the captures are.
func (sw *wasmSweep) header(dir string) report.Para {
	var touches, modules []string
	for _, c := range sw.cells {
		if t := wasmhost.FormatSize(c.touch); !slices.Contains(touches, t) {
			touches = append(touches, t)
		}
		if m := strconv.Itoa(c.modules); !slices.Contains(modules, m) {
			modules = append(modules, m)
		}
	}
	first := report.Cat("wasm plugin host at ", report.Int(int64(sw.cores)), " cores: ", wasmhost.FormatSize(int64(sw.host.Pages*wasmhost.PageSize)),
		" of guest memory, ", strings.Join(touches, ", "), " touched per request")
	if len(modules) > 1 || modules[0] != "1" {
		first = append(first, report.Cat(" by ", strings.Join(modules, ", "), " plugin modules (", report.Int(int64(sw.maxWarmSlots())), " unused warm slots at most)")...)
	}
	first = append(first, report.Cat(", pool of ", report.Int(int64(sw.host.PoolSize)), " slots;")...)
	if slices.Contains(sw.modes, workloads.ModeConcurrent) {
		first = append(first[:len(first)-1], report.Cat(" slots; concurrent mode with ", report.Int(int64(sw.conns)), " connections;")...)
	}
	return report.Para{Lines: []report.Line{first,
		report.Cat(sw.wf.duration.String(), " per run after ", sw.wf.warmup.String(), " warmup; capture folders under ", dir)}}
}

// sweep validates the flags, and the host's settings with a pool of one
// slot, so that a bad combination is a usage error before any run starts.
func (f *wasmFlags) sweep(ctx context.Context) (*wasmSweep, error) {
	if err := f.wf.validate("workload wasm"); err != nil {
		return nil, err
	}
	if f.cores < 1 {
		return nil, usagef("--cores must be at least 1")
	}
	if f.poolSize < 1 {
		return nil, usagef("--pool-size must be at least 1")
	}
	sw := &wasmSweep{wf: f.wf, cores: f.cores, conns: f.wf.connections, host: f.host}
	if sw.conns == 0 {
		sw.conns = 16
	}
	for _, m := range strings.Split(f.modes, ",") {
		m = strings.TrimSpace(m)
		if m != workloads.ModeLoop && m != workloads.ModeConcurrent {
			return nil, usagef("--mode: unknown mode %q (want loop, concurrent or loop,concurrent)", m)
		}
		if !slices.Contains(sw.modes, m) {
			sw.modes = append(sw.modes, m)
		}
	}
	for _, k := range strings.Split(f.keeps, ",") {
		n, err := wasmhost.ParseSize(k)
		if err != nil {
			return nil, usagef("--keep-resident: %v", err)
		}
		sw.keeps = append(sw.keeps, n)
	}
	var touches []int64
	for _, v := range strings.Split(f.touch, ",") {
		t, err := wasmhost.ParseSize(v)
		if err != nil {
			return nil, usagef("--touch: %v", err)
		}
		touches = append(touches, t)
	}
	var modules []int
	for _, v := range strings.Split(f.modules, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > wasmhost.MaxModules {
			return nil, usagef("--modules: %q is not a module count from 1 to %d", v, wasmhost.MaxModules)
		}
		modules = append(modules, n)
	}
	if f.maxWarm < 0 {
		return nil, usagef("--max-unused-warm-slots must not be negative")
	}
	sw.host.PoolSize, sw.host.Pages = f.poolSize, f.pgs
	if f.maxWarm != wasmhost.DefaultMaxUnusedWarmSlots {
		sw.host.MaxUnusedWarm = &f.maxWarm
	}
	for _, t := range touches {
		for _, m := range modules {
			c := wasmCell{t, m}
			if slices.Contains(sw.cells, c) {
				continue
			}
			sw.cells = append(sw.cells, c)
			probe := sw.cellHost(c)
			probe.PoolSize = 1
			h, err := wasmhost.New(ctx, probe)
			if err != nil {
				return nil, usagef("%v", err)
			}
			h.Close()
		}
	}
	return sw, nil
}

// cellHost is the host's configuration in cell c (keep-resident unset).
func (sw *wasmSweep) cellHost(c wasmCell) wasmhost.Config {
	h := sw.host
	h.Touch, h.Modules = int(c.touch), c.modules
	return h
}

func (sw *wasmSweep) maxWarmSlots() int {
	if sw.host.MaxUnusedWarm != nil {
		return *sw.host.MaxUnusedWarm
	}
	return wasmhost.DefaultMaxUnusedWarmSlots
}

// run runs every mode at every keep-resident setting, each into its folder
// MODE-keep-SIZE under dir.
func (sw *wasmSweep) run(ctx context.Context, e env, dir string) ([]workloads.WasmPoint, []*workloads.Result, error) {
	var points []workloads.WasmPoint
	var results []*workloads.Result
	for _, c := range sw.cells {
		for _, m := range sw.modes {
			for _, k := range sw.keeps {
				what := fmt.Sprintf("%s, keep_resident %s", m, wasmhost.FormatSize(k))
				if len(sw.cells) > 1 {
					what = fmt.Sprintf("touch %s, %d module(s), %s", wasmhost.FormatSize(c.touch), c.modules, what)
				}
				fmt.Fprintf(e.stderr, "profdiff workload wasm: %s, %v + %v...\n", what, sw.wf.warmup, sw.wf.duration)
				res, err := workloads.Run(ctx, sw.runConfig(c, m, k, dir, e))
				if err != nil {
					return nil, nil, err
				}
				warnLoad(e.stderr, what, res)
				pt := workloads.WasmPointOf(m, k, res)
				pt.Touch, pt.Modules = c.touch, c.modules
				if pt.PoolRefused > 0 {
					warn(e.stderr, fmt.Sprintf("%s: the pool of %d slots refused %d request(s) with 503; raise --pool-size to serve them", what, sw.host.PoolSize, pt.PoolRefused))
				}
				points = append(points, pt)
				results = append(results, res)
			}
		}
	}
	return points, results, nil
}

// wasmDiffs are the wasm sweep's runs to diff: in each mode (and grid
// cell), each run that did not fail after the first that did not, against
// that first; keyed by mode and point label as the charts' points are
// (series, label).
func wasmDiffs(points []workloads.WasmPoint, results []*workloads.Result) []sweepRun {
	var diffs []sweepRun
	type group struct {
		mode    string
		touch   int64
		modules int
	}
	grid := false
	for _, p := range points {
		grid = grid || p.Touch != points[0].Touch || p.Modules != points[0].Modules
	}
	first := map[group]*workloads.Result{}
	for i, p := range points {
		r := results[i]
		g := group{p.Mode, p.Touch, p.Modules}
		switch {
		case r.Failure != nil:
		case first[g] == nil:
			first[g] = r
		default:
			size := wasmhost.FormatSize(p.KeepResident)
			what, label := p.Mode+", keep_resident "+size, size
			if grid {
				what = fmt.Sprintf("touch %s, %d module(s), %s", wasmhost.FormatSize(p.Touch), p.Modules, what)
				label = wasmhost.FormatSize(p.Touch) + "×" + strconv.Itoa(p.Modules) + " keep " + size
			}
			diffs = append(diffs, sweepRun{what: what, key: p.Mode + "/" + label, base: first[g], new: r})
		}
	}
	return diffs
}

// runConfig is the run of mode m at keep-resident k in cell cell.
func (sw *wasmSweep) runConfig(cell wasmCell, m string, k int64, dir string, e env) workloads.RunConfig {
	c := sw.cellHost(cell)
	c.KeepResident = k
	rc := workloads.RunConfig{
		Workload: "wasm", Variant: "pooling", Cores: sw.cores, Connections: sw.conns,
		Warmup: sw.wf.warmup, Seconds: wholeSeconds(sw.wf.duration), Out: filepath.Join(dir, sw.cellDir(cell), fmt.Sprintf("%s-keep-%s", m, wasmhost.FormatSize(k))), Log: e.stderr,
		Args: c.Args(), StatsPath: "/stats", NoPerf: !sw.wf.perf,
		Params: map[string]any{"mode": m, "keep_resident_bytes": k, "pool_size": c.PoolSize, "pages": c.Pages, "touch_bytes": int64(c.Touch), "modules": c.Modules, "max_unused_warm_slots": sw.maxWarmSlots()},
	}
	if m == workloads.ModeLoop {
		rc.Path, rc.Loop = "/loop", true
	} else {
		rc.Path = "/plugin"
	}
	return rc
}
