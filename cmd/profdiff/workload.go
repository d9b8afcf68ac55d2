package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/profile/source"
	"github.com/profdiff/profdiff/workloads"
	"github.com/profdiff/profdiff/workloads/child"
	"github.com/profdiff/profdiff/workloads/jsonserver"
)

// workloadFlags are the flags shared by `workload` and `demo`.
type workloadFlags struct {
	duration    time.Duration
	warmup      time.Duration
	connections int
	out         string
	perf        bool
}

func (w *workloadFlags) register(fs *flag.FlagSet, window time.Duration) {
	durationFlag(fs, &w.duration, window, "measured window of each run, whole seconds (profiles are captured over it)", true)
	durationVar(fs, &w.warmup, "warmup", time.Second, "load before each measured window, discarded")
	fs.IntVarP(&w.connections, "connections", "c", 0, "load generator connections (default min(256, 64×CPUs))")
	fs.StringVarP(&w.out, "out", "o", "", "folder for the capture folders (default: a new folder under profdiff-out/)")
	fs.BoolVar(&w.perf, "perf", true, "also record the server with perf during each window, where perf can record (perf.txt.gz; --perf=false leaves it out)")
}

// validate checks the flags; cmd names the command in messages.
func (w *workloadFlags) validate(cmd string) error {
	if err := checkDuration(cmd, w.duration, true); err != nil {
		return err
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
// profdiff-out/<time>-<what> folder, so no run overwrites another. A
// fresh folder's older siblings for the same what beyond the newest
// keepRuns are removed, which stderr is told.
func (w *workloadFlags) outDir(what string, stderr io.Writer) (string, error) {
	dir := w.out
	if dir == "" {
		dir = filepath.Join(outRoot, time.Now().Format("20060102-150405")+"-"+what)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--out: %v", err)
	}
	if w.out == "" {
		removed, err := pruneRuns(outRoot, what, keepRuns)
		if err != nil {
			say(stderr, "warning: removing old run folders: %v", err)
		}
		if len(removed) > 0 {
			say(stderr, "removed %s under %s/ (the newest %d %s runs are kept): %s", plural(len(removed), "older folder"), outRoot, keepRuns, what, strings.Join(removed, ", "))
		}
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
	if slices.Contains(jsonserver.Variants, v) {
		return nil
	}
	return usagef("--variant: unknown variant %q (want %s)%s", v, strings.Join(jsonserver.Variants, ", "), didYouMean(v, jsonserver.Variants))
}

// workloadJSONCommand is `profdiff workload json`: one run per core count,
// each with its own capture folder, then the scaling table.
func workloadJSONCommand(fs *flag.FlagSet) runFunc {
	var wf workloadFlags
	var cores, variant string
	var project int
	var out outputFlags
	fs.StringVar(&variant, "variant", "baseline", "server variant: "+strings.Join(jsonserver.Variants, ", "))
	fs.StringVar(&cores, "cores", "", "core counts to sweep, e.g. 1,2,4,8 (default: powers of two up to the CPU count)")
	fs.IntVar(&project, "project", 0, "project requests/s to this many cores from what the runs measured (the lock's bound, the USL where 3 points exist): where it would peak, and why")
	out.register(fs, sweepFormats...)
	wf.register(fs, 5*time.Second)
	return func(ctx context.Context, e env, pos []string) error {
		if len(pos) != 1 || pos[0] != "json" {
			return unknownWorkload(pos)
		}
		o, err := out.resolve("workload json", e)
		if err != nil {
			return err
		}
		if err := wf.validate("workload json"); err != nil {
			return err
		}
		if err := checkVariant(variant); err != nil {
			return err
		}
		cs, err := parseCores(cores)
		if err != nil {
			return err
		}
		if project < 0 || project > 4096 {
			return usagef("--project: %d is not a core count (want 1 to 4096, or 0 for no projection)", project)
		}
		dir, err := wf.outDir("json-"+variant, e.stderr)
		if err != nil {
			return err
		}
		results, failed, err := runJSONSweep(ctx, e, wf, variant, cs, dir)
		if err != nil {
			return err
		}
		rep := workloads.SweepReport(workloads.SweepRows(results))
		rep.Title = fmt.Sprintf("profdiff workload json: the %s server by cores", variant)
		rep.Blocks = append([]report.Block{report.Para{Lines: []report.Line{report.Cat("json server, variant ", variant, ", ",
			wf.duration.String(), " per run after ", wf.warmup.String(), " warmup; capture folders under ", dir)}}}, rep.Blocks...)
		if project > 0 {
			workloads.AddProjection(rep, workloads.ProjectSweep(ctx, results, project))
		}
		if o.format == render.HTML {
			first := "first"
			if d := jsonDiffs(results); len(d) > 0 {
				first = fmt.Sprintf("%d core(s)", d[0].base.Config.Cores)
			}
			err = sweepPages{
				cmd: "workload json", dir: dir, diffs: jsonDiffs(results),
				intro: "Diff pages, each run against the " + first + " run (click a point of a chart to open its page):",
				key:   func(_ string, p report.Point) string { return strconv.Itoa(int(p.X)) },
			}.write(ctx, e, rep, o)
		} else {
			err = o.write(e.stdout, rep)
		}
		if err != nil {
			return err
		}
		if failed != nil {
			return fmt.Errorf("workload json: %d of %d runs failed; the first: %w", countFailed(results), len(results), failed)
		}
		return nil
	}
}

// sweepFormats are the sweeps' formats: text, JSON and the page with
// charts.
var sweepFormats = []render.Format{render.Table, render.Markdown, render.JSON, render.HTML}

// sweepRun is one run of a sweep to diff against the sweep's reference
// run: what names it in messages, key is its chart points' (see
// sweepPages.key).
type sweepRun struct {
	what, key string
	base, new *workloads.Result
}

// sweepPages is a sweep's HTML: cmd names the command in messages, dir is
// the sweep's folder, intro the line over the list of diff pages, and key
// the sweepRun.key of a chart point of series.
type sweepPages struct {
	cmd, dir, intro string
	diffs           []sweepRun
	key             func(series string, p report.Point) string
}

// jsonDiffs are the core-count sweep's runs to diff: each that did not
// fail, after the first that did not, against that first.
func jsonDiffs(results []*workloads.Result) []sweepRun {
	var diffs []sweepRun
	var first *workloads.Result
	for _, r := range results {
		switch {
		case r.Failure != nil:
		case first == nil:
			first = r
		default:
			diffs = append(diffs, sweepRun{what: fmt.Sprintf("%d cores", r.Config.Cores), key: strconv.Itoa(r.Config.Cores), base: first, new: r})
		}
	}
	return diffs
}

// write writes the sweep's HTML: the diff page of each run (see
// writeRunDiffs), the sweep's page with its chart points linked to them
// into dir/sweep.html (links relative to dir), and the same page on
// stdout with the links relative to the current directory, as the folder
// paths it prints are, so that a page saved there (> sweep.html) links
// right too.
func (sp sweepPages) write(ctx context.Context, e env, rep *report.Report, o output) error {
	fromDir, fromCWD, lines := sp.writeRunDiffs(ctx, e)
	list := -1
	if len(lines) > 0 {
		list = len(rep.Blocks)
		rep.Blocks = append(rep.Blocks, report.Para{})
	}
	// link points the charts and the list of pages at the pages, from
	// where the page is written.
	link := func(links map[string]string) {
		if list >= 0 {
			rep.Blocks[list] = sp.pageList(lines, links)
		}
		workloads.LinkCharts(rep, func(series string, p report.Point) string { return links[sp.key(series, p)] })
	}
	link(fromDir)
	page := filepath.Join(sp.dir, "sweep.html")
	if err := writeFile(page, func(w io.Writer) error { return o.write(w, rep) }); err != nil {
		say(e.stderr, "%s: %s not written: %v", sp.cmd, page, err)
	} else {
		say(e.stderr, "%s: wrote %s", sp.cmd, page)
	}
	link(fromCWD)
	return o.write(e.stdout, rep)
}

// pageList is the paragraph listing the diff pages, each linked by its
// key in links (or unlinked, with why there is no page).
func (sp sweepPages) pageList(lines []pageLine, links map[string]string) report.Para {
	p := report.Para{Lines: []report.Line{report.Cat(sp.intro)}}
	for _, l := range lines {
		page := report.Text(l.page)
		if href, ok := links[l.key]; ok {
			page = page.WithLink(href)
		}
		p.Lines = append(p.Lines, report.Cat(l.what, ": ", page))
	}
	return p
}

// writeRunDiffs writes, into the folder of each run to diff, the HTML
// diff of its capture against its reference run's (as profdiff diff
// --format html BASE NEW: wall-clock profiles when both have them), named
// diff-vs-BASEFOLDER.html. It returns each page's path by key, relative
// to the sweep's folder and to the current directory, and a line per run
// for the report; a page that could not be written is said on stderr and
// in its line, and has no link.
func (sp sweepPages) writeRunDiffs(ctx context.Context, e env) (fromDir, fromCWD map[string]string, lines []pageLine) {
	fromDir, fromCWD = map[string]string{}, map[string]string{}
	wd, wdErr := os.Getwd()
	for _, d := range sp.diffs {
		page := filepath.Join(d.new.Config.Out, "diff-vs-"+filepath.Base(d.base.Config.Out)+".html")
		if err := writeRunDiff(ctx, e, sp.cmd, d.base, d.new, page); err != nil {
			say(e.stderr, "%s: %s: no diff page: %v", sp.cmd, d.what, err)
			lines = append(lines, pageLine{what: d.what, page: "no diff page (" + err.Error() + ")"})
			continue
		}
		if rel, err := filepath.Rel(sp.dir, page); err == nil {
			fromDir[d.key] = filepath.ToSlash(rel)
		}
		if abs, err := filepath.Abs(page); err == nil && wdErr == nil {
			if rel, err := filepath.Rel(wd, abs); err == nil {
				fromCWD[d.key] = filepath.ToSlash(rel)
			}
		}
		lines = append(lines, pageLine{what: d.what, key: d.key, page: page})
	}
	return fromDir, fromCWD, lines
}

// pageLine is a run's line in the list of diff pages: the page's path
// (or why there is none) and the key of its link.
type pageLine struct{ what, key, page string }

// writeRunDiff writes the HTML diff of run nw's capture against base's
// into page, through the code path of profdiff diff --format html.
func writeRunDiff(ctx context.Context, e env, cmd string, base, nw *workloads.Result, page string) error {
	for _, r := range []*workloads.Result{base, nw} {
		if err := capturedSomething(r); err != nil {
			return err
		}
	}
	sides := []source.Side{{Args: []string{base.Config.Out}}, {Args: []string{nw.Config.Out}}}
	opts := diff.Options{Top: htmlTop}
	treeFor(&opts, render.HTML)
	a := diff.NewAnalyzer(opts)
	if err := loadProfiles(ctx, cmd, e.stderr, sides, source.Options{Load: profile.Options{AllowEmpty: true}}, a.Add); err != nil {
		return err
	}
	result := a.Diff()
	for _, w := range result.Warnings {
		say(e.stderr, "warning: %s: %s", page, w)
	}
	return writeFile(page, func(w io.Writer) error {
		return render.Write(w, present.Diff(result), render.HTML, render.Options{})
	})
}

// writeFile writes path through write, removing it when write fails so
// that no half page is left to link to.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// countFailed counts the failed runs of a sweep.
func countFailed(results []*workloads.Result) int {
	n := 0
	for _, r := range results {
		if r.Failure != nil {
			n++
		}
	}
	return n
}

// unknownWorkload says which workloads there are, suggesting the nearest
// to a misspelt one.
func unknownWorkload(pos []string) error {
	names := child.Builtin().Names()
	if len(pos) == 1 {
		if s := nearest(pos[0], []string{"json", "wasm"}); s != "" {
			return usagef("workload: no workload %q; did you mean %s? (built in: %s)", pos[0], s, strings.Join(names, ", "))
		}
		return usagef("workload: no workload %q (built in: %s)", pos[0], strings.Join(names, ", "))
	}
	return usagef("workload: want the workload name; built in: %s", strings.Join(names, ", "))
}

// runJSONSweep runs the JSON server's variant once per core count, each
// into its folder cores-N under dir. A run whose child died or hung is a
// failed row of a sweep of several (said on stderr, and returned as
// failed, the first such error, so the command exits 2 after the table);
// any other error, or a single run's, ends the sweep.
func runJSONSweep(ctx context.Context, e env, wf workloadFlags, variant string, cores []int, dir string) (results []*workloads.Result, failed, err error) {
	for _, n := range cores {
		cfg := workloads.RunConfig{
			Workload: "json", Variant: variant, Cores: n, Connections: wf.connections,
			Warmup: wf.warmup, Seconds: wholeSeconds(wf.duration), Out: filepath.Join(dir, fmt.Sprintf("cores-%d", n)), Log: e.stderr,
			NoPerf: !wf.perf, StatsPath: "/stats",
		}
		res, err := workloads.Run(ctx, cfg)
		var ce *workloads.ChildError
		switch {
		case err != nil && errors.As(err, &ce) && len(cores) > 1 && ctx.Err() == nil:
			say(e.stderr, "%d cores: %v", n, err)
			results = append(results, workloads.Failed(cfg, err))
			if failed == nil {
				failed = err
			}
			continue
		case err != nil:
			return nil, nil, err
		}
		warnLoad(e.stderr, fmt.Sprintf("%d cores", n), res)
		results = append(results, res)
	}
	return results, failed, nil
}

// warnLoad repeats a run's failed-request warnings on stderr, so errors
// never pass for saturation even when only the table is read; what names
// the run.
func warnLoad(stderr io.Writer, what string, res *workloads.Result) {
	for _, w := range res.Load.Warnings() {
		say(stderr, "warning: %s: %s", what, w)
	}
}

// demoVariants are the demo's two runs: base and new.
var demoVariants = [2]string{"baseline", "global-lock"}

// demoCommand is the README's main command: baseline and global-lock at
// the machine's core count, then their diff.
func demoCommand(fs *flag.FlagSet) runFunc {
	var wf workloadFlags
	var cores int
	var trace bool
	var pairs int
	var out outputFlags
	fs.IntVar(&cores, "cores", runtime.NumCPU(), "GOMAXPROCS of the server")
	fs.IntVar(&pairs, "pairs", workloads.MaxPairs, "on a busy machine, run up to this many interleaved pairs in all (at most 5, within 2 minutes; 1: no repeats)")
	fs.BoolVar(&trace, "trace", false, "also capture each run's execution trace (trace.out.gz, 3 MB or more a run; the demo's diff does not read it)")
	out.register(fs, render.Formats...)
	wf.register(fs, 3*time.Second)
	return func(ctx context.Context, e env, pos []string) error {
		if err := noArgs("demo", pos); err != nil {
			return err
		}
		o, err := out.resolve("demo", e)
		if err != nil {
			return err
		}
		if err := wf.validate("demo"); err != nil {
			return err
		}
		if cores < 1 {
			return usagef("--cores must be at least 1")
		}
		if pairs < 1 || pairs > workloads.MaxPairs {
			return usagef("--pairs must be 1 to %d, not %d", workloads.MaxPairs, pairs)
		}
		dir, err := wf.outDir("demo", e.stderr)
		if err != nil {
			return err
		}
		res, cond, err := runDemoPair(ctx, e, wf, cores, pairs, trace, dir)
		if err != nil {
			return err
		}
		if err := diffDemo(ctx, e, res, cond, o); err != nil {
			return err
		}
		if n, err := folderSize(dir); err == nil {
			say(e.stderr, "demo: the captures take %s in %s", megabytes(n), dir)
		}
		return nil
	}
}

// demoPerfMax bounds each demo run's perf script text: 32 MiB, about
// 2.5 MB gzipped, a little more than a 3 s window on a busy 2-core
// machine writes (21-24 MiB). With the trace left out, the demo's folder
// stays under 10 MB.
const demoPerfMax = 32 << 20

// demoProfiles are the kinds the demo captures: every kind but the
// execution trace, unless withTrace.
func demoProfiles(withTrace bool) []string {
	if withTrace {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(capture.Kinds), func(k string) bool { return k == "trace" })
}

// megabytes is n bytes in MB (10⁶ bytes), one decimal.
func megabytes(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB" }

// runDemoPair runs the JSON server's two demo variants into dir/VARIANT,
// measuring the machine's load before and after each run (kept in
// dir/conditions.json). When the machine was too busy (workloads.Judge),
// it runs further interleaved pairs, within workloads.MorePairs, whose
// throughput alone is kept, and cond says what they showed.
func runDemoPair(ctx context.Context, e env, wf workloadFlags, cores, maxPairs int, withTrace bool, dir string) (res [2]*workloads.Result, cond workloads.Conditions, err error) {
	start := time.Now()
	ml := workloads.MachineLoad{CPUs: runtime.NumCPU(), LoadBefore: workloads.ReadLoad().Load1}
	cfg := workloads.RunConfig{Workload: "json", Cores: cores, Connections: wf.connections,
		Warmup: wf.warmup, Seconds: wholeSeconds(wf.duration), NoPerf: !wf.perf,
		Profiles: demoProfiles(withTrace), PerfMaxScript: demoPerfMax}
	for i, v := range demoVariants {
		fmt.Fprintf(e.stderr, "profdiff demo: running the JSON server (%s) at %d cores for %v + %v under load...\n", v, cores, wf.warmup, wf.duration)
		cfg.Variant, cfg.Out = v, filepath.Join(dir, v)
		if res[i], err = demoRun(ctx, e, cfg, &ml); err != nil {
			return res, cond, err
		}
	}
	cond = workloads.Judge(ml)
	pairs := [][2]float64{{res[0].Load.RPSOK, res[1].Load.RPSOK}}
	if cond.Busy && ml.Runs != nil {
		// Repeats need throughput only: no perf, one cheap profile, and
		// their folders go once read.
		rep := cfg
		rep.NoPerf, rep.Profiles, rep.PerfMaxScript = true, []string{"goroutine"}, 0
		for last := time.Since(start); workloads.MorePairs(len(pairs), maxPairs, time.Since(start), last); {
			t0 := time.Now()
			say(e.stderr, "demo: the machine is busy: interleaved pair %d of at most %d, to see whether the change holds", len(pairs)+1, maxPairs)
			var p [2]float64
			for i, v := range demoVariants {
				rep.Variant, rep.Out = v, filepath.Join(dir, fmt.Sprintf(".pair-%d-%s", len(pairs)+1, v))
				r, err := demoRun(ctx, e, rep, nil)
				os.RemoveAll(rep.Out)
				if err != nil {
					return res, cond, err
				}
				p[i] = r.Load.RPSOK
			}
			pairs = append(pairs, p)
			last = time.Since(t0)
		}
		cond.Stable, cond.Pairs = workloads.PairsAgree(pairs)
	}
	ml.Pairs = pairs
	if err := writeConditions(filepath.Join(dir, "conditions.json"), ml); err != nil {
		say(e.stderr, "warning: %v", err)
	}
	return res, cond, nil
}

// demoRun is one demo run, with a progress line, measuring the machine's
// load around it into ml (when not nil).
func demoRun(ctx context.Context, e env, cfg workloads.RunConfig, ml *workloads.MachineLoad) (*workloads.Result, error) {
	before := workloads.ReadLoad()
	stop := demoProgress(e.stderr, cfg.Variant, cfg.Warmup+time.Duration(cfg.Seconds)*time.Second)
	r, err := workloads.Run(ctx, cfg)
	stop()
	if after := workloads.ReadLoad(); err == nil && ml != nil && before.OK && after.OK {
		ml.Runs = append(ml.Runs, workloads.RunBetween(cfg.Variant, before, after, r.Load.RPSOK))
	}
	if err == nil {
		err = capturedSomething(r)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err // the interruption's own words
		}
		return nil, fmt.Errorf("demo: the %s run failed: %w", cfg.Variant, err)
	}
	warnLoad(e.stderr, fmt.Sprintf("%d cores", cfg.Cores), r)
	fmt.Fprintf(e.stderr, "profdiff demo: %s: %.0f requests/s, run in %.1f s\n", cfg.Variant, r.Load.RPSOK, time.Since(before.Wall).Seconds())
	return r, nil
}

// capturedSomething checks that a run's capture folder holds a profile
// the demo can diff, and otherwise says why not: the capture's own errors
// rather than what reading the folder would say.
func capturedSomething(r *workloads.Result) error {
	m := r.Manifest
	switch {
	case m == nil:
		return fmt.Errorf("no capture written to %s", r.Config.Out)
	case m.Interrupted:
		return fmt.Errorf("the capture in %s is incomplete: %s", r.Config.Out, strings.Join(m.Errors, "; "))
	case len(m.Files) == 0:
		why := strings.Join(m.Errors, "; ")
		if why == "" {
			why = "the server exposed none"
		}
		return fmt.Errorf("no profile captured in %s: %s", r.Config.Out, why)
	}
	return nil
}

// diffDemo diffs the two runs' capture folders (wall-clock when both have
// it, else CPU) as 'profdiff diff --by caller --top 12' does, between an
// introduction and the follow-up commands for table and Markdown output.
func diffDemo(ctx context.Context, e env, res [2]*workloads.Result, cond workloads.Conditions, o output) error {
	base, nw := res[0].Config.Out, res[1].Config.Out
	sides := []source.Side{{Args: []string{base}}, {Args: []string{nw}}}
	opts := diff.Options{Top: 12, By: result.ByCaller}
	if o.format == render.CSV || o.format == render.JSON {
		opts.Top = -1 // data formats hold every row
	}
	treeFor(&opts, o.format)
	a := diff.NewAnalyzer(opts)
	if err := loadProfiles(ctx, "demo", e.stderr, sides, source.Options{}, a.Add); err != nil {
		return err
	}
	result := a.Diff()
	warn(e.stderr, result.Warnings...)
	rep := present.Diff(result)
	caution := demoCautions(result, res, cond)
	if len(caution) > 0 {
		// In the verdict, which every format with one shows (the json
		// summary too); on stderr for the formats without one.
		if rep.Verdict == nil {
			rep.Verdict = &report.Verdict{}
		}
		for _, c := range caution {
			rep.Verdict.Lines = append(rep.Verdict.Lines, report.Cat(c))
		}
		if o.format != render.Table && o.format != render.Markdown && o.format != render.HTML && o.format != render.JSON {
			warn(e.stderr, caution...)
		}
	}
	if o.format == render.Table || o.format == render.Markdown || o.format == render.HTML {
		head := append([]report.Block{demoIntro(res)}, demoCharts(res)...) // the charts: html only
		rep.Blocks = append(append(head, rep.Blocks...), demoOutro(result, res))
	}
	return o.write(e.stdout, rep)
}

// demoIntro says what the two runs were and how their throughput moved.
func demoIntro(res [2]*workloads.Result) report.Para {
	b, n := res[0].Load, res[1].Load
	return report.Para{Lines: []report.Line{
		report.Cat("What you are looking at: the same JSON server twice at ", report.Int(int64(res[0].Config.Cores)), " cores, once as is (base) and once with every"),
		report.Cat("request parked and woken through a registry behind one global mutex (new), as .NET 11's wait subsystem did."),
		report.Cat("Throughput: ", report.Fixed(b.RPSOK, 0), " → ", report.Fixed(n.RPSOK, 0), " requests/s (p99 ", report.Fixed(b.LatencyMS.P99, 2), " → ",
			report.Fixed(n.LatencyMS.P99, 2), " ms); where the server's goroutines spent their time:"),
	}}
}
