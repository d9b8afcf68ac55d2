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
//	lock-contention=2x     at most twice the base share (or value, below)
//
// and, for methods, REGEXP=THRESHOLD: the share of samples with a frame
// matching the regexp anywhere on the stack (inclusive, each sample counted
// once, like pprof's -focus). Without any check, DefaultChecks apply:
// lock-contention=+1pp and sync=+5pp.
//
// # Where shares cannot move
//
// In a mutex profile every sample is lock contention, so its share is
// 100% however long goroutines wait; so is sync in a block profile, and
// lock-contention in a block profile whose every blocked sample is one
// lock. Where a check's share is 100% of every profile with samples, the
// check compares absolute values instead (Measure): the value per second
// where every profile records its duration (/debug/pprof/mutex?seconds=N
// writes one), else the value per run (runtime/pprof's WriteTo, `go test
// -mutexprofile`), with the same statistics, a run without samples
// counting as zero. Relative (+50%) and factor (2x) thresholds apply to
// those values; a +Npp threshold cannot, and a check given so is an
// ErrCannotEvaluate, as is a bucket the kind never records (wait on mutex
// profiles). The default checks adapt instead: such a check takes the
// threshold DefaultAbsolute() (2x), and sync is left out where it selects
// the same samples as lock-contention. Report.Notes say which checks
// compare values, and why.
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
//		g.Add(result.Base, l)
//	}
//	for _, l := range newRuns {
//		g.Add(result.New, l)
//	}
//	r, err := g.Report()
//	gate.Render(os.Stdout, r, render.Table) // or Markdown, CSV, JSON
//
// prints
//
//	Verdict: lock-contention failed: 2.12% → 6.00% (+3.88pp, threshold +1pp, p 0.008), led by internal/sync.runtime_SemacquireMutex (+3.88pp) called from main.(*cache).get (+3.88pp).
//	The other check passed.
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
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// Options configure a Gate. The zero value means the default checks at
// alpha 0.05 with the engine's default analysis.
type Options struct {
	Checks []Check // nil: DefaultChecks()
	Alpha  float64 // significance level (0: DefaultAlpha)
	Top    int     // frames listed behind each failed check (0: DefaultTop)
	// Analysis selects the sample type and kind, the rules and
	// focus/ignore filters, and with CallTree (and TreeMin) the merged
	// sides' call tree, which the html format draws; its Cum, By and Top
	// are not used.
	Analysis diff.Options
}

// DefaultTop is the number of frames listed behind a failed check.
const DefaultTop = 5

// Gate accumulates profiles on two sides, one observation per profile.
// It reads the same classified-sample stream as `profdiff diff` (one
// Analyzer, diff.Analyzer.OnSample): bucket shares per profile come from
// the Analyzer's ProfileStats and the merged ones from its Diff, so the
// gate and diff agree by construction, and each profile is walked once.
type Gate struct {
	opts     Options
	defaults bool // opts.Checks are DefaultChecks, which adapt to the profiles (see plan)
	merged   *diff.Analyzer
	matched  [][]float64 // per profile, per check: value of samples a method check selects
	// Per check, per frame name: value on each side of the samples the
	// check selects, attributed to the deciding frame and to the caller.
	dec, call []map[string]*[2]float64
	methodHit [][]int8 // per check, per spelling id: 0 unknown, 1 matches, 2 does not
}

// New returns a Gate.
func New(opts Options) *Gate {
	defaults := opts.Checks == nil
	if defaults {
		opts.Checks = DefaultChecks()
	}
	if opts.Alpha == 0 {
		opts.Alpha = DefaultAlpha
	}
	if opts.Top <= 0 {
		opts.Top = DefaultTop
	}
	a := opts.Analysis
	a.Cum, a.By, a.Top = false, result.ByFrame, 1
	for _, c := range opts.Checks {
		a.Spellings = a.Spellings || c.Target == TargetMethod
	}
	g := &Gate{opts: opts, defaults: defaults, merged: diff.NewAnalyzer(a),
		dec: make([]map[string]*[2]float64, len(opts.Checks)), call: make([]map[string]*[2]float64, len(opts.Checks)),
		methodHit: make([][]int8, len(opts.Checks))}
	for i := range opts.Checks {
		g.dec[i], g.call[i] = map[string]*[2]float64{}, map[string]*[2]float64{}
	}
	g.merged.OnSample(g.take)
	return g
}

// Checks returns the checks the gate applies, in report order.
func (g *Gate) Checks() []Check { return g.opts.Checks }

// Add adds one profile to a side as one observation. It fails when the
// profile's sample type differs from the profiles added before (on either
// side); the error says which and how to pick a shared one.
func (g *Gate) Add(side result.Side, l *profile.Loaded) error {
	return g.AddInput(side, diff.NewInput(l))
}

// AddInput is Add for a diff.Input (a profile the streaming decoder
// prepared, or a loaded one).
func (g *Gate) AddInput(side result.Side, in *diff.Input) error {
	g.matched = append(g.matched, make([]float64, len(g.opts.Checks)))
	if err := g.merged.AddInput(side, in); err != nil {
		g.matched = g.matched[:len(g.matched)-1]
		return err
	}
	return nil
}

// take consumes one classified sample: the per-profile value of each
// method check, and the frames behind every check that selects it.
func (g *Gate) take(s *diff.Sample) {
	if s.Apart != diff.InBucket {
		return // scheduler latency and unknown native time are in no bucket and no check
	}
	caller := -1
	for i, c := range g.opts.Checks {
		hit := c.Target == TargetMethod && g.matches(i, s.Spellings)
		if hit {
			g.matched[s.Profile][i] += s.Value
		}
		if !selects(c, s.Bucket, hit) || len(s.Stack) == 0 {
			continue
		}
		if caller < 0 {
			caller = s.Caller()
		}
		credit(g.dec[i], g.merged.MethodName(s.Stack[max(s.Decider, 0)]), s.Side, s.Value)
		credit(g.call[i], g.merged.MethodName(s.Stack[caller]), s.Side, s.Value)
	}
}

// matches reports whether any frame of the sample, as the profile spelled
// its name, matches check i's method regexp, memoized per spelling.
func (g *Gate) matches(i int, spellings []int32) bool {
	memo := g.methodHit[i]
	for _, sp := range spellings {
		for int(sp) >= len(memo) {
			memo = append(memo, 0)
		}
		if memo[sp] == 0 {
			memo[sp] = 2
			if g.opts.Checks[i].Method.MatchString(g.merged.Spelling(sp)) {
				memo[sp] = 1
			}
		}
		if memo[sp] == 1 {
			g.methodHit[i] = memo
			return true
		}
	}
	g.methodHit[i] = memo
	return false
}

func credit(m map[string]*[2]float64, name string, side result.Side, v float64) {
	a := m[name]
	if a == nil {
		a = &[2]float64{}
		m[name] = a
	}
	a[side] += v
}

// selects reports whether check c counts a sample of bucket b (hit: the
// sample has a frame matching c's method regexp).
func selects(c Check, b rules.Bucket, hit bool) bool {
	switch c.Target {
	case TargetBucket:
		return b == c.Bucket
	case TargetSync:
		return b != rules.CPU
	}
	return hit
}

// SideInfo describes one side of the gate.
type SideInfo struct {
	Sources  []string `json:"sources"`
	Profiles int      `json:"profiles"` // profiles used as observations
	Samples  int64    `json:"samples"`  // samples of the merged side
	// Total is the merged side's value in Unit; DurationNanos the summed
	// duration of its profiles, when known, and TotalRate Total per
	// second of it (in the diff's rate unit).
	Total         float64  `json:"total"`
	Unit          string   `json:"unit"`
	DurationNanos int64    `json:"duration_nanos,omitempty"`
	TotalRate     *float64 `json:"total_rate,omitempty"`
	RateUnit      string   `json:"rate_unit,omitempty"`
}

// sideInfo describes a merged side of d used as profiles observations.
func sideInfo(s result.SideSummary, profiles int, rateUnit string) SideInfo {
	return SideInfo{Sources: s.Sources, Profiles: profiles, Samples: s.Samples, Total: s.Total, Unit: s.Unit,
		DurationNanos: s.DurationNanos, TotalRate: s.TotalRate, RateUnit: rateUnit}
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
	// Notes say which checks compare absolute values because their share
	// cannot move, and why (part of the report, unlike Warnings).
	Notes    []string `json:"notes,omitempty"`
	Warnings []string `json:"-"`
	// merged is the diff of the merged sides, whose bucket bars and call
	// tree (when Options.Analysis.CallTree) the html format draws.
	merged *result.Result
}

// Frame is one frame behind a failed check: the value of the samples the
// check selects that were decided by (or called from) this frame, in the
// check's measure: a share (fraction 0..1) of each merged side's total,
// or a value per second or per run.
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

// observed is one profile's observation: its statistics and, per check,
// the value of the samples a method check selects.
type observed struct {
	diff.ProfileStats
	matched []float64
}

// share is the observation of check c (index i): its share of the
// profile's total.
func (o *observed) share(i int, c Check) float64 {
	if c.Target == TargetSync {
		// The sum of the shares, as diff's SyncShare sums them.
		sync := 0.0
		for _, b := range rules.Buckets {
			if b != rules.CPU {
				sync += share(o.Buckets[b], o.Total)
			}
		}
		return sync
	}
	return share(o.value(i, c), o.Total)
}

// value is the value of the samples check c (index i) selects, in the
// profile's unit.
func (o *observed) value(i int, c Check) float64 {
	switch c.Target {
	case TargetBucket:
		return o.Buckets[c.Bucket]
	case TargetSync:
		v := 0.0
		for _, b := range rules.Buckets {
			if b != rules.CPU {
				v += o.Buckets[b]
			}
		}
		return v
	}
	return o.matched[i]
}

// Report evaluates the checks. It fails when a side has no profile, or no
// profile with samples left after the focus/ignore filters, and with an
// ErrCannotEvaluate when a check given explicitly cannot be evaluated on
// the profiles (see plan).
func (g *Gate) Report() (*Report, error) {
	if err := g.merged.Wait(); err != nil {
		return nil, err // a sample type no profile has, or a refused profile
	}
	r := &Report{Alpha: g.opts.Alpha}
	obsSides, empty, emptySide, err := g.observations()
	if err != nil {
		return nil, err
	}
	d := g.merged.Diff()
	r.merged = d
	r.SampleType, r.Kind = d.SampleType, kindOf(obsSides, d.Kind)
	r.Warnings = append(r.Warnings, d.Warnings...)
	plans, notes, err := g.plan(r.Kind, d, obsSides)
	if err != nil {
		return nil, err
	}
	r.Notes = notes
	absolute := len(notes) > 0
	if emptySide != nil && len(notes) < len(plans) {
		// A side without samples has no shares to compare; where every
		// check compares values, its runs are runs of zero.
		return nil, emptySide
	}
	for _, e := range empty {
		how := "left out of the test"
		if absolute {
			how = "counted as zero where values are compared, left out where shares are"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s; %s", e, how))
	}
	r.Base = sideInfo(d.Base, len(obsSides[0]), d.RateUnit)
	r.New = sideInfo(d.New, len(obsSides[1]), d.RateUnit)
	if !absolute {
		// Only profiles with samples are observations of shares.
		r.Base.Profiles, r.New.Profiles = nonEmpty(obsSides[0]), nonEmpty(obsSides[1])
	}
	totals := [2]float64{d.Base.Total, d.New.Total}
	checks := make([]Check, len(plans))
	obs := make([]Observation, len(plans))
	for i, p := range plans {
		checks[i] = p.Check
		o := &obs[i]
		o.Measure, o.Unit = p.measure, p.unit
		var sum [2]float64
		for side, list := range obsSides {
			for j := range list {
				pr := &list[j]
				if p.measure == MeasureShare && pr.Total == 0 {
					continue
				}
				v := p.observe(pr)
				sum[side] += pr.value(p.index, p.Check)
				if side == 0 {
					o.Base = append(o.Base, v)
				} else {
					o.New = append(o.New, v)
				}
			}
		}
		if p.measure == MeasureShare {
			o.MergedBase, o.MergedNew = g.mergedShares(d, p.index, p.Check, totals)
		} else {
			o.MergedBase, o.MergedNew = share(sum[0], p.div[0]), share(sum[1], p.div[1])
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
			p := plans[i]
			r.Checks[i].Behind = &Behind{Deciders: g.top(g.dec[p.index], p.div), Callers: g.top(g.call[p.index], p.div)}
		}
	}
	return r, nil
}

// kindOf is the kind of the profiles with samples where they agree, else
// k (the diff's): an empty contention profile does not show whether it is
// a mutex or a block profile, so it cannot decide the gate's kind.
func kindOf(sides [2][]observed, k profile.Kind) profile.Kind {
	var seen profile.Kind
	for _, list := range sides {
		for _, o := range list {
			switch {
			case o.Total == 0:
			case seen == "":
				seen = o.Kind
			case o.Kind != seen:
				return k
			}
		}
	}
	if seen == "" {
		return k
	}
	return seen
}

// nonEmpty counts the profiles with samples.
func nonEmpty(list []observed) int {
	n := 0
	for _, o := range list {
		if o.Total != 0 {
			n++
		}
	}
	return n
}

// observations returns the profiles of each side, one observation each,
// and a line on each profile without samples. It fails when a side has no
// profile, or none with samples left after the focus/ignore filters;
// emptySide is the error for a side whose every profile is empty.
func (g *Gate) observations() (sides [2][]observed, empty []string, emptySide, err error) {
	var n, filtered [2]int
	for i, p := range g.merged.Profiles() {
		sides[p.Side] = append(sides[p.Side], observed{ProfileStats: p, matched: g.matched[i]})
		if p.Total != 0 {
			n[p.Side]++
			continue
		}
		why := "has no samples left after the focus/ignore filters"
		if p.Filtered > 0 {
			filtered[p.Side]++
		} else {
			why = "is empty (no sample has a value)"
		}
		empty = append(empty, fmt.Sprintf("%s: %s %s", p.Side, p.Source, why))
	}
	for side, label := range [2]string{"base", "new"} {
		switch {
		case len(sides[side]) == 0:
			return sides, nil, nil, fmt.Errorf("%s: no profiles given", label)
		case n[side] > 0:
		case filtered[side] > 0:
			return sides, nil, nil, fmt.Errorf("%s: no profile has samples left after the focus/ignore filters; loosen them", label)
		case emptySide == nil:
			emptySide = fmt.Errorf("%s: every profile is empty (no sample has a value); nothing to test", label)
		}
	}
	if n[0] == 0 && n[1] == 0 {
		return sides, nil, nil, emptySide
	}
	return sides, empty, emptySide, nil
}

// mergedShares is check c's share of each merged side: from the diff for
// buckets and sync, so the gate's merged shares are diff's to the last
// digit, and from the summed matches for method checks.
func (g *Gate) mergedShares(d *result.Result, i int, c Check, totals [2]float64) (base, new float64) {
	switch c.Target {
	case TargetBucket:
		for _, b := range d.Buckets {
			if b.Bucket == c.Bucket {
				return b.Base, b.New
			}
		}
	case TargetSync:
		return d.SyncShare()
	}
	var sum [2]float64
	for pi, p := range g.merged.Profiles() {
		sum[p.Side] += g.matched[pi][i]
	}
	return share(sum[0], totals[0]), share(sum[1], totals[1])
}

// top returns the frames with the largest growth (positive deltas only),
// ties broken by name; each side's value is divided by div (the side's
// total for shares; its profiles or seconds for absolute values).
func (g *Gate) top(m map[string]*[2]float64, div [2]float64) []Frame {
	var fs []Frame
	for name, v := range m {
		b, n := share(v[0], div[0]), share(v[1], div[1])
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
