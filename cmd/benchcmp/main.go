// Command benchcmp times `profdiff diff` against `go tool pprof -top
// -diff_base` on a large synthetic pair of Go CPU profiles, measuring the
// wall time, CPU time and peak RSS of each as a subprocess, and prints the
// results as Markdown tables.
//
// The profiles are generated at run time by package profile/synth (seeded,
// so every run sees the same bytes): by default 200,000 unique stacks of
// 15-45 frames over 20,000 functions, about 14 MB gzipped per profile, with
// a Location per call site and several leaf PCs per function as in real Go
// CPU profiles (about 8 Locations per Function at 200k; -pcs 1 gives the
// one-Location-per-function shape instead). Run it from the module root:
//
//	go run ./cmd/benchcmp -stacks 200000              # profdiff vs pprof (pprof takes a while)
//	go run ./cmd/benchcmp -stacks 50000               # a smaller pair
//	go run ./cmd/benchcmp -sweep -skip-pprof          # profdiff at 25k, 50k, 100k, 200k stacks
//	go run ./cmd/benchcmp -sweep -sizes 50000,200000  # profdiff and pprof at each size
//	go run ./cmd/benchcmp -runs 3 -pprof-runs 1       # profdiff best of 3, pprof once
//	go run ./cmd/benchcmp -dir /tmp/pairs             # keep the generated files for reuse
//	go run ./cmd/benchcmp -pictures -runs 2           # --format html and svg against json: time, memory, size
//
// profdiff is built from the working tree with `go build` into the work
// directory; pprof is the toolchain's (`go tool -n pprof`). Both write their
// report to /dev/null. With -runs N each command runs N times (pprof
// -pprof-runs times, if given) and the tables show the fastest run and the
// largest peak RSS. Peak RSS comes from getrusage (ru_maxrss) and is
// reported on Unix only. Each table names the pair's shape: its Functions
// and Locations (read back from the base profile) and their ratio.
//
// Generated files are named after the synth Config and synth.Version, so a
// -dir filled by an older generator is not reused by mistake.
//
// The targets checked (from the performance issue): profdiff at least 20x
// faster than pprof on the 200k pair, with at most a third of its peak
// memory, and time per stack roughly constant across the sweep.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/synth"
)

type options struct {
	cfg       synth.Config
	runs      int
	pprofRuns int
	skipPprof bool
	sweep     bool
	sizes     []int
	dir       string
	keep      bool
	profdiff  string
	timeout   time.Duration
	pictures  bool
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "benchcmp:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	cleanup, err := o.workDir(stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	if o.profdiff == "" {
		bin, err := buildProfdiff(o.dir, stderr)
		if err != nil {
			return err
		}
		o.profdiff = bin
	}
	var pprofBin []string
	if !o.skipPprof {
		pprofBin = pprofCommand()
	}

	title := "profdiff vs pprof"
	if o.pictures {
		title = "profdiff's pictures vs its json"
	}
	fmt.Fprintf(stdout, "# %s\n\n%s, %s/%s, %d CPUs, GOGC=%q\n\n", title, goVersion(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), os.Getenv("GOGC"))

	if o.sweep {
		return runSweep(o, pprofBin, stdout, stderr)
	}
	pr, err := pair(o.dir, o.cfg, stderr)
	if err != nil {
		return err
	}
	if o.pictures {
		return runPictures(o, pr, stdout, stderr)
	}
	pd, pp, err := measureBoth(o, pprofBin, pr, stderr)
	if err != nil {
		return err
	}
	printCompare(stdout, o, pr, pd, pp)
	return nil
}

// parseOptions parses and checks the flags.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	o.cfg = synth.DefaultConfig()
	var sizes string
	fs := flag.NewFlagSet("benchcmp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.cfg.Stacks, "stacks", o.cfg.Stacks, "unique stacks per profile")
	fs.IntVar(&o.cfg.Functions, "functions", o.cfg.Functions, "functions in the synthetic program")
	fs.IntVar(&o.cfg.MinDepth, "min-depth", o.cfg.MinDepth, "shortest stack (locations)")
	fs.IntVar(&o.cfg.MaxDepth, "max-depth", o.cfg.MaxDepth, "longest stack (locations)")
	fs.Int64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "generator seed")
	fs.IntVar(&o.cfg.PCsPerFunction, "pcs", o.cfg.PCsPerFunction, "most Locations (PCs) per function: 0 = realistic (one per call site plus 1-16 leaf PCs), 1 = one per function")
	fs.IntVar(&o.runs, "runs", 1, "runs per command; the table shows the fastest")
	fs.IntVar(&o.pprofRuns, "pprof-runs", 0, "runs of pprof (default: -runs)")
	fs.BoolVar(&o.skipPprof, "skip-pprof", false, "do not run pprof (it takes several times longer than profdiff)")
	fs.BoolVar(&o.sweep, "sweep", false, "run profdiff on several sizes (see -sizes) to show how time grows")
	fs.StringVar(&sizes, "sizes", "25000,50000,100000,200000", "stack counts for -sweep, comma-separated")
	fs.StringVar(&o.dir, "dir", "", "work directory for the binary and profiles; existing profiles there are reused (default: a new temporary directory, removed at exit)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary work directory")
	fs.StringVar(&o.profdiff, "profdiff", "", "profdiff binary to time (default: go build ./cmd/profdiff)")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "limit per command run")
	fs.BoolVar(&o.pictures, "pictures", false, "time profdiff's html and svg formats against its json on the pair, with their sizes (instead of pprof)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.runs < 1 {
		return o, errors.New("-runs must be at least 1")
	}
	if o.pprofRuns == 0 {
		o.pprofRuns = o.runs
	} else if o.pprofRuns < 0 {
		return o, errors.New("-pprof-runs must be at least 1")
	}
	if c := o.cfg; c.PCsPerFunction < 0 || c.Stacks < 0 || c.Functions < 1 || c.MinDepth < 1 || c.MaxDepth < c.MinDepth {
		return o, fmt.Errorf("bad profile shape: -stacks %d -functions %d -min-depth %d -max-depth %d -pcs %d", c.Stacks, c.Functions, c.MinDepth, c.MaxDepth, c.PCsPerFunction)
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-sizes: bad size %q", s)
		}
		o.sizes = append(o.sizes, n)
	}
	return o, nil
}

// workDir makes the work directory: -dir, or a new temporary one that the
// returned cleanup removes unless -keep.
func (o *options) workDir(stderr io.Writer) (cleanup func(), err error) {
	if o.dir != "" {
		return func() {}, os.MkdirAll(o.dir, 0o755)
	}
	d, err := os.MkdirTemp("", "benchcmp-")
	if err != nil {
		return nil, err
	}
	o.dir = d
	if o.keep {
		fmt.Fprintf(stderr, "work directory: %s\n", d)
		return func() {}, nil
	}
	return func() { os.RemoveAll(d) }, nil
}

// measureBoth times profdiff and, unless pprofBin is nil, pprof on a pair.
func measureBoth(o options, pprofBin []string, pr *pairFiles, stderr io.Writer) (pd, pp *result, err error) {
	pd, err = measure(o.runs, o.timeout, stderr, o.profdiff, "diff", pr.base, pr.nw)
	if err != nil {
		return nil, nil, fmt.Errorf("profdiff: %v", err)
	}
	if pprofBin != nil {
		cmd := append(append([]string{}, pprofBin...), "-top", "-diff_base="+pr.base, pr.nw)
		pp, err = measure(o.pprofRuns, o.timeout, stderr, cmd[0], cmd[1:]...)
		if err != nil {
			return nil, nil, fmt.Errorf("pprof: %v", err)
		}
	}
	return pd, pp, nil
}

// result is the best of several runs of one command.
type result struct {
	wall   time.Duration // fastest run
	cpu    time.Duration // user+system of the fastest run
	maxRSS int64         // largest peak RSS over the runs, bytes (0: unknown)
}

func measure(runs int, timeout time.Duration, stderr io.Writer, name string, args ...string) (*result, error) {
	return measureTo(os.DevNull, runs, timeout, stderr, name, args...)
}

// measureTo is measure with the command's standard output written to the
// file out.
func measureTo(out string, runs int, timeout time.Duration, stderr io.Writer, name string, args ...string) (*result, error) {
	r := &result{}
	for i := range runs {
		runtime.GC()
		debug.FreeOSMemory()
		var errBuf bytes.Buffer
		cmd := exec.Command(name, args...)
		devnull, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, err
		}
		cmd.Stdout = devnull
		cmd.Stderr = &errBuf
		start := time.Now()
		if err := cmd.Start(); err != nil {
			devnull.Close()
			return nil, err
		}
		timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
		err = cmd.Wait()
		wall := time.Since(start)
		timer.Stop()
		devnull.Close()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, errBuf.String())
		}
		ps := cmd.ProcessState
		cpu := ps.UserTime() + ps.SystemTime()
		rss := peakRSS(ps)
		fmt.Fprintf(stderr, "  %s run %d/%d: %s wall, %s cpu, %s peak RSS\n", filepath.Base(name), i+1, runs, secs(wall), secs(cpu), mib(rss))
		if i == 0 || wall < r.wall {
			r.wall, r.cpu = wall, cpu
		}
		r.maxRSS = max(r.maxRSS, rss)
	}
	return r, nil
}

// pairFiles is a generated pair on disk and the base profile's shape.
type pairFiles struct {
	base, nw        string
	functions, locs int
}

// shape names the pair's functions and locations per function.
func (p *pairFiles) shape() string {
	return fmt.Sprintf("%d functions, %d locations (%.1f per function)", p.functions, p.locs, float64(p.locs)/float64(max(1, p.functions)))
}

// pair returns the base and new profiles for cfg in dir, generating them
// unless a previous run left them there.
func pair(dir string, cfg synth.Config, stderr io.Writer) (*pairFiles, error) {
	stem := fmt.Sprintf("synth%d-seed%d-n%d-f%d-d%d-%d", synth.Version, cfg.Seed, cfg.Stacks, cfg.Functions, cfg.MinDepth, cfg.MaxDepth)
	if cfg.PCsPerFunction != 0 {
		stem += fmt.Sprintf("-pcs%d", cfg.PCsPerFunction)
	}
	pr := &pairFiles{base: filepath.Join(dir, stem+"-base.pb.gz"), nw: filepath.Join(dir, stem+"-new.pb.gz")}
	for i, side := range []synth.Side{synth.Base, synth.New} {
		path := []string{pr.base, pr.nw}[i]
		if _, err := os.Stat(path); err == nil {
			continue
		}
		c := cfg
		c.Side = side
		start := time.Now()
		tmp := path + ".tmp"
		if err := synth.WriteFile(tmp, c); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "generated %s (%s) in %s\n", path, fileMiB(path), secs(time.Since(start)))
	}
	data, err := os.ReadFile(pr.base)
	if err != nil {
		return nil, err
	}
	p, err := pprofile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", pr.base, err)
	}
	pr.functions, pr.locs = len(p.Function), len(p.Location)
	fmt.Fprintf(stderr, "pair %d stacks: %s\n", cfg.Stacks, pr.shape())
	p, data = nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	return pr, nil
}

// buildProfdiff builds ./cmd/profdiff of the enclosing module into dir.
func buildProfdiff(dir string, stderr io.Writer) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run benchcmp inside the profdiff module (or pass -profdiff)")
	}
	bin := filepath.Join(dir, "profdiff")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/profdiff")
	cmd.Dir = filepath.Dir(gomod)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/profdiff: %v", err)
	}
	return bin, nil
}

// pprofCommand is the toolchain's pprof binary, run directly so the go
// command's own process does not count; `go tool pprof` if it cannot be found.
func pprofCommand() []string {
	out, err := exec.Command("go", "tool", "-n", "pprof").Output()
	if p := strings.TrimSpace(string(out)); err == nil && p != "" {
		if _, err := os.Stat(p); err == nil {
			return []string{p}
		}
	}
	return []string{"go", "tool", "pprof"}
}

func goVersion() string {
	out, err := exec.Command("go", "version").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

// sweepRow is one size of a sweep: the pair and each tool's result (pp is
// nil when pprof is skipped).
type sweepRow struct {
	n      int
	pr     *pairFiles
	pd, pp *result
}

func runSweep(o options, pprofBin []string, stdout, stderr io.Writer) error {
	var rows []sweepRow
	for _, n := range o.sizes {
		cfg := o.cfg
		cfg.Stacks = n
		pr, err := pair(o.dir, cfg, stderr)
		if err != nil {
			return err
		}
		pd, pp, err := measureBoth(o, pprofBin, pr, stderr)
		if err != nil {
			return err
		}
		rows = append(rows, sweepRow{n, pr, pd, pp})
	}
	fmt.Fprintf(stdout, "Pairs: %d-%d frames, %d functions, %s.\n\n", o.cfg.MinDepth, o.cfg.MaxDepth, o.cfg.Functions, pcsName(o.cfg.PCsPerFunction))
	printSweep(stdout, fmt.Sprintf("profdiff sweep: `profdiff diff BASE NEW`, best of %d", o.runs), rows, func(r sweepRow) *result { return r.pd })
	if pprofBin == nil {
		return nil
	}
	fmt.Fprintln(stdout)
	printSweep(stdout, fmt.Sprintf("pprof sweep: `go tool pprof -top -diff_base=BASE NEW`, best of %d", o.pprofRuns), rows, func(r sweepRow) *result { return r.pp })
	fmt.Fprintln(stdout, "\n| stacks per profile | pprof / profdiff wall | user+sys | peak RSS |")
	fmt.Fprintln(stdout, "|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(stdout, "| %d | %.1fx | %.1fx | %s |\n", r.n, ratio(r.pp.wall, r.pd.wall), ratio(r.pp.cpu, r.pd.cpu), rssRatio(r.pp, r.pd))
	}
	return nil
}

// printSweep prints one tool's results over the sweep's sizes.
func printSweep(w io.Writer, title string, rows []sweepRow, get func(sweepRow) *result) {
	fmt.Fprintf(w, "## %s\n\n", title)
	fmt.Fprintln(w, "| stacks per profile | input (gzipped) | locations per function | wall | user+sys | peak RSS | stacks vs first row | time vs first row | wall per added stack |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	first := get(rows[0])
	for i, row := range rows {
		r := get(row)
		marginal := "–"
		if i > 0 {
			prev := rows[i-1]
			marginal = fmt.Sprintf("%.2f µs", float64(r.wall-get(prev).wall)/1e3/float64(2*(row.n-prev.n)))
		}
		fmt.Fprintf(w, "| %d | %s + %s | %.1f | %s | %s | %s | %.2fx | %.2fx | %s |\n", row.n, fileMiB(row.pr.base), fileMiB(row.pr.nw),
			float64(row.pr.locs)/float64(max(1, row.pr.functions)), secs(r.wall), secs(r.cpu), mib(r.maxRSS),
			float64(row.n)/float64(rows[0].n), ratio(r.wall, first.wall), marginal)
	}
	if len(rows) > 1 {
		last := rows[len(rows)-1]
		lr := get(last)
		grow := float64(last.n) / float64(rows[0].n)
		perStack := ratio(lr.wall, first.wall) / grow
		fmt.Fprintf(w, "\nStacks grow %.1fx and time %.2fx (user+sys %.2fx) from %d to %d stacks: time per stack changes %.2fx (1.00x is exactly linear; below 1 the fixed per-function and per-location costs are being amortized; well above 1 is super-linear). The last column is the cost of each stack added since the row above (both profiles count).\n",
			grow, ratio(lr.wall, first.wall), ratio(lr.cpu, first.cpu), rows[0].n, last.n, perStack)
	}
}

func printCompare(w io.Writer, o options, pr *pairFiles, pd, pp *result) {
	c := o.cfg
	runs := fmt.Sprintf("best of %d", o.runs)
	if pp != nil && o.pprofRuns != o.runs {
		runs = fmt.Sprintf("profdiff best of %d, pprof best of %d", o.runs, o.pprofRuns)
	}
	fmt.Fprintf(w, "## %d stacks per profile, %d-%d frames, %d functions (%s + %s gzipped), %s\n\n",
		c.Stacks, c.MinDepth, c.MaxDepth, c.Functions, fileMiB(pr.base), fileMiB(pr.nw), runs)
	fmt.Fprintf(w, "Base profile: %s; %s.\n\n", pr.shape(), pcsName(c.PCsPerFunction))
	fmt.Fprintln(w, "| tool | wall | user+sys | peak RSS |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	fmt.Fprintf(w, "| `profdiff diff BASE NEW` | %s | %s | %s |\n", secs(pd.wall), secs(pd.cpu), mib(pd.maxRSS))
	if pp == nil {
		fmt.Fprintln(w, "\n(pprof skipped)")
		return
	}
	fmt.Fprintf(w, "| `go tool pprof -top -diff_base=BASE NEW` | %s | %s | %s |\n", secs(pp.wall), secs(pp.cpu), mib(pp.maxRSS))
	speed := ratio(pp.wall, pd.wall)
	mem := 0.0
	if pd.maxRSS > 0 {
		mem = float64(pp.maxRSS) / float64(pd.maxRSS)
	}
	fmt.Fprintf(w, "| **pprof / profdiff** | **%.1fx** | %.1fx | **%s** |\n\n", speed, ratio(pp.cpu, pd.cpu), rssRatio(pp, pd))
	fmt.Fprintf(w, "Targets (the issue's, set for the 200,000-stack pair): ≥ 20x faster: %s (%.1fx); peak memory ≤ 1/3 of pprof's: %s (%.2f of pprof's).\n",
		verdict(speed >= 20), speed, verdict(mem >= 3), 1/mem)
}

// pcsName describes Config.PCsPerFunction.
func pcsName(pcs int) string {
	switch pcs {
	case 0:
		return "realistic locations (one per call site, 1-16 leaf PCs per function)"
	case 1:
		return "one location per function"
	}
	return fmt.Sprintf("at most %d locations per function", pcs)
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func rssRatio(a, b *result) string {
	if a.maxRSS <= 0 || b.maxRSS <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fx", float64(a.maxRSS)/float64(b.maxRSS))
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func mib(n int64) string {
	if n <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

func fileMiB(name string) string {
	st, err := os.Stat(name)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MiB", float64(st.Size())/(1<<20))
}

// runPictures times `profdiff diff --format F` for json, html and svg on
// the pair and prints each one's time, memory and output size, and its
// ratio to json: the pictures issue's budget is an html page of at most
// about 3 MB in at most 1.5x the json diff's time.
func runPictures(o options, pr *pairFiles, stdout, stderr io.Writer) error {
	formats := []string{"json", "html", "svg"}
	res := make([]*result, len(formats))
	size := make([]int64, len(formats))
	for i, f := range formats {
		out := filepath.Join(o.dir, "pictures."+f)
		r, err := measureTo(out, o.runs, o.timeout, stderr, o.profdiff, "diff", "--format", f, pr.base, pr.nw)
		if err != nil {
			return fmt.Errorf("profdiff --format %s: %v", f, err)
		}
		st, err := os.Stat(out)
		if err != nil {
			return err
		}
		res[i], size[i] = r, st.Size()
		if !o.keep {
			os.Remove(out)
		}
	}
	c := o.cfg
	fmt.Fprintf(stdout, "## Pictures: %d stacks per profile (%s + %s gzipped), best of %d\n\n", c.Stacks, fileMiB(pr.base), fileMiB(pr.nw), o.runs)
	fmt.Fprintln(stdout, "| `profdiff diff --format` | wall | user+sys | peak RSS | output | wall / json | cpu / json |")
	fmt.Fprintln(stdout, "|---|---:|---:|---:|---:|---:|---:|")
	for i, f := range formats {
		fmt.Fprintf(stdout, "| `%s` | %s | %s | %s | %.2f MB | %.2fx | %.2fx |\n", f, secs(res[i].wall), secs(res[i].cpu), mib(res[i].maxRSS),
			float64(size[i])/1e6, ratio(res[i].wall, res[0].wall), ratio(res[i].cpu, res[0].cpu))
	}
	html := 1
	fmt.Fprintf(stdout, "\nTargets (the pictures issue's, for the 200,000-stack pair): html ≤ about 3 MB: %s (%.2f MB); html ≤ 1.5x the json diff's time: %s (%.2fx wall).\n",
		verdict(size[html] <= 3e6), float64(size[html])/1e6, verdict(ratio(res[html].wall, res[0].wall) <= 1.5), ratio(res[html].wall, res[0].wall))
	return nil
}
