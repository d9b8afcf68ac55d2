// Command benchcmp is profdiff's speed report. In one run it times, as
// subprocesses measured alike (wall time, user+system CPU, peak RSS):
//
//   - `profdiff diff BASE NEW` on synthetic pairs of Go CPU profiles;
//   - `go tool pprof -top -diff_base=BASE NEW` on the same pairs;
//   - the decompression floor: benchcmp itself, re-executed in a hidden
//     mode, gunzipping both files of the pair and discarding the bytes,
//     once with compress/gzip, once with
//     github.com/klauspost/compress/gzip and once with profdiff's own
//     inflater, package profile/inflate (the fastest of them is the floor;
//     it is also timed with the files inflated in parallel, as many at
//     once as there are CPUs);
//   - `profdiff top` on one large profile (1,000,000 stacks, ~80 MB raw);
//   - `profdiff gate --base 'base-*.pb.gz' --new 'new-*.pb.gz'` over 200 vs
//     200 profiles of about 1 MB each;
//
// A profdiff command and its floor are timed in the same rounds: each
// round runs profdiff, then each floor, once, and the tables show each
// one's fastest run. On a shared machine whose speed drifts by a quarter
// from one minute to the next, timing all of profdiff's runs and then all
// of the floor's would make their ratio the drift's. pprof, one run of
// half a minute, is timed after them.
//
// and prints Markdown tables with the ratios (pprof / profdiff, profdiff /
// floor), then one PASS or FAIL line per target of the performance issue,
// measured against target. The exit status is 0 whatever the verdicts (it
// is a report); 1 when a command fails or a flag is bad.
//
// The profiles are generated at run time by package profile/synth (seeded,
// so every run sees the same bytes): by default 200,000 unique stacks of
// 15-45 frames over 20,000 functions, about 13 MiB gzipped (16.5 MB raw) per
// profile, with a Location per call site and several leaf PCs per function
// as in real Go CPU profiles (about 8 Locations per Function at 200k; -pcs 1
// gives the one-Location-per-function shape instead). The gate's profiles
// are one synth pair of -gate-stacks stacks, each profile varied by its own
// seed (every sample kept with probability 0.95, its value scaled by
// 0.6-1.4), as runs of one service vary. Run it from the module root:
//
//	go run ./cmd/benchcmp -sweep -sizes 25000,50000,100000,200000,1000000  # the full report
//	go run ./cmd/benchcmp -stacks 200000              # one pair: profdiff, pprof, floor
//	go run ./cmd/benchcmp -stacks 50000 -skip-pprof   # a smaller pair, without pprof
//	go run ./cmd/benchcmp -sweep -skip-pprof          # 25k-200k, 1M top, gate 200 vs 200
//	go run ./cmd/benchcmp -runs 3 -pprof-runs 1       # profdiff best of 3, pprof once
//	go run ./cmd/benchcmp -dir /tmp/pairs             # keep the generated files for reuse
//	go run ./cmd/benchcmp -pictures -runs 2           # --format html and svg against json: time, memory, size
//
// Flags:
//
//	-stacks N            unique stacks per profile of the single pair (default 200000)
//	-functions N         functions in the synthetic program (default 20000)
//	-min-depth, -max-depth N  stack depth bounds in locations (default 15, 45)
//	-seed N              generator seed (default 1)
//	-pcs N               most Locations per function; 0 realistic, 1 one per function
//	-runs N              runs per command; tables show the fastest run and the largest peak RSS (default 1)
//	-pprof-runs N        runs of pprof (default -runs)
//	-skip-pprof          do not run pprof at all
//	-skip-pprof-above N  do not run pprof on pairs of more than N stacks (default 200000:
//	                     at 1M it takes minutes and GBs); 0 = no limit. The table says why
//	-sweep               time every size of -sizes instead of the single pair
//	-sizes LIST          stack counts for -sweep (default 25000,50000,100000,200000)
//	-top-stacks N        stacks of the profile for the `profdiff top` table; 0 = no
//	                     table (default 1000000 with -sweep, 0 without)
//	-gate-profiles N     profiles per side for the gate table; 0 = no table
//	                     (default 200 with -sweep, 0 without)
//	-gate-stacks N       unique stacks per gate profile (default 4000: about 1.0 MB gzipped,
//	                     as the 20,000-function program's tables dominate a small profile)
//	-dir DIR             work directory for the binary and the profiles, kept; profiles
//	                     already there are reused (default: a temporary directory, removed)
//	-keep                keep the temporary work directory (its path goes to stderr)
//	-profdiff BIN        profdiff binary to time (default: go build ./cmd/profdiff)
//	-timeout D           limit per command run (default 15m)
//	-pictures            time --format html and svg against json on the pair instead
//
// profdiff is built from the working tree with `go build` into the work
// directory; pprof is the toolchain's (`go tool -n pprof`). Every command
// writes its report to /dev/null; the gate's exit status 1 (a check
// failed, as it does on these pairs, whose new side has more lock
// contention) is not a failure. Peak RSS comes from getrusage (ru_maxrss)
// and is reported on Unix only. Sizes are MiB (2^20 bytes) in the tables,
// and the targets' "MB" are read as the tables' MiB. Progress, one line per
// run, goes to stderr.
//
// Generated files are named after the synth Config and synth.Version, so a
// -dir filled by an older generator is not reused by mistake.
//
// The targets (the performance issue's done-when, checked on the rows
// nearest their sizes; a line says when the run measured another size):
// the 200k pair's diff in at most 0.30 s wall and 150 MB peak, at least
// 70x faster than pprof and within 2x of the decompression floor (the
// fastest inflater, the two files one after the other); `profdiff top` on
// the 1M profile in at most 3 s and 400 MB; the gate of 200 vs 200 1-MB
// profiles in at most 10 s and 200 MB.
//
// Its results, and the history of them, are in cmd/profdiff/README.md
// (Speed).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/profdiff/profdiff/profile/synth"
)

type options struct {
	cfg            synth.Config
	runs           int
	pprofRuns      int
	skipPprof      bool
	skipPprofAbove int
	sweep          bool
	sizes          []int
	topStacks      int
	gateProfiles   int
	gateStacks     int
	dir            string
	keep           bool
	profdiff       string
	timeout        time.Duration
	pictures       bool
}

func main() {
	if res := os.Getenv(spawnEnv); res != "" {
		os.Exit(spawnMain(res, os.Args[1:], os.Stderr))
	}
	if mode := os.Getenv(floorEnv); mode != "" {
		os.Exit(floorMain(mode, os.Args[1:], os.Stdout, os.Stderr))
	}
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

	title := "profdiff vs pprof and the decompression floor"
	if o.pictures {
		title = "profdiff's pictures vs its json"
	}
	fmt.Fprintf(stdout, "# %s\n\n%s, %s/%s, %d CPUs, GOGC=%q\n\n", title, goVersion(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), os.Getenv("GOGC"))

	if o.pictures {
		pr, err := pair(o.dir, o.cfg, stderr)
		if err != nil {
			return err
		}
		return runPictures(o, pr, stdout, stderr)
	}
	var rep report
	if o.sweep {
		err = runSweep(o, pprofBin, &rep, stdout, stderr)
	} else {
		err = runSingle(o, pprofBin, &rep, stdout, stderr)
	}
	if err != nil {
		return err
	}
	if err := runExtras(o, &rep, stdout, stderr); err != nil {
		return err
	}
	printTargets(stdout, &rep)
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
	fs.IntVar(&o.skipPprofAbove, "skip-pprof-above", 200_000, "do not run pprof on pairs of more than this many stacks (0: no limit)")
	fs.BoolVar(&o.sweep, "sweep", false, "run profdiff on several sizes (see -sizes) to show how time grows")
	fs.StringVar(&sizes, "sizes", "25000,50000,100000,200000", "stack counts for -sweep, comma-separated")
	fs.IntVar(&o.topStacks, "top-stacks", -1, "stacks of the profile for the `profdiff top` table, 0: none (default 1000000 with -sweep, else 0)")
	fs.IntVar(&o.gateProfiles, "gate-profiles", -1, "profiles per side for the gate table, 0: none (default 200 with -sweep, else 0)")
	fs.IntVar(&o.gateStacks, "gate-stacks", 4_000, "unique stacks per gate profile (4000: about 1 MB gzipped)")
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
	if err := o.check(sizes); err != nil {
		return o, err
	}
	return o, nil
}

// check validates the parsed flags and fills the defaults that depend on
// other flags.
func (o *options) check(sizes string) error {
	if o.runs < 1 {
		return errors.New("-runs must be at least 1")
	}
	if o.pprofRuns == 0 {
		o.pprofRuns = o.runs
	} else if o.pprofRuns < 0 {
		return errors.New("-pprof-runs must be at least 1")
	}
	if c := o.cfg; c.PCsPerFunction < 0 || c.Stacks < 0 || c.Functions < 1 || c.MinDepth < 1 || c.MaxDepth < c.MinDepth {
		return fmt.Errorf("bad profile shape: -stacks %d -functions %d -min-depth %d -max-depth %d -pcs %d", c.Stacks, c.Functions, c.MinDepth, c.MaxDepth, c.PCsPerFunction)
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-sizes: bad size %q", s)
		}
		o.sizes = append(o.sizes, n)
	}
	if o.topStacks < 0 {
		o.topStacks = 0
		if o.sweep {
			o.topStacks = 1_000_000
		}
	}
	if o.gateProfiles < 0 {
		o.gateProfiles = 0
		if o.sweep {
			o.gateProfiles = 200
		}
	}
	if o.gateStacks < 1 {
		return errors.New("-gate-stacks must be at least 1")
	}
	if o.skipPprofAbove < 0 {
		return errors.New("-skip-pprof-above must be at least 0")
	}
	return nil
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
// ratio to json: the budget is an html page of at most about 3 MB in at
// most 1.5x the json diff's time and 1.5x its peak memory.
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
	fmt.Fprintln(stdout, "| `profdiff diff --format` | wall | user+sys | peak RSS | output | wall / json | cpu / json | RSS / json |")
	fmt.Fprintln(stdout, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for i, f := range formats {
		fmt.Fprintf(stdout, "| `%s` | %s | %s | %s | %.2f MB | %.2fx | %.2fx | %s |\n", f, secs(res[i].wall), secs(res[i].cpu), mib(res[i].maxRSS),
			float64(size[i])/1e6, ratio(res[i].wall, res[0].wall), ratio(res[i].cpu, res[0].cpu), rssRatio(res[i], res[0]))
	}
	html := 1
	rss := "unknown (no peak RSS)"
	if res[html].maxRSS > 0 && res[0].maxRSS > 0 {
		r := float64(res[html].maxRSS) / float64(res[0].maxRSS)
		rss = fmt.Sprintf("%s (%.2fx)", verdict(r <= 1.5), r)
	}
	fmt.Fprintf(stdout, "\nTargets (for the 200,000-stack pair): html ≤ about 3 MB: %s (%.2f MB); html ≤ 1.5x the json diff's time: %s (%.2fx wall); ≤ 1.5x its memory: %s.\n",
		verdict(size[html] <= 3e6), float64(size[html])/1e6, verdict(ratio(res[html].wall, res[0].wall) <= 1.5), ratio(res[html].wall, res[0].wall), rss)
	return nil
}

// fileMB is a file's size in MB (10^6 bytes), 0 if it cannot be read.
func fileMB(name string) float64 {
	st, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return float64(st.Size()) / 1e6
}
