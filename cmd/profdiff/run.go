package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/source"
)

// run is the whole program behind main, so tests can call it. When ctx
// ends (main's ends on SIGINT or SIGTERM) the command stops and run
// returns an error wrapping errInterrupted and the context's cause (the
// signal), whatever the command returned: an interrupted run never
// reports success.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	// Every message, however written (a library's log, a child's
	// output), reaches the terminal with its controls escaped; say fits
	// the command's own (see messages).
	stderr = newMessages(stderr)
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return usagef("no command given")
	}
	switch args[0] {
	case "-h", "--help":
		args = append([]string{"help"}, args[1:]...)
	case "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, err := lookup(args)
	if err != nil {
		return err
	}
	err = c.run(ctx, env{stdin: stdin, stdout: stdout, stderr: stderr}, args[1:])
	if ctx.Err() != nil && !errors.Is(err, errHelp) {
		return interrupted(context.Cause(ctx), err)
	}
	return err
}

// common holds the flags shared by diff, top and gate.
type common struct {
	out          outputFlags
	sampleIndex  string
	kind         string
	cum          bool
	by           string
	top          int
	focus        string
	ignore       string
	rules        []string
	maxSize      string
	keepProfiler bool
	modules      string
	allowRemote  bool
	symbols      []string
	// normalize and peek are registered by registerView (diff, top).
	normalize, peek string
	fs              *flag.FlagSet
}

func (c *common) register(fs *flag.FlagSet, formats ...render.Format) {
	c.fs = fs
	c.out.register(fs, formats...)
	fs.StringVar(&c.sampleIndex, "sample-index", "", "sample type to use, by name (cpu, delay, samples, ...) or index; default: the profile's default")
	fs.StringVar(&c.kind, "kind", "", "override the detected profile kind: cpu, wall, mutex, block, goroutine, trace, heap, unknown; in a capture folder also perf (its perf recording, kind as detected)")
	fs.BoolVar(&c.cum, "cum", false, "inclusive (cumulative) method shares instead of self")
	fs.StringVar(&c.by, "by", "", "attribute a sample to its leaf 'frame', to the 'decider' frame that chose its bucket, or to the program's own 'caller' behind it (default: caller for wall, goroutine, trace, block and mutex profiles, frame otherwise)")
	fs.IntVar(&c.top, "top", diff.DefaultTop, "method rows to show (0 for all; CSV and JSON hold every row unless --top is given)")
	fs.StringVar(&c.focus, "focus", "", "keep only samples with a frame matching this regexp")
	fs.StringVar(&c.ignore, "ignore", "", "drop samples with a frame matching this regexp")
	fs.StringArrayVar(&c.rules, "rules", nil, "extra rule file, checked before the built-in rules (repeatable)")
	fs.StringVar(&c.maxSize, "max-size", "1GiB", "largest profile accepted, after decompression; a source past it fails holding at most 1.5 times it")
	fs.BoolVar(&c.keepProfiler, "keep-profiler", false, "keep samples of the profiler's own goroutines (fgprof, runtime/pprof writer)")
	fs.StringVar(&c.modules, "modules", "auto", "name methods module!method: on, off, or auto (on for .nettrace profiles)")
	fs.BoolVar(&c.allowRemote, "allow-remote", false, "allow profile URLs of a host that is not loopback")
	registerSymbols(fs, &c.symbols)
}

// registerView registers the flags of diff and top that choose what the
// method rows show: --peek, and for a comparison (normalize) --normalize.
func (c *common) registerView(fs *flag.FlagSet, normalize bool) {
	if normalize {
		fs.StringVar(&c.normalize, "normalize", "", "sort and note method rows by share, rate (per second of wall time) or value (default: rate when both sides' durations are known, else share)")
	}
	fs.StringVar(&c.peek, "peek", "", "for frames matching this regexp, list their callers and callees with base, new and Δ")
}

// sources are the options the command's profile arguments are resolved
// and loaded with, each read as load says.
func (c *common) sources(load profile.Options) source.Options {
	return source.Options{Load: load, Kind: c.kind, AllowRemote: c.allowRemote}
}

// settings are the shared flags, validated: how to analyse, how to render
// and how to load.
type settings struct {
	analysis diff.Options
	out      output
	load     profile.Options
}

// settings validates the shared flags of command cmd; e.stdin is what "-"
// reads, e.stdout where the report goes.
func (c *common) settings(cmd string, e env) (settings, error) {
	var s settings
	var err error
	if s.out, err = c.out.resolve(cmd, e); err != nil {
		return s, err
	}
	if s.analysis, err = c.analysis(); err != nil {
		return s, err
	}
	if !c.fs.Changed("top") {
		switch s.out.format {
		case render.CSV, render.JSON:
			s.analysis.Top = -1 // data formats hold every row unless asked
		case render.HTML:
			s.analysis.Top = htmlTop // a page's table is sorted and filtered by the reader
		}
	}
	treeFor(&s.analysis, s.out.format)
	if s.analysis.Rules, err = loadRules(c.rules); err != nil {
		return s, err
	}
	size, err := profile.ParseSize(c.maxSize)
	if err != nil {
		return s, usagef("--max-size: %v", err)
	}
	s.load = profile.Options{MaxSize: size, KeepProfiler: c.keepProfiler, Stdin: e.stdin}
	if s.load.Symbols, err = symbolOptions(c.symbols); err != nil {
		return s, err
	}
	if !c.allowRemote {
		s.load.CheckURL = checkLoopback // the typed URL and every redirect
	}
	// A side of a comparison may have recorded nothing (a mutex profile of
	// a run without contention): it is loaded and warned about, and the
	// analysis says the side is empty. top of an empty profile fails.
	s.load.AllowEmpty = cmd == "diff" || cmd == "gate"
	return s, nil
}

// htmlTop is the method rows an html page holds unless --top says.
const htmlTop = 200

// treeFor asks the analysis for the call tree that format f draws or
// writes: the html and svg formats merge subtrees too narrow to see
// (render.TreeMin); the folded formats keep every stack, each frame
// named as its profile named it (diff.Options.TreeFrames: folded stacks
// are data, and a build variant such as f.part.0 stays itself).
func treeFor(o *diff.Options, f render.Format) {
	switch f {
	case render.HTML, render.SVG:
		o.CallTree, o.TreeMin = true, render.TreeMin
	case render.Folded, render.DiffFolded:
		o.CallTree, o.TreeMin, o.TreeFrames, o.TreeStacks = true, 0, true, true
	}
}

// analysis validates the flags that become diff.Options (all but --rules).
func (c *common) analysis() (diff.Options, error) {
	o := diff.Options{SampleIndex: c.sampleIndex, Cum: c.cum, Top: c.top}
	var err error
	if c.by != "" {
		if o.By, err = result.ParseBy(c.by); err != nil {
			return o, usagef("--by: %v%s", err, didYouMean(c.by, []string{string(result.ByFrame), string(result.ByDecider), string(result.ByCaller)}))
		}
	}
	if o.Normalize, err = result.ParseNormalize(c.normalize); err != nil {
		return o, usagef("--normalize: %v%s", err, didYouMean(c.normalize, []string{string(result.NormalizeAuto), string(result.NormalizeShare), string(result.NormalizeRate), string(result.NormalizeValue)}))
	}
	if o.Peek, err = compileFlag("--peek", c.peek); err != nil {
		return o, err
	}
	if c.top < 0 {
		return o, usagef("--top must be 0 (all) or positive, not %d", c.top)
	}
	if c.top == 0 {
		o.Top = -1
	}
	if c.kind != "" && !captureFileKind(c.kind) {
		if o.Kind, err = profile.ParseKind(c.kind); err != nil {
			return o, usagef("--kind: %v%s", err, didYouMean(c.kind, kindNames()))
		}
	}
	if o.Focus, err = compileFlag("--focus", c.focus); err != nil {
		return o, err
	}
	if o.Ignore, err = compileFlag("--ignore", c.ignore); err != nil {
		return o, err
	}
	switch c.modules {
	case "auto":
		o.Modules = diff.ModulesAuto
	case "on", "true":
		o.Modules = diff.ModulesOn
	case "off", "false":
		o.Modules = diff.ModulesOff
	default:
		return o, usagef("--modules: %q is not on, off or auto", c.modules)
	}
	return o, nil
}

// compileFlag compiles a regexp flag's value; nil for "".
func compileFlag(name, src string) (*regexp.Regexp, error) {
	if src == "" {
		return nil, nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, usagef("%s: invalid regexp: %v", name, err)
	}
	return re, nil
}

func loadRules(files []string) (*rules.Set, error) {
	rs := rules.Default()
	var user []*rules.Rule
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("--rules: %v", err)
		}
		rules, err := rules.Parse(name, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		user = append(user, rules...)
	}
	if len(user) > 0 {
		rs = rs.WithUserRules(user)
	}
	return rs, nil
}

// sideFlags are the repeatable --base and --new of diff and gate.
type sideFlags struct {
	bases, news []string
	perRun      bool // gate: each profile is one run
}

func (f *sideFlags) register(fs *flag.FlagSet) {
	each := ""
	if f.perRun {
		each = ", one per run"
	}
	fs.StringArrayVar(&f.bases, "base", nil, "a base-side profile"+each+" (repeatable; globs are expanded)")
	fs.StringArrayVar(&f.news, "new", nil, "a new-side profile"+each+" (repeatable; globs are expanded)")
}

// sides takes the two sides of command cmd from --base/--new or from the
// two positional arguments pos.
func (f *sideFlags) sides(cmd string, pos []string) ([]source.Side, error) {
	switch {
	case len(f.bases) > 0 || len(f.news) > 0:
		if len(pos) > 0 {
			return nil, usagef("%s: give profiles either as BASE NEW or with --base/--new, not both (extra: %s)", cmd, strings.Join(pos, " "))
		}
		if len(f.bases) == 0 || len(f.news) == 0 {
			hint := ""
			if f.perRun {
				hint = " (ideally 5 or more each, one per run)"
			}
			return nil, usagef("%s: both --base and --new need at least one profile%s", cmd, hint)
		}
		return []source.Side{{Name: "--base", Args: f.bases}, {Name: "--new", Args: f.news}}, nil
	case len(pos) == 2:
		return []source.Side{{Name: "BASE", Args: pos[:1]}, {Name: "NEW", Args: pos[1:]}}, nil
	case f.perRun:
		return nil, usagef("%s: want --base and --new profiles (or BASE NEW), got %d argument(s)", cmd, len(pos))
	default:
		return nil, usagef("%s: want two profiles (BASE NEW), got %d", cmd, len(pos))
	}
}

const diffSynopsis = "  profdiff diff [flags] BASE NEW\n  profdiff diff [flags] --base A1 --base A2 --new B1 --new B2\n"

func diffCommand(fs *flag.FlagSet) runFunc {
	var c common
	var sf sideFlags
	var outPprof, side string
	c.register(fs, slices.Concat(render.Formats, render.CI, render.Pictures)...)
	c.registerView(fs, true)
	sf.register(fs)
	fs.StringVar(&outPprof, "output-pprof", "", "also write the diff's stacks as a pprof profile (pprof::base convention) to this file; its frames are named as --symbols named them")
	fs.StringVar(&side, "side", "new", "the side --format folded writes: base or new")
	return func(ctx context.Context, e env, pos []string) error {
		s, err := c.settings("diff", e)
		if err != nil {
			return err
		}
		switch strings.ToLower(side) {
		case "new":
		case "base":
			s.out.opts.FoldedBase = true
		default:
			return usagef("diff: --side: %q is not base or new", side)
		}
		if fs.Changed("side") && s.out.format != render.Folded {
			return usagef("diff: --side picks the side --format folded writes; --format %s shows both", s.out.format)
		}
		sides, err := sf.sides("diff", pos)
		if err != nil {
			return err
		}
		return runDiff(ctx, e, s, c.sources(s.load), sides, outPprof)
	}
}

// runDiff loads both sides (read as src says) into one Analyzer, renders
// the diff, and writes it as pprof to outPprof unless that is "".
func runDiff(ctx context.Context, e env, s settings, src source.Options, sides []source.Side, outPprof string) error {
	a, err := analyze(ctx, e, "diff", s, src, sides, outPprof)
	if err != nil {
		return err
	}
	r := a.Diff()
	return finish(ctx, e, s, a, r.Warnings, func() *report.Report { return present.DiffFor(r, s.out.format.Parts()) }, outPprof, r.SampleType, true)
}

// analyze loads sides (read as src says) into one new Analyzer, which
// keeps the stacks when outPprof is set, and returns it with every walk
// done: diff and top read the same way.
func analyze(ctx context.Context, e env, cmd string, s settings, src source.Options, sides []source.Side, outPprof string) (*diff.Analyzer, error) {
	s.analysis.Context = ctx // SIGINT and SIGTERM stop the walks and the tree's build
	s.analysis.Stacks = outPprof != ""
	a := diff.NewAnalyzer(s.analysis)
	src.Resolved = func(srcs [][]string) error {
		n := 0
		for _, side := range srcs {
			n += len(side)
		}
		a.Expect(n)
		return nil
	}
	src.Wait = a.Wait
	if err := guardOutputs(&src, outputFile{"--output-pprof", outPprof}); err != nil {
		return nil, err
	}
	err := loadInputs(ctx, cmd, e.stderr, sides, src, false, parallelWalk(a), func(side result.Side, in *diff.Input) error {
		return a.AddInput(side, in)
	})
	return a, err
}

// finish writes what analyze loaded: the warnings, the report rep builds
// and, unless outPprof is "", the stacks (isDiff: see writeStacks). When
// ctx ended part way it writes nothing: run says the run did not finish.
func finish(ctx context.Context, e env, s settings, a *diff.Analyzer, warnings []string, rep func() *report.Report, outPprof, sampleType string, isDiff bool) error {
	if ctx.Err() != nil {
		return nil
	}
	warn(e.stderr, warnings...)
	if err := writeReport(ctx, e.stdout, s.out, rep()); err != nil {
		return err
	}
	if outPprof == "" {
		return nil
	}
	return writeStacks(outPprof, a, sampleType, isDiff)
}

// errReportCut is a report's error when the context ended while it was
// written (run adds the signal): what standard output holds is cut short.
var errReportCut = errors.New("the report on standard output is cut short")

// writeReport writes rep on stdout as out says, stopping soon after ctx
// ends (render.Options.Context).
func writeReport(ctx context.Context, stdout io.Writer, out output, rep *report.Report) error {
	out.opts.Context = ctx
	err := out.write(stdout, rep)
	switch {
	case err != nil && ctx.Err() != nil:
		return errReportCut
	case errors.Is(err, syscall.EPIPE):
		return errors.New("writing report: standard output was closed before the report was written (broken pipe)")
	case err != nil:
		return fmt.Errorf("writing report: %v", err)
	}
	return nil
}

// writeStacks is --output-pprof: it writes the stacks a kept
// (diff.Options.Stacks), of sampleType ("type/unit"), to the file name as
// gzipped pprof, sample by sample (profile.StackWriter), each labelled
// with its bucket; for a diff, the base side's values negated and
// labelled pprof::base=true, as `go tool pprof -diff_base` writes them.
func writeStacks(name string, a *diff.Analyzer, sampleType string, isDiff bool) error {
	f, err := createOutput(name)
	if err != nil {
		return fmt.Errorf("--output-pprof: %v", err)
	}
	typ, unit := sampleType, ""
	if i := strings.LastIndexByte(sampleType, '/'); i >= 0 {
		typ, unit = sampleType[:i], sampleType[i+1:]
	}
	w := profile.NewStackWriter(f, typ, unit)
	a.EachStack(func(side result.Side, b rules.Bucket, stack []int32, v float64) {
		base := ""
		if isDiff && side == result.Base {
			v, base = -v, "true"
		}
		w.Add(stack, v, profile.BaseLabel, base, "bucket", b.String())
	})
	err = w.Close(a.StackFrame)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--output-pprof: writing %s: %v", name, err)
	}
	return nil
}

func topCommand(fs *flag.FlagSet) runFunc {
	var c common
	var outPprof string
	c.register(fs, slices.Concat(render.Formats, render.CI, []render.Format{render.SVG, render.Folded})...)
	c.registerView(fs, false)
	fs.StringVar(&outPprof, "output-pprof", "", "also write the stacks loaded, symbolized (several profiles: summed), as gzipped pprof to this file")
	return func(ctx context.Context, e env, pos []string) error {
		s, err := c.settings("top", e)
		if err != nil {
			return err
		}
		if len(pos) == 0 {
			return usagef("top: want at least one profile")
		}
		if outPprof == "-" {
			return usagef("top: --output-pprof wants a file: standard output holds the report")
		}
		a, err := analyze(ctx, e, "top", s, c.sources(s.load), []source.Side{{Args: pos}}, outPprof)
		if err != nil {
			return err
		}
		t := a.Top()
		return finish(ctx, e, s, a, t.Warnings, func() *report.Report { return present.TopFor(t, s.out.format.Parts()) }, outPprof, t.SampleType, false)
	}
}

func rulesCommand(fs *flag.FlagSet) runFunc {
	var out outputFlags
	var runtimeFilter string
	var files []string
	out.register(fs, render.Formats...)
	fs.StringVar(&runtimeFilter, "runtime", "", "only this rule pack: go, dotnet, jvm, node, ruby, rust, native, or a user file's runtime column")
	fs.StringArrayVar(&files, "rules", nil, "extra rule file, listed first (repeatable)")
	return func(ctx context.Context, e env, pos []string) error {
		o, err := out.resolveNoArgs("rules", e, pos)
		if err != nil {
			return err
		}
		rs, err := loadRules(files)
		if err != nil {
			return err
		}
		sel, err := rulesOf(rs.Rules, runtimeFilter)
		if err != nil {
			return err
		}
		rep := present.Rules(sel)
		rep.Title = "profdiff rules"
		return o.write(e.stdout, rep)
	}
}

// rulesOf returns the rules of one runtime ("" for all).
func rulesOf(all []*rules.Rule, runtime string) ([]*rules.Rule, error) {
	if runtime == "" {
		return all, nil
	}
	var sel []*rules.Rule
	seen := map[string]bool{}
	for _, r := range all {
		seen[r.Runtime] = true
		if r.Runtime == runtime {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		var names []string
		for n := range seen {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, usagef("rules: no runtime %q (have %s)%s", runtime, strings.Join(names, ", "), didYouMean(runtime, names))
	}
	return sel, nil
}

// noArgs refuses positional arguments for a command that takes none.
func noArgs(cmd string, pos []string) error {
	if len(pos) > 0 {
		return usagef("%s: unexpected argument %q", cmd, pos[0])
	}
	return nil
}

// loadInputs is loadSources for diff, top and gate: a pprof protobuf is
// read by diff's streaming decoder (see prepareInput) unless model asks
// for the pprof model (an --output-pprof writes it); each profile reaches
// add as a diff.Input with its side.
func loadInputs(ctx context.Context, cmd string, stderr io.Writer, sides []source.Side, opts source.Options, model bool, popts diff.PrepareOptions, add func(result.Side, *diff.Input) error) error {
	opts.Raw = !model
	return loadSources(ctx, cmd, stderr, sides, opts, prepareInput(popts), func(it *source.Item, in *diff.Input) error {
		return add(result.Side(it.Side), in)
	})
}

// parallelWalk is how profiles for a are best prepared: an Analyzer that
// walks them in parallel checks their location ids itself, as it reads
// them (diff.PrepareOptions.IDsInWalk); a serial one (the gate's) wants
// them checked while prepared, off its goroutine. The profiles of one run
// share one memo of function names (diff.Names).
func parallelWalk(a *diff.Analyzer) diff.PrepareOptions {
	return diff.PrepareOptions{IDsInWalk: a.WalksInParallel(), Names: &diff.Names{}}
}

// prepareInput is the prepare step of loadInputs, run where the source
// was read: a pprof protobuf (Item.Raw) is decoded by diff's streaming
// decoder with popts, anything else is an Input of its model.
func prepareInput(popts diff.PrepareOptions) func(*source.Item) (*diff.Input, error) {
	return func(it *source.Item) (*diff.Input, error) {
		if it.Raw == nil {
			return diff.NewInput(it.Loaded), nil
		}
		in, err := diff.PrepareWith(it.Raw, popts)
		if err != nil {
			return nil, err
		}
		it.Loaded = in.Loaded()
		return in, nil
	}
}
