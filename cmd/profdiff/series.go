package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/series"
	"github.com/profdiff/profdiff/profile/source"
)

const seriesSynopsis = "  profdiff series [flags] NAME=SOURCE NAME=SOURCE [NAME=SOURCE ...]\n" +
	"  profdiff series [flags] SOURCE SOURCE [SOURCE ...]   (each named by its path's shortest unique tail)\n"

// seriesCommand is 'profdiff series': N named steps in order, each a
// source as diff takes them (files, globs, capture folders, URLs, fleet
// queries), every profile one run of its step.
func seriesCommand(fs *flag.FlagSet) runFunc {
	var c common
	var metric, flame string
	c.register(fs, render.Formats...)
	fs.StringVar(&metric, "metric", "", "a number per step for the table's header row, NAME=V1,V2,... in step order (e.g. req/s=41200,40100,38000,39900)")
	fs.StringVar(&flame, "flame", "", "with --format html, add the flame graph of the diff of two steps: A,B")
	fs.StringVar(&c.normalize, "normalize", "", "judge the steps on share or rate (default: rate where every profile's duration is known, else share)")
	return func(ctx context.Context, e env, pos []string) error {
		s, err := c.settings("series", e)
		if err != nil {
			return err
		}
		if s.analysis.Normalize == result.NormalizeValue {
			return usagef("series: --normalize is share or rate, not value: steps of different lengths are compared per second or as shares")
		}
		steps, err := parseSteps(pos)
		if err != nil {
			return err
		}
		m, err := parseMetric(metric, len(steps))
		if err != nil {
			return err
		}
		var pair [2]int
		if flame != "" {
			if s.out.format != render.HTML {
				return usagef("series: --flame draws in the html page; add --format html")
			}
			if pair, err = flamePair(flame, steps); err != nil {
				return err
			}
		}
		tree := s.analysis
		s.analysis.CallTree, s.analysis.TreeStacks, s.analysis.Top = false, false, -1
		s.analysis.Context = ctx
		s.load.AllowEmpty = true // a step's run may have recorded nothing (a mutex profile without contention)
		src := c.sources(s.load)
		src.PerRun = true // a glob may name one capture folder per run
		sides := make([]source.Side, len(steps))
		ss := make([]series.Step, len(steps))
		for i, st := range steps {
			sides[i] = source.Side{Name: "step " + st.name, Args: st.args}
			ss[i].Name = st.name
			if m.values != nil {
				ss[i].Metric = &m.values[i]
			}
		}
		popts := diff.PrepareOptions{IDsInWalk: true, Names: &diff.Names{}}
		err = loadInputs(ctx, "series", e.stderr, sides, src, false, popts, func(side result.Side, in *diff.Input) error {
			a := diff.NewAnalyzer(s.analysis)
			a.Expect(1)
			if err := a.AddInput(result.Base, in); err != nil {
				return err
			}
			if err := a.Wait(); err != nil {
				return err
			}
			ss[side].Runs = append(ss[side].Runs, a.Top())
			return nil
		})
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil // stopped part way: run says the run did not finish
		}
		res, err := series.Build(ss, series.Options{Top: c.seriesTop(s.out.format), Metric: m.name, Measure: s.analysis.Normalize})
		if errors.Is(err, series.ErrNoRate) {
			return usagef("series: --normalize rate: %v; --normalize share judges on shares", err)
		}
		if err != nil {
			return err
		}
		warn(e.stderr, res.Warnings...)
		rep := present.Series(res, seriesRules)
		if flame != "" {
			f, err := stepFlame(ctx, e, s, tree, src, steps, pair)
			if err != nil {
				return err
			}
			if f != nil {
				rep.Blocks = append(rep.Blocks, report.Heading{Level: 3, Only: report.HTML,
					Line: report.Cat("Flame graph: ", report.Code(steps[pair[0]].name), " → ", report.Code(steps[pair[1]].name))}, f)
			}
		}
		return writeReport(ctx, e.stdout, s.out, rep)
	}
}

// seriesRules are the thresholds the report names.
var seriesRules = present.SeriesRules{MinRuns: series.MinRuns, Alpha: series.Alpha, MinMove: series.MinMove, MinRatio: series.MinRatio,
	ThresholdMove: series.ThresholdMove, ThresholdRatio: series.ThresholdRatio}

// seriesTop is --top for a series' method rows: 0 is all, and so is no
// --top in the data formats, which hold every row unless asked (as diff's
// do).
func (c *common) seriesTop(f render.Format) int {
	if c.top == 0 || !c.fs.Changed("top") && (f == render.CSV || f == render.JSON) {
		return -1
	}
	return c.top
}

// step is one step of a series as given: its name and its sources.
type step struct {
	name string
	args []string
}

// parseSteps reads the steps: NAME=SOURCE, or a SOURCE named by the
// shortest tail of its path that no other unnamed step shares.
// Consecutive arguments with one name are one step of several sources.
func parseSteps(pos []string) ([]step, error) {
	if len(pos) < 2 {
		return nil, usagef("series: want at least two steps (NAME=SOURCE ...), got %d", len(pos))
	}
	names := make([]string, len(pos))
	args := make([]string, len(pos))
	var plain []int
	for i, a := range pos {
		name, src, ok := strings.Cut(a, "=")
		if ok && name != "" && src != "" && !strings.ContainsAny(name, `/\`) && !exists(a) && !strings.Contains(name, "://") {
			names[i], args[i] = name, src
			continue
		}
		args[i] = a
		plain = append(plain, i)
	}
	for i, n := range tails(args, plain) {
		names[plain[i]] = n
	}
	var out []step
	seen := map[string]bool{}
	for i, n := range names {
		if len(out) > 0 && out[len(out)-1].name == n {
			out[len(out)-1].args = append(out[len(out)-1].args, args[i])
			continue
		}
		if seen[n] {
			return nil, usagef("series: step %q is given twice, apart; give a step's sources one after the other", n)
		}
		seen[n] = true
		out = append(out, step{name: n, args: []string{args[i]}})
	}
	if len(out) < 2 {
		return nil, usagef("series: want at least two steps, got one (%s); name them NAME=SOURCE", out[0].name)
	}
	return out, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// tails names the arguments at idx by the shortest tail of their paths
// (1, 2, ... components, extensions of a file kept) that tells apart
// arguments that are not the same source.
func tails(args []string, idx []int) []string {
	parts := make([][]string, len(idx))
	for i, j := range idx {
		parts[i] = strings.Split(filepath.ToSlash(filepath.Clean(args[j])), "/")
	}
	out := make([]string, len(idx))
	for k := 1; ; k++ {
		byName := map[string]map[string]bool{}
		for i, p := range parts {
			out[i] = strings.Join(p[max(0, len(p)-k):], "/")
			if byName[out[i]] == nil {
				byName[out[i]] = map[string]bool{}
			}
			byName[out[i]][args[idx[i]]] = true
		}
		clash := false
		for i, p := range parts {
			clash = clash || len(byName[out[i]]) > 1 && k < len(p)
		}
		if !clash {
			return out
		}
	}
}

// metric is --metric: a name and a value per step.
type metric struct {
	name   string
	values []float64
}

func parseMetric(s string, steps int) (metric, error) {
	if s == "" {
		return metric{}, nil
	}
	name, vals, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return metric{}, usagef("series: --metric: want NAME=V1,V2,..., not %q", s)
	}
	m := metric{name: name}
	for _, v := range strings.Split(vals, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return metric{}, usagef("series: --metric: %q is not a number", v)
		}
		m.values = append(m.values, f)
	}
	if len(m.values) != steps {
		return metric{}, usagef("series: --metric has %d values for %d steps", len(m.values), steps)
	}
	return m, nil
}

// flamePair reads --flame A,B: two step names.
func flamePair(s string, steps []step) ([2]int, error) {
	var pair [2]int
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return pair, usagef("series: --flame: want two steps A,B, not %q", s)
	}
	for i, n := range []string{a, b} {
		pair[i] = -1
		for j, st := range steps {
			if st.name == n {
				pair[i] = j
			}
		}
		if pair[i] < 0 {
			var names []string
			for _, st := range steps {
				names = append(names, st.name)
			}
			return pair, usagef("series: --flame: no step %q (steps: %s)", n, strings.Join(names, ", "))
		}
	}
	return pair, nil
}

// stepFlame is the flame graph of the diff of steps pair[0] → pair[1],
// their profiles loaded again into one Analyzer with the call tree that
// the html format draws.
func stepFlame(ctx context.Context, e env, s settings, opts diff.Options, src source.Options, steps []step, pair [2]int) (*report.Flame, error) {
	opts.Context = ctx
	a := diff.NewAnalyzer(opts)
	sides := []source.Side{{Name: "step " + steps[pair[0]].name, Args: steps[pair[0]].args}, {Name: "step " + steps[pair[1]].name, Args: steps[pair[1]].args}}
	src.Wait = a.Wait
	err := loadInputs(ctx, "series", e.stderr, sides, src, false, parallelWalk(a), func(side result.Side, in *diff.Input) error {
		return a.AddInput(side, in)
	})
	if err != nil {
		return nil, err
	}
	f := flameOf(present.Diff(a.Diff()))
	if f != nil {
		f.Labels = [2]string{steps[pair[0]].name, steps[pair[1]].name}
	}
	return f, nil
}

// flameOf is a report's flame graph, nil without one.
func flameOf(r *report.Report) *report.Flame {
	for _, b := range r.Blocks {
		if f, ok := b.(*report.Flame); ok {
			return f
		}
	}
	return nil
}
