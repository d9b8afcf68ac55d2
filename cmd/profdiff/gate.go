package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/gate"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/profile/source"
)

const gateSynopsis = `  profdiff gate [flags] --base 'main/*.pb.gz' --new 'pr/*.pb.gz' [--max BUCKET=+Npp] [--max-method RE=+N%]
  profdiff gate [flags] BASE NEW

Fails (exit 1) when a share grew past its threshold and, with enough
profiles per side (3 or more; 4 for two checks at --alpha 0.05; 5 is a good
habit), the growth is significant (one-sided Mann-Whitney U test over
per-profile shares, Holm-adjusted over the checks). Thresholds: +Npp
(percentage points of share), +N% (relative to base) or Nx (times base).
Buckets: cpu, wait, lock-contention, gc, io, syscall, and sync (everything
but cpu). Without thresholds: --max lock-contention=+1pp --max sync=+5pp.
Where a share is 100% of every profile (mutex profiles), the check compares
the value per second or per run instead (defaults with 2x).
`

// gateFlags are gate's own flags (the shared ones live in common).
type gateFlags struct {
	sides             sideFlags
	maxes, maxMethods []string
	alpha             float64
	config            string
	markdown          string
	junit             string
}

func gateCommand(fs *flag.FlagSet) runFunc {
	var c common
	g := gateFlags{sides: sideFlags{perRun: true}}
	g.register(fs)
	c.register(fs, slices.Concat(render.Formats, render.CI)...)
	// The shared flags, adapted: --top counts the frames listed behind each
	// failed check; --cum and --by do not apply (method checks are
	// inclusive, and failures list both deciding frames and callers).
	c.top = gate.DefaultTop
	fs.Lookup("top").DefValue = fmt.Sprint(gate.DefaultTop)
	fs.Lookup("top").Usage = "frames listed behind each failed check (0 for all)"
	_ = fs.MarkHidden("cum")
	_ = fs.MarkHidden("by")
	return func(ctx context.Context, e env, pos []string) error {
		for _, name := range []string{"cum", "by"} {
			if fs.Changed(name) {
				return usagef("gate: --%s does not apply: method checks are already inclusive, and each failure lists the deciding frames and their callers", name)
			}
		}
		s, err := c.settings("gate", e)
		if err != nil {
			return err
		}
		if g.junit == "-" {
			return usagef("gate: --junit wants a file: standard output holds the report")
		}
		top := c.top
		if s.analysis.Top < 0 {
			top = 0 // CSV or JSON without --top: every frame
		}
		gopts, err := g.gateOptions(fs, s.analysis, top)
		if err != nil {
			return err
		}
		sides, err := g.sides.sides("gate", pos)
		if err != nil {
			return err
		}
		return runGate(ctx, e, s, gopts, g.sources(c, s), sides, gateFiles{markdown: g.markdown, junit: g.junit})
	}
}

// sources are the options of gate's profiles: each one is a run.
func (g *gateFlags) sources(c common, s settings) source.Options {
	o := c.sources(s.load)
	o.PerRun = true
	return o
}

func (g *gateFlags) register(fs *flag.FlagSet) {
	g.sides.register(fs)
	fs.StringArrayVar(&g.maxes, "max", nil, "BUCKET=THRESHOLD: most growth allowed, e.g. lock-contention=+2pp, gc=+25% or lock-contention=2x (repeatable)")
	fs.StringArrayVar(&g.maxMethods, "max-method", nil, "REGEXP=THRESHOLD: most growth of the share of samples with a frame matching REGEXP (repeatable)")
	fs.Float64Var(&g.alpha, "alpha", gate.DefaultAlpha, "significance level of the test (shared by all checks)")
	fs.StringVar(&g.config, "config", "", "JSON file with thresholds (alpha, max, max_method); flags override its entries")
	fs.StringVar(&g.markdown, "markdown", "", "also write the report as Markdown to this file (also appended to $GITHUB_STEP_SUMMARY when set)")
	fs.StringVar(&g.junit, "junit", "", "also write the checks as a JUnit XML report to this file, one test case per check (GitLab, Jenkins)")
}

// gateFiles are the files gate writes beside its report: --markdown and
// --junit ("" for none).
type gateFiles struct{ markdown, junit string }

// runGate loads every run of both sides (read as src says) into the
// gate, writes its report (and the Markdown and JUnit copies), and
// returns errGateFailed when a check failed.
func runGate(ctx context.Context, e env, s settings, gopts gate.Options, src source.Options, sides []source.Side, files gateFiles) error {
	start := time.Now()
	gopts.Analysis.Context = ctx // SIGINT and SIGTERM stop the walks
	gt := gate.New(gopts)
	if err := guardOutputs(&src, outputFile{"--markdown", files.markdown}, outputFile{"--junit", files.junit}); err != nil {
		return err
	}
	// The gate's walk is serial (it reads every sample in order): the
	// location ids are checked while each profile is prepared.
	if err := loadInputs(ctx, "gate", e.stderr, sides, src, false, diff.PrepareOptions{Names: &diff.Names{}}, gt.AddInput); err != nil {
		return err
	}
	r, err := gt.Report()
	if ctx.Err() != nil {
		return nil // the analysis stopped part way: run says the run did not finish
	}
	if err != nil {
		return err
	}
	warn(e.stderr, r.Warnings...)
	if err := writeReport(ctx, e.stdout, s.out, r.Model()); err != nil {
		return err
	}
	if err := writeGateMarkdown(r, files.markdown, e.stdout, e.stderr); err != nil {
		return err
	}
	if files.junit != "" {
		if err := writeOutput(files.junit, func(w io.Writer) error { return r.JUnit(w, time.Since(start)) }); err != nil {
			return fmt.Errorf("--junit: %v", err)
		}
	}
	if r.Verdict == gate.Fail {
		say(e.stderr, "gate failed: %s", failures(r))
		return errGateFailed
	}
	return nil
}

// gateOptions turns the config file and the threshold flags into the
// gate's options: flags override config entries with the same name, and
// without any threshold the defaults apply.
func (g *gateFlags) gateOptions(fs *flag.FlagSet, opts diff.Options, top int) (gate.Options, error) {
	o := gate.Options{Analysis: opts, Alpha: g.alpha, Top: top}
	if top == 0 {
		o.Top = 1 << 30
	}
	var cfgChecks []gate.Check
	if g.config != "" {
		data, err := os.ReadFile(g.config)
		if err != nil {
			return o, fmt.Errorf("--config: %v", err)
		}
		cfg, checks, err := gate.ParseConfig(g.config, data)
		if err != nil {
			return o, usagef("--config %v", err)
		}
		cfgChecks = checks
		if cfg.Alpha != nil && !fs.Changed("alpha") {
			o.Alpha = *cfg.Alpha
		}
	}
	if err := gate.CheckAlpha(o.Alpha); err != nil {
		return o, usagef("--alpha: %v", err)
	}
	var flagChecks []gate.Check
	for _, s := range g.maxes {
		ch, err := gate.ParseMax(s)
		if err != nil {
			name, _, _ := strings.Cut(s, "=")
			return o, usagef("--max %q: %v%s", s, err, didYouMean(strings.TrimSpace(name), bucketNames()))
		}
		flagChecks = append(flagChecks, ch)
	}
	for _, s := range g.maxMethods {
		ch, err := gate.ParseMaxMethod(s)
		if err != nil {
			return o, usagef("--max-method %q: %v", s, err)
		}
		flagChecks = append(flagChecks, ch)
	}
	if err := gate.Duplicates(flagChecks, "flags"); err != nil {
		return o, usagef("%v", err)
	}
	if all := gate.Merge(cfgChecks, flagChecks); len(all) > 0 {
		o.Checks = all
	}
	return o, nil
}

// writeGateMarkdown writes the Markdown report to --markdown FILE and
// appends it to $GITHUB_STEP_SUMMARY when that is set, unless standard
// output is that very file (a workflow's "--format github >>
// $GITHUB_STEP_SUMMARY" has put the report there already). A step summary
// that cannot be written is only warned about: it must not turn a passing
// gate into a failed job.
func writeGateMarkdown(r *gate.Report, file string, stdout, stderr io.Writer) error {
	summary := os.Getenv("GITHUB_STEP_SUMMARY")
	if summary != "" && sameFile(stdout, summary) {
		summary = ""
	}
	if file == "" && summary == "" {
		return nil
	}
	var md bytes.Buffer
	if err := gate.Render(&md, r, render.Markdown); err != nil {
		return fmt.Errorf("writing report: %v", err)
	}
	if file != "" {
		if err := writeOutput(file, func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }); err != nil {
			return fmt.Errorf("--markdown: %v", err)
		}
	}
	if summary != "" {
		f, err := os.OpenFile(summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.Write(append(md.Bytes(), '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			warn(stderr, fmt.Sprintf("GITHUB_STEP_SUMMARY: %v", err))
		}
	}
	return nil
}

// failures summarizes the failed checks in one line for stderr.
func failures(r *gate.Report) string {
	var parts []string
	for _, c := range r.Checks {
		if c.Verdict != gate.Fail {
			continue
		}
		s := fmt.Sprintf("%s grew %s (threshold %s", c.Check, gate.DeltaCell(c), c.Threshold)
		if c.P != nil {
			s += ", p=" + gate.PValue(c.P)
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, "; ")
}

// writeOutput creates the output file name (createOutput) and writes it
// with write.
func writeOutput(name string, write func(io.Writer) error) error {
	f, err := createOutput(name)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sameFile reports whether w is an open file that is the file name.
func sameFile(w io.Writer, name string) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}
