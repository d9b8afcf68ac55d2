package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/workloads"
	"github.com/profdiff/profdiff/workloads/child"
	"github.com/profdiff/profdiff/workloads/jsonserver"
)

// workloadFlags are the flags shared by `workload` and `demo`.
type workloadFlags struct {
	seconds     int
	warmup      time.Duration
	connections int
	out         string
}

func (w *workloadFlags) register(fs interface {
	IntVar(*int, string, int, string)
	DurationVar(*time.Duration, string, time.Duration, string)
	StringVar(*string, string, string, string)
}, seconds int) {
	fs.IntVar(&w.seconds, "seconds", seconds, "measured window of each run, whole seconds (profiles are captured over it)")
	fs.DurationVar(&w.warmup, "warmup", time.Second, "load before each measured window, discarded")
	fs.IntVar(&w.connections, "connections", 0, "load generator connections (default min(256, 64×CPUs))")
	fs.StringVar(&w.out, "out", "", "folder for the capture folders (default: a new folder under profdiff-out/)")
}

func (w *workloadFlags) validate() error {
	if w.seconds < 1 {
		return usagef("--seconds must be at least 1, not %d", w.seconds)
	}
	if w.warmup < 0 {
		return usagef("--warmup must not be negative")
	}
	if w.connections < 0 {
		return usagef("--connections must not be negative")
	}
	return nil
}

// outDir returns the folder the runs write into: --out, or a fresh
// profdiff-out/<time>-<what> folder, so no run overwrites another.
func (w *workloadFlags) outDir(what string) (string, error) {
	dir := w.out
	if dir == "" {
		dir = filepath.Join("profdiff-out", time.Now().Format("20060102-150405")+"-"+what)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--out: %v", err)
	}
	return dir, nil
}

// defaultCores is 1, 2, 4, ... up to the machine's CPU count (which is
// always included).
func defaultCores() []int {
	n := runtime.NumCPU()
	var cs []int
	for c := 1; c < n; c *= 2 {
		cs = append(cs, c)
	}
	return append(cs, n)
}

func parseCores(s string) ([]int, error) {
	if s == "" {
		return defaultCores(), nil
	}
	seen := map[int]bool{}
	var cs []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, usagef("--cores: %q is not a core count (want a list such as 1,2,4,8)", f)
		}
		if !seen[n] {
			seen[n] = true
			cs = append(cs, n)
		}
	}
	sort.Ints(cs)
	return cs, nil
}

func checkVariant(v string) error {
	for _, x := range jsonserver.Variants {
		if x == v {
			return nil
		}
	}
	return usagef("--variant: unknown variant %q (want %s)", v, strings.Join(jsonserver.Variants, ", "))
}

// runWorkload is `profdiff workload json`: one run per core count, each
// with its own capture folder, then the scaling table.
func runWorkload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if a == "wasm" {
			return runWasmWorkload(ctx, args, stdout, stderr)
		}
	}
	var wf workloadFlags
	var cores, variant, format string
	fs := newFlagSet("workload", "  profdiff workload json [--variant baseline|global-lock|sharded] [--cores 1,2,4,8] [--seconds 5]\n", stderr)
	fs.StringVar(&variant, "variant", "baseline", "server variant: "+strings.Join(jsonserver.Variants, ", "))
	fs.StringVar(&cores, "cores", "", "core counts to sweep, e.g. 1,2,4,8 (default: powers of two up to the CPU count)")
	fs.StringVar(&format, "format", "table", "table, markdown or json")
	wf.register(fs, 5)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "json" {
		return usagef("workload: want the workload name; built in: %s", strings.Join(child.Workloads(), ", "))
	}
	if format != "table" && format != "markdown" && format != "json" {
		return usagef("--format: unknown format %q (want table, markdown or json)", format)
	}
	if err := wf.validate(); err != nil {
		return err
	}
	if err := checkVariant(variant); err != nil {
		return err
	}
	cs, err := parseCores(cores)
	if err != nil {
		return err
	}
	dir, err := wf.outDir("json-" + variant)
	if err != nil {
		return err
	}
	var results []*workloads.Result
	for _, n := range cs {
		res, err := workloads.Run(ctx, workloads.RunConfig{
			Workload: "json", Variant: variant, Cores: n, Connections: wf.connections,
			Warmup: wf.warmup, Seconds: wf.seconds, Out: filepath.Join(dir, fmt.Sprintf("cores-%d", n)), Log: stderr,
		})
		if err != nil {
			return err
		}
		warnLoad(stderr, res)
		results = append(results, res)
	}
	if format != "json" {
		fmt.Fprintf(stdout, "json server, variant %s, %d s per run after %v warmup; capture folders under %s\n\n", variant, wf.seconds, wf.warmup, dir)
	}
	return workloads.WriteSweep(stdout, workloads.SweepRows(results), format)
}

// warnLoad repeats a run's failed-request warning on stderr, so errors
// never pass for saturation even when only the table is read.
func warnLoad(stderr io.Writer, res *workloads.Result) {
	for _, w := range res.Load.Warnings() {
		fmt.Fprintf(stderr, "profdiff: warning: %d cores: %s\n", res.Config.Cores, w)
	}
}

// runDemo is the README's main command: baseline and global-lock at the
// machine's core count, then their diff.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var wf workloadFlags
	var cores int
	var format string
	fs := newFlagSet("demo", "  profdiff demo [--seconds 3] [--cores N]\n", stderr)
	fs.IntVar(&cores, "cores", runtime.NumCPU(), "GOMAXPROCS of the server")
	fs.StringVar(&format, "format", "table", "output format of the diff: table, markdown, csv or json")
	wf.register(fs, 3)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("demo: unexpected argument %q", fs.Arg(0))
	}
	f, err := render.ParseFormat(format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	if err := wf.validate(); err != nil {
		return err
	}
	if cores < 1 {
		return usagef("--cores must be at least 1")
	}
	dir, err := wf.outDir("demo")
	if err != nil {
		return err
	}
	var res [2]*workloads.Result
	for i, v := range []string{"baseline", "global-lock"} {
		fmt.Fprintf(stderr, "profdiff demo: running the JSON server (%s) at %d cores for %v + %d s under load...\n", v, cores, wf.warmup, wf.seconds)
		r, err := workloads.Run(ctx, workloads.RunConfig{
			Workload: "json", Variant: v, Cores: cores, Connections: wf.connections,
			Warmup: wf.warmup, Seconds: wf.seconds, Out: filepath.Join(dir, v),
		})
		if err != nil {
			return err
		}
		warnLoad(stderr, r)
		res[i] = r
	}
	kind := "wall"
	if _, ok := res[0].Manifest.File(kind); !ok {
		kind = "cpu"
	}
	a := diff.NewAnalyzer(diff.Options{Top: 12, By: diff.ByCaller})
	for i, r := range res {
		fl, _ := r.Manifest.File(kind)
		l, err := profile.Load(ctx, filepath.Join(r.Config.Out, fl.Path), profile.Options{})
		if err != nil {
			return err
		}
		warn(stderr, l.Warnings...)
		if err := a.Add(diff.Side(i), l); err != nil {
			return err
		}
	}
	result := a.Diff()
	warn(stderr, result.Warnings...)
	if f == render.Table || f == render.Markdown {
		b, n := res[0].Load, res[1].Load
		fmt.Fprintf(stdout, "What you are looking at: the same JSON server twice at %d cores, once as is (base) and once with every\n", cores)
		fmt.Fprintf(stdout, "request parked and woken through a registry behind one global mutex (new), as .NET 11's wait subsystem did.\n")
		fmt.Fprintf(stdout, "Throughput: %.0f → %.0f requests/s (p99 %.2f → %.2f ms); where the server's goroutines spent their time:\n\n",
			b.RPSOK, n.RPSOK, b.LatencyMS.P99, n.LatencyMS.P99)
	}
	if err := render.Diff(stdout, result, f); err != nil {
		return err
	}
	if f == render.Table || f == render.Markdown {
		lc := result.Buckets[diff.LockContention]
		fmt.Fprintf(stdout, "\nLock contention: %s → %s", render.Pct(lc.Base), render.Pct(lc.New))
		for _, m := range result.Methods {
			if m.Bucket == diff.LockContention && m.Delta > 0 {
				fmt.Fprintf(stdout, ", led by %s (%s)", m.Name, render.PP(m.Delta))
				break
			}
		}
		fmt.Fprintf(stdout, ".\nCapture folders: %s and %s (profdiff diff --kind cpu|wall|mutex|block|trace works on them).\n", res[0].Config.Out, res[1].Config.Out)
	}
	return nil
}
