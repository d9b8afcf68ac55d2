// Package gate decides whether a change made a program wait more: it
// compares bucket shares (and the shares of chosen methods) between a base
// and a new set of profiles against thresholds, with a significance test so
// that run-to-run noise does not fail a build. `profdiff gate` is its
// command-line face; this package computes and renders, and never prints or
// exits on its own.
//
// # Checks
//
// A check is a share and the most it may grow, written NAME=THRESHOLD:
//
//	lock-contention=+2pp   a bucket (cpu, wait, lock-contention, gc, io, syscall)
//	sync=+5pp              everything but cpu ("total wait/synchronization")
//	gc=+25%                relative to the base share instead of percentage points
//
// and, for methods, REGEXP=THRESHOLD: the share of samples with a frame
// matching the regexp anywhere on the stack (inclusive, each sample counted
// once, like pprof's -focus). Without any check, DefaultChecks apply:
// lock-contention=+1pp and sync=+5pp.
//
// # Statistics
//
// Each profile's share is one observation. With at least three profiles per
// side, a check fails only when the growth of the merged shares exceeds its
// threshold AND a one-sided Mann–Whitney U test (GrowthP; the rank test
// benchstat uses) finds the new shares larger than the base ones at alpha,
// after Holm's adjustment for the number of checks. So the whole gate fails
// on noise in at most alpha of builds, whatever the thresholds. With fewer
// profiles, or too few for any p-value to reach alpha (see MinP and
// ProfilesNeeded), the merged sides are compared with the thresholds alone
// and a warning says how many profiles the test needs.
//
// Power, measured by TestPowerNormal: with 5 profiles per side and the
// default two checks (so the first Holm step is at alpha/2 = 0.025), a
// check detects a growth of 1σ of the per-profile share in 21% of trials,
// 1.5σ in 44%, 2σ in 69%, 2.5σ in 85% and 3σ in 96%: 80% power at about
// 2.3σ. With 10 per side, 1σ is detected in 50% and 1.5σ in 85%. σ is at
// least the sampling noise sqrt(p(1-p)/N) of a share p from N samples, plus
// the run-to-run variation of the program. TestPowerProfiles puts numbers
// on it: profiles of 2,000 samples with a 2% lock-contention share and 10%
// run-to-run jitter have σ ≈ 0.46pp, and the default gate fails in 6% of
// trials at a true growth of +0.5pp, 50% at +1pp (the threshold), 90% at
// +1.5pp and 99% at +2pp. TestFalseFailureRate measures the other side: 200
// trials of 5 vs 5 profiles from one distribution fail the gate 4 times
// (2%) with +0pp thresholds on all six buckets and sync, and once (0.5%)
// with the defaults.
//
// # Example
//
// Five runs per side of a service whose new code holds a cache's lock
// longer (Example in example_test.go):
//
//	g := gate.New(gate.Options{}) // default checks, alpha 0.05
//	for _, l := range baseRuns {
//		g.Add(diff.Base, l)
//	}
//	for _, l := range newRuns {
//		g.Add(diff.New, l)
//	}
//	r, err := g.Report()
//	gate.Render(os.Stdout, r, render.Table) // or Markdown, CSV, JSON
//
// prints
//
//	profdiff gate: FAIL (1 of 2 checks failed)
//	base: 5 profiles (base-1.folded, base-2.folded and 3 more), 5000 samples
//	new:  5 profiles (new-1.folded, new-2.folded and 3 more), 5000 samples
//	sample type samples/count, kind unknown
//
//	┌─────────────────┬───────┬───────┬─────────┬───────────┬───────┬─────────┐
//	│ Check           │  base │   new │       Δ │ threshold │     p │ verdict │
//	├─────────────────┼───────┼───────┼─────────┼───────────┼───────┼─────────┤
//	│ lock-contention │ 2.12% │ 6.00% │ +3.88pp │      +1pp │ 0.008 │ FAIL    │
//	│ sync            │ 2.12% │ 6.00% │ +3.88pp │      +5pp │ 0.008 │ pass    │
//	└─────────────────┴───────┴───────┴─────────┴───────────┴───────┴─────────┘
//	each profile is one observation: one-sided Mann–Whitney U test per check, p Holm-adjusted over 2 checks; a check fails when its growth exceeds the threshold and p ≤ 0.05
//
//	behind lock-contention (+3.88pp, threshold +1pp):
//	┌───────────────────────────────────────┬───────┬───────┬─────────┐
//	│ Frame that decided the bucket         │  base │   new │       Δ │
//	├───────────────────────────────────────┼───────┼───────┼─────────┤
//	│ internal/sync.runtime_SemacquireMutex │ 2.12% │ 6.00% │ +3.88pp │
//	└───────────────────────────────────────┴───────┴───────┴─────────┘
//
//	┌────────────────────────────────┬───────┬───────┬─────────┐
//	│ Caller (nearest program frame) │  base │   new │       Δ │
//	├────────────────────────────────┼───────┼───────┼─────────┤
//	│ main.(*cache).get              │ 2.12% │ 6.00% │ +3.88pp │
//	└────────────────────────────────┴───────┴───────┴─────────┘
//
// and r.Verdict is Fail: lock-contention grew 3.88 points, more than the
// +1pp allowed, and every new run had more of it than every base run
// (p = 1/252, 0.008 after Holm). sync grew as much, but +5pp allows it.
package gate

import (
	"fmt"
	"sort"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/profile"
)

// Options configure a Gate. The zero value means the default checks at
// alpha 0.05 with the engine's default analysis.
type Options struct {
	Checks []Check // nil: DefaultChecks()
	Alpha  float64 // significance level (0: DefaultAlpha)
	Top    int     // frames listed behind each failed check (0: DefaultTop)
	// Analysis selects the sample type and kind, the rules and
	// --focus/--ignore; its Cum, By and Top are not used.
	Analysis diff.Options
}

// DefaultTop is the number of frames listed behind a failed check.
const DefaultTop = 5

// Gate accumulates profiles on two sides, one observation per profile.
type Gate struct {
	opts     Options
	merged   *diff.Analyzer
	scan     *scanner
	profiles [2][]observed
}

// observed is one profile's shares (fractions of its own kept total).
type observed struct {
	source  string
	total   float64
	buckets [diff.NumBuckets]float64
	sync    float64
	scan    profileScan
}

// New returns a Gate.
func New(opts Options) *Gate {
	if opts.Checks == nil {
		opts.Checks = DefaultChecks()
	}
	if opts.Alpha == 0 {
		opts.Alpha = DefaultAlpha
	}
	if opts.Top <= 0 {
		opts.Top = DefaultTop
	}
	a := opts.Analysis
	if a.Rules == nil {
		a.Rules = diff.DefaultRules()
	}
	a.Cum, a.By, a.Top = false, diff.ByFrame, 1
	return &Gate{opts: opts, merged: diff.NewAnalyzer(a), scan: newScanner(a, a.Rules, opts.Checks)}
}

// Checks returns the checks the gate applies, in report order.
func (g *Gate) Checks() []Check { return g.opts.Checks }

// Add adds one profile to a side as one observation. It fails when the
// profile's sample type differs from the profiles added before (on either
// side); the error says which and how to pick a shared one.
func (g *Gate) Add(side diff.Side, l *profile.Loaded) error {
	if err := g.merged.Add(side, l); err != nil {
		return err
	}
	ps, err := g.scan.add(side, l)
	if err != nil {
		return err
	}
	o := observed{source: l.Source, total: ps.total, scan: ps}
	for _, b := range diff.Buckets {
		o.buckets[b] = share(ps.buckets[b], ps.total)
		if b != diff.CPU {
			o.sync += o.buckets[b]
		}
	}
	g.profiles[side] = append(g.profiles[side], o)
	return nil
}

// SideInfo describes one side of the gate.
type SideInfo struct {
	Sources  []string `json:"sources"`
	Profiles int      `json:"profiles"` // profiles used as observations
	Samples  int64    `json:"samples"`  // samples of the merged side
}

// Report is the gate's outcome: numbers only, renderers format them.
// Warnings are for the user's stderr and are never part of rendered data.
type Report struct {
	Verdict    Verdict       `json:"verdict"` // pass or fail
	Failed     int           `json:"failed"`  // checks that failed
	Mode       Mode          `json:"mode"`
	Alpha      float64       `json:"alpha"`
	SampleType string        `json:"sample_type"`
	Kind       profile.Kind  `json:"kind"`
	Base       SideInfo      `json:"base"`
	New        SideInfo      `json:"new"`
	Checks     []CheckResult `json:"checks"`
	Warnings   []string      `json:"-"`
}

// Frame is one frame behind a failed check: the value of the samples the
// check selects that were decided by (or called from) this frame, as a
// share (fraction 0..1) of each merged side's total.
type Frame struct {
	Name  string  `json:"name"`
	Base  float64 `json:"base"`
	New   float64 `json:"new"`
	Delta float64 `json:"delta"`
}

// Behind lists the frames that grew most inside a failed check's samples:
// the frames that decided their bucket (e.g. internal/sync.runtime_SemacquireMutex
// for lock contention) and the nearest caller that is the program's own code
// (the function that called Lock).
type Behind struct {
	Deciders []Frame `json:"deciders"`
	Callers  []Frame `json:"callers"`
}

// Report evaluates the checks. It fails when a side has no profile, or no
// profile with samples left after --focus/--ignore.
func (g *Gate) Report() (*Report, error) {
	r := &Report{Alpha: g.opts.Alpha}
	var obsSides [2][]observed
	for side, label := range [2]string{"base", "new"} {
		all := g.profiles[side]
		if len(all) == 0 {
			return nil, fmt.Errorf("%s: no profiles given", label)
		}
		for _, o := range all {
			if o.total == 0 {
				r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %s has no samples left after --focus/--ignore; left out of the test", label, o.source))
				continue
			}
			obsSides[side] = append(obsSides[side], o)
		}
		if len(obsSides[side]) == 0 {
			return nil, fmt.Errorf("%s: no profile has samples left after --focus/--ignore; loosen the filters", label)
		}
	}
	d := g.merged.Diff()
	r.SampleType, r.Kind = d.SampleType, d.Kind
	r.Warnings = append(r.Warnings, d.Warnings...)
	r.Warnings = append(r.Warnings, kindWarnings(r.Kind, g.opts.Checks)...)
	r.Base = SideInfo{Sources: d.Base.Sources, Profiles: len(obsSides[0]), Samples: d.Base.Samples}
	r.New = SideInfo{Sources: d.New.Sources, Profiles: len(obsSides[1]), Samples: d.New.Samples}
	mergedBucket := map[diff.Bucket][2]float64{}
	for _, b := range d.Buckets {
		mergedBucket[b.Bucket] = [2]float64{b.Base, b.New}
	}
	syncBase, syncNew := d.SyncShare()

	checks := g.opts.Checks
	obs := make([]Observation, len(checks))
	for i, c := range checks {
		o := &obs[i]
		for side := range obsSides {
			var vals []float64
			for _, p := range obsSides[side] {
				switch c.Target {
				case TargetBucket:
					vals = append(vals, p.buckets[c.Bucket])
				case TargetSync:
					vals = append(vals, p.sync)
				case TargetMethod:
					vals = append(vals, p.scan.matched[i]/p.scan.total)
				}
			}
			if side == 0 {
				o.Base = vals
			} else {
				o.New = vals
			}
		}
		switch c.Target {
		case TargetBucket:
			m := mergedBucket[c.Bucket]
			o.MergedBase, o.MergedNew = m[0], m[1]
		case TargetSync:
			o.MergedBase, o.MergedNew = syncBase, syncNew
		case TargetMethod:
			var sum [2]float64
			for side := range obsSides {
				for _, p := range g.profiles[side] {
					sum[side] += p.scan.matched[i]
				}
			}
			o.MergedBase, o.MergedNew = share(sum[0], g.scan.total[0]), share(sum[1], g.scan.total[1])
		}
	}
	dec := Evaluate(checks, obs, g.opts.Alpha)
	r.Mode, r.Checks, r.Failed = dec.Mode, dec.Results, dec.Failed
	r.Warnings = append(r.Warnings, dec.Warnings...)
	r.Verdict = Pass
	if r.Failed > 0 {
		r.Verdict = Fail
	}
	for i := range r.Checks {
		if r.Checks[i].Verdict == Fail {
			r.Checks[i].Behind = &Behind{
				Deciders: g.top(g.scan.dec[i]),
				Callers:  g.top(g.scan.call[i]),
			}
		}
	}
	return r, nil
}

// kindWarnings points out checks that cannot fail on a profile kind.
func kindWarnings(k profile.Kind, checks []Check) []string {
	for _, c := range checks {
		switch {
		case k == profile.KindMutex && c.Target != TargetMethod:
			return []string{"mutex profiles are all lock-contention, so bucket and sync shares cannot grow: gate on CPU, wall-clock (fgprof) or block profiles, or use --max-method on mutex profiles"}
		case (k == profile.KindBlock || k == profile.KindTrace) && c.Target == TargetSync:
			return []string{fmt.Sprintf("%s profiles record only off-CPU time, so sync is always 100%% and its check cannot fail: gate lock-contention or wait on them", k)}
		}
	}
	return nil
}

// top returns the frames with the largest growth (positive deltas only),
// ties broken by name.
func (g *Gate) top(m map[string]*[2]float64) []Frame {
	var fs []Frame
	for name, v := range m {
		b, n := share(v[0], g.scan.total[0]), share(v[1], g.scan.total[1])
		if n-b <= 0 {
			continue
		}
		fs = append(fs, Frame{Name: name, Base: b, New: n, Delta: n - b})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Delta != fs[j].Delta {
			return fs[i].Delta > fs[j].Delta
		}
		return fs[i].Name < fs[j].Name
	})
	if len(fs) > g.opts.Top {
		fs = fs[:g.opts.Top]
	}
	if fs == nil {
		fs = []Frame{}
	}
	return fs
}

func share(v, total float64) float64 {
	if total == 0 {
		return 0
	}
	return v / total
}
