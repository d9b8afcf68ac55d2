package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
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
	out                  outputFlags
	cores, poolSize, pgs int
	host                 wasmhost.Config // Timeout and Interpreter
}

// wasmSweep is the validated sweep: which runs, on what host.
type wasmSweep struct {
	wf    workloadFlags
	modes []string
	keeps []int64
	cores int
	conns int
	host  wasmhost.Config // all but KeepResident, which each run sets
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
	fs.StringVar(&f.touch, "touch", wasmhost.FormatSize(wasmhost.DefaultTouch), "bytes of its memory the guest touches per request")
	durationVar(fs, &f.host.Timeout, "timeout", wasmhost.DefaultTimeout, "time limit of each guest call")
	fs.BoolVar(&f.host.Interpreter, "interpreter", false, "run the guest in wazero's interpreter instead of its compiler")
	fs.IntVar(&f.cores, "cores", runtime.NumCPU(), "GOMAXPROCS of the host (and CPUs it is pinned to)")
	f.out.register(fs, sweepFormats...)
	f.wf.register(fs, 2*time.Second)
	return func(ctx context.Context, e env, pos []string) error {
		if len(pos) != 1 || pos[0] != "wasm" {
			return usagef("workload wasm: unexpected arguments %q", pos)
		}
		o, err := f.out.resolve("workload wasm", e.stdout)
		if err != nil {
			return err
		}
		sw, err := f.sweep(ctx)
		if err != nil {
			return err
		}
		dir, err := sw.wf.outDir("wasm")
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
	first := report.Cat("wasm plugin host at ", report.Int(int64(sw.cores)), " cores: ", wasmhost.FormatSize(int64(sw.host.Pages*wasmhost.PageSize)),
		" of guest memory, ", wasmhost.FormatSize(int64(sw.host.Touch)), " touched per request, pool of ", report.Int(int64(sw.host.PoolSize)), " slots;")
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
	t, err := wasmhost.ParseSize(f.touch)
	if err != nil {
		return nil, usagef("--touch: %v", err)
	}
	sw.host.PoolSize, sw.host.Pages, sw.host.Touch = f.poolSize, f.pgs, int(t)
	probe := sw.host
	probe.PoolSize = 1
	h, err := wasmhost.New(ctx, probe)
	if err != nil {
		return nil, usagef("%v", err)
	}
	h.Close()
	return sw, nil
}

// run runs every mode at every keep-resident setting, each into its folder
// MODE-keep-SIZE under dir.
func (sw *wasmSweep) run(ctx context.Context, e env, dir string) ([]workloads.WasmPoint, []*workloads.Result, error) {
	var points []workloads.WasmPoint
	var results []*workloads.Result
	for _, m := range sw.modes {
		for _, k := range sw.keeps {
			what := fmt.Sprintf("%s, keep_resident %s", m, wasmhost.FormatSize(k))
			fmt.Fprintf(e.stderr, "profdiff workload wasm: %s, %v + %v...\n", what, sw.wf.warmup, sw.wf.duration)
			res, err := workloads.Run(ctx, sw.runConfig(m, k, dir, e))
			if err != nil {
				return nil, nil, err
			}
			warnLoad(e.stderr, what, res)
			pt := workloads.WasmPointOf(m, k, res)
			if pt.PoolRefused > 0 {
				warn(e.stderr, fmt.Sprintf("%s: the pool of %d slots refused %d request(s) with 503; raise --pool-size to serve them", what, sw.host.PoolSize, pt.PoolRefused))
			}
			points = append(points, pt)
			results = append(results, res)
		}
	}
	return points, results, nil
}

// wasmDiffs are the wasm sweep's runs to diff: in each mode, each run that
// did not fail after the first that did not, against that first; keyed
// by mode and keep-resident as the charts' points are (series, label).
func wasmDiffs(points []workloads.WasmPoint, results []*workloads.Result) []sweepRun {
	var diffs []sweepRun
	first := map[string]*workloads.Result{}
	for i, p := range points {
		r := results[i]
		switch {
		case r.Failure != nil:
		case first[p.Mode] == nil:
			first[p.Mode] = r
		default:
			size := wasmhost.FormatSize(p.KeepResident)
			diffs = append(diffs, sweepRun{what: p.Mode + ", keep_resident " + size, key: p.Mode + "/" + size, base: first[p.Mode], new: r})
		}
	}
	return diffs
}

// runConfig is the run of mode m at keep-resident k.
func (sw *wasmSweep) runConfig(m string, k int64, dir string, e env) workloads.RunConfig {
	c := sw.host
	c.KeepResident = k
	rc := workloads.RunConfig{
		Workload: "wasm", Variant: "pooling", Cores: sw.cores, Connections: sw.conns,
		Warmup: sw.wf.warmup, Seconds: wholeSeconds(sw.wf.duration), Out: filepath.Join(dir, fmt.Sprintf("%s-keep-%s", m, wasmhost.FormatSize(k))), Log: e.stderr,
		Args: c.Args(), StatsPath: "/stats", NoPerf: !sw.wf.perf,
		Params: map[string]any{"mode": m, "keep_resident_bytes": k, "pool_size": c.PoolSize, "pages": c.Pages, "touch_bytes": int64(c.Touch)},
	}
	if m == workloads.ModeLoop {
		rc.Path, rc.Loop = "/loop", true
	} else {
		rc.Path = "/plugin"
	}
	return rc
}
