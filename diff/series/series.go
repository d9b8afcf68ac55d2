// Package series judges a series of N named steps (builds, versions,
// settings), each one or more profiles, and says for each bucket and
// method the step where its change appeared: "doubled at alpha", "new at
// preview.1", "recovered at +env". `profdiff series` is its command; see
// diff/README.md ("A series of steps") for the rules in words.
//
// Each profile is analysed alone (diff.Analyzer.Top with every method
// row), so a step's profiles are its observations, as the gate's are.
// Build merges them per step and judges each step against the one
// before:
//
//   - The measure is the rate (value per second, in the kind's rate
//     unit) where every profile's rate is known: a bucket's rate moves
//     only when that bucket does. Without rates it is the share, and a
//     share is judged against the other buckets' movement: the bucket
//     whose share moved most between the two steps (the mover) is judged
//     on its share, every other bucket (and method) on its share of the
//     total without the mover, so that one bucket's growth is not
//     reported as every other bucket shrinking.
//   - A change counts when it is large enough (the size rule: at least
//     MinMove of the larger step's total and a ratio of MinRatio) and,
//     where both steps have MinRuns profiles or more, a two-sided
//     Mann–Whitney U test of the per-profile values finds it at Alpha
//     after Holm's adjustment over every bucket (for a bucket) or over
//     the methods that pass the size rule at that step (for a method). Two-sided because, unlike the gate's check of a growth,
//     a series looks for a change either way: its p is twice the gate's
//     one-sided p (gate.GrowthP) in the direction the row moved, which
//     alone would flag a step where nothing changed twice as often as
//     Alpha says.
//     With fewer profiles no test is run and the stricter threshold
//     rule decides alone (ThresholdMove, ThresholdRatio); the step's
//     Test says which.
//   - A fall that takes back at least three quarters of an earlier
//     counted growth of the same row reads "recovered".
//
// Substitutions (result.FindSubstitution) are looked for between
// consecutive steps on the rows whose change counts.
package series

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/profdiff/profdiff/diff/gate"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/units"
)

// The rules Build applies.
const (
	// MinRuns is the fewest profiles a step (and the one before it) needs
	// for the U test: with 5 against 5 the smallest two-sided p is
	// 2/252 ≈ 0.008, which survives Holm's adjustment over the 6 buckets
	// only when no run is out of place (7 against 7: 2/3432); 3 against
	// 3 cannot reach 0.05 at all.
	MinRuns = 5
	// Alpha is the significance level of the U test.
	Alpha = 0.05
	// MinMove and MinRatio are the size rule of a tested change: it moves
	// at least MinMove of the larger step's total (in the measure) and
	// one side is at least MinRatio times the other.
	MinMove  = 0.01
	MinRatio = 1.2
	// ThresholdMove and ThresholdRatio are the rule that decides alone
	// where a step has too few profiles to test.
	ThresholdMove  = 0.02
	ThresholdRatio = 1.5
	// Recovered is the least part of an earlier growth a fall must take
	// back to read "recovered".
	Recovered = 0.75
	// DefaultTop is how many method rows a series keeps.
	DefaultTop = 20
)

// Errors of Build.
var (
	// ErrTooFewSteps: a series needs two steps or more, each with a profile.
	ErrTooFewSteps = errors.New("a series needs at least two steps, each with a profile")
	// ErrMixed: the steps' profiles measure different things.
	ErrMixed = errors.New("the steps' profiles have different sample types")
	// ErrNoRate: rates were asked for and a profile has none (no
	// duration, or a memory profile, whose values are not per second).
	ErrNoRate = errors.New("a profile has no rate")
	// ErrMeasure: a measure a series cannot judge on.
	ErrMeasure = errors.New("a series is judged on share or rate")
)

// Step is one step of a series: its name and its profiles, each analysed
// alone (diff.Analyzer.Top with Options.Top -1: every method row).
type Step struct {
	Name   string
	Runs   []*result.TopResult
	Metric *float64 // the user's number for the step (requests/s), or nil
}

// Options configure Build.
type Options struct {
	Top    int    // method rows kept (0: DefaultTop; below 0: all)
	Metric string // the name of the steps' Metric values
	// Measure is what the steps are judged on: NormalizeAuto (the zero value) is
	// the rate where every profile's rate is known, else the share;
	// NormalizeShare is the share even where rates are known (for a
	// bucket whose rate follows how much of the machine the process got,
	// as a CPU profile's gc bucket does on a shared machine, while its
	// share of the process's time is the workload's own); NormalizeRate
	// insists on rates (ErrNoRate where a profile has none).
	Measure result.Normalize
}

// Build judges the steps in order (see the package comment).
func Build(steps []Step, o Options) (*result.Series, error) {
	if len(steps) < 2 {
		return nil, ErrTooFewSteps
	}
	first := (*result.TopResult)(nil)
	for _, st := range steps {
		if len(st.Runs) == 0 {
			return nil, fmt.Errorf("%w: step %s has none", ErrTooFewSteps, st.Name)
		}
		for _, r := range st.Runs {
			if first == nil {
				first = r
			} else if r.SampleType != first.SampleType {
				return nil, fmt.Errorf("%w: %s in step %s, %s in step %s", ErrMixed, first.SampleType, steps[0].Name, r.SampleType, st.Name)
			}
		}
	}
	b := &builder{steps: steps, rate: true, weighted: true}
	for _, st := range steps {
		for _, r := range st.Runs {
			b.rate = b.rate && r.TotalRate != nil && r.Meaning != result.MeaningMemory
			b.weighted = b.weighted && r.DurationNanos > 0
		}
	}
	switch o.Measure {
	case result.NormalizeAuto:
	case result.NormalizeShare:
		b.rate = false
	case result.NormalizeRate:
		if !b.rate {
			return nil, noRate(steps)
		}
	default:
		return nil, fmt.Errorf("%w, not %s", ErrMeasure, o.Measure)
	}
	s := &result.Series{Analysis: first.Analysis, Measure: result.NormalizeShare, Metric: o.Metric}
	if b.rate {
		s.Measure = result.NormalizeRate
	}
	s.Normalize = s.Measure
	for i, st := range steps {
		s.Steps = append(s.Steps, b.step(i))
		s.Steps[i].Metric = st.Metric
		for _, r := range st.Runs {
			s.Warnings = append(s.Warnings, r.Warnings...)
		}
	}
	b.collect()
	for _, bk := range rules.Buckets {
		row := b.row(bucketKey(bk))
		if row.any {
			s.Buckets = append(s.Buckets, result.SeriesRow{Bucket: bk, Cells: row.cells})
		}
	}
	mrows := b.methodRows(o.Top)
	for i := 1; i < len(steps); i++ {
		tested := len(steps[i].Runs) >= MinRuns && len(steps[i-1].Runs) >= MinRuns
		s.Steps[i].Test = result.TestThreshold
		if tested {
			s.Steps[i].Test = result.TestU
		}
		mover := b.mover(i)
		b.judge(s.Buckets, bucketKeys(s.Buckets), i, mover, tested, len(s.Buckets))
		b.judge(mrows, methodKeys(mrows), i, mover, tested, 0)
		if sub := b.substitution(s, mrows, i); sub != nil {
			s.Substitutions = append(s.Substitutions, result.SeriesSubstitution{Step: i, Name: steps[i].Name, Substitution: *sub})
		}
	}
	s.Methods = keepChanged(mrows, o.Top, s)
	return s, nil
}

// noRate names the first profile without a rate.
func noRate(steps []Step) error {
	for _, st := range steps {
		for _, r := range st.Runs {
			if r.TotalRate == nil || r.Meaning == result.MeaningMemory {
				return fmt.Errorf("%w: %v in step %s", ErrNoRate, r.Sources, st.Name)
			}
		}
	}
	return ErrNoRate
}

// key names a row: a bucket (name "") or a method.
type key struct {
	name   string
	bucket rules.Bucket
}

func bucketKey(b rules.Bucket) key { return key{bucket: b} }

func bucketKeys(rows []result.SeriesRow) []key {
	ks := make([]key, len(rows))
	for i, r := range rows {
		ks[i] = bucketKey(r.Bucket)
	}
	return ks
}

func methodKeys(rows []result.SeriesRow) []key {
	ks := make([]key, len(rows))
	for i, r := range rows {
		ks[i] = key{name: r.Name}
	}
	return ks
}

// obs is one row's numbers in one profile.
type obs struct {
	value float64
	rate  float64
}

// builder holds the steps while Build judges them.
type builder struct {
	steps    []Step
	rate     bool // the measure is the rate
	weighted bool // every profile has a duration: rates merge weighted by it
	// per step, per profile, per row: its value and rate
	runs [][]map[key]obs
	// per method: its bucket (the one holding most of its value)
	methodBucket map[string]rules.Bucket
	// per step: the merged measure of every row, built on demand
	merged []map[key]float64
}

// collect indexes every profile's buckets and methods by row.
func (b *builder) collect() {
	b.methodBucket = map[string]rules.Bucket{}
	best := map[string]float64{}
	for _, st := range b.steps {
		var runs []map[key]obs
		for _, r := range st.Runs {
			m := map[key]obs{}
			for _, bk := range r.Buckets {
				m[bucketKey(bk.Bucket)] = obs{bk.Value, deref(bk.Rate)}
			}
			for _, mt := range r.Methods {
				k := key{name: mt.Name}
				o := m[k]
				m[k] = obs{o.value + mt.Value, o.rate + deref(mt.Rate)}
				if mt.Value > best[mt.Name] {
					best[mt.Name], b.methodBucket[mt.Name] = mt.Value, mt.Bucket
				}
			}
			runs = append(runs, m)
		}
		b.runs = append(b.runs, runs)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// weight is profile r of step i's weight in its step's merged rate: its
// duration where every profile has one (a rate over the whole step),
// else 1 (snapshots: the mean per profile).
func (b *builder) weight(i, r int) float64 {
	if b.weighted {
		return float64(b.steps[i].Runs[r].DurationNanos)
	}
	return 1
}

// step is step i's summary.
func (b *builder) step(i int) result.SeriesStep {
	st := result.SeriesStep{Name: b.steps[i].Name, Runs: len(b.steps[i].Runs)}
	var rate, w float64
	for r, t := range b.steps[i].Runs {
		st.Sources = append(st.Sources, t.Sources...)
		st.Total += t.Total
		st.Samples += t.Samples
		st.DurationNanos += t.DurationNanos
		rate += deref(t.TotalRate) * b.weight(i, r)
		w += b.weight(i, r)
	}
	if b.rate {
		v := rate / w
		st.TotalRate = &v
	}
	return st
}

// rowCells is a row's cells and whether any step has a value.
type rowCells struct {
	cells []result.SeriesCell
	any   bool
}

// row is row k's merged value, share and rate at each step.
func (b *builder) row(k key) rowCells {
	var out rowCells
	for i := range b.steps {
		var c result.SeriesCell
		var total, rate, w float64
		for r, m := range b.runs[i] {
			o := m[k]
			c.Value += o.value
			total += b.steps[i].Runs[r].Total
			rate += o.rate * b.weight(i, r)
			w += b.weight(i, r)
		}
		c.Share = share(c.Value, total)
		if b.rate {
			v := rate / w
			c.Rate = &v
		}
		out.any = out.any || c.Value != 0
		out.cells = append(out.cells, c)
	}
	return out
}

func share(v, total float64) float64 {
	if total == 0 {
		return 0
	}
	return v / total
}

// mover is the bucket whose merged share moved most from step i-1 to i.
func (b *builder) mover(i int) rules.Bucket {
	best, mv := 0.0, rules.CPU
	for _, bk := range rules.Buckets {
		c := b.row(bucketKey(bk)).cells
		if d := math.Abs(c[i].Share - c[i-1].Share); d > best {
			best, mv = d, bk
		}
	}
	return mv
}

// measureOf is row k in the series' measure at step i: merged (run -1)
// or in profile run. Shares are of the total without the mover's value,
// except for the mover's own rows (see the package comment).
func (b *builder) measureOf(k key, i, run int, mover rules.Bucket) float64 {
	runs := b.runs[i]
	if run >= 0 {
		runs = runs[run : run+1]
	}
	var v, total, rate, w float64
	for r, m := range runs {
		idx := r
		if run >= 0 {
			idx = run
		}
		o := m[k]
		v += o.value
		rate += o.rate * b.weight(i, idx)
		w += b.weight(i, idx)
		total += b.steps[i].Runs[idx].Total
		if b.rowBucket(k) != mover {
			total -= m[bucketKey(mover)].value
		}
	}
	if b.rate {
		return rate / w
	}
	return share(v, total)
}

// totalOf is step i's total in the measure (1 for shares).
func (b *builder) totalOf(i int) float64 {
	if !b.rate {
		return 1
	}
	var rate, w float64
	for r, t := range b.steps[i].Runs {
		rate += deref(t.TotalRate) * b.weight(i, r)
		w += b.weight(i, r)
	}
	return rate / w
}

func (b *builder) rowBucket(k key) rules.Bucket {
	if k.name == "" {
		return k.bucket
	}
	return b.methodBucket[k.name]
}

// judge finds the changes that count at step i among rows (keys ks) and
// appends them to the rows. Holm's adjustment is over family rows, or
// over the rows that pass the size rule where that is more: the buckets
// pass all of theirs, a family fixed before the data is seen (the size
// rule picks rows by the same data the test reads, so a family of its
// survivors alone lets a noisy bucket through as if it were the only one
// looked at); the methods, hundreds, pass 0, as a family of all of them
// would leave no test any power.
func (b *builder) judge(rows []result.SeriesRow, ks []key, i int, mover rules.Bucket, tested bool, family int) {
	type cand struct {
		row      int
		from, to float64
		p        float64
	}
	var cands []cand
	scale := max(b.totalOf(i-1), b.totalOf(i))
	for j, k := range ks {
		from, to := b.measureOf(k, i-1, -1, mover), b.measureOf(k, i, -1, mover)
		move, lo, hi := math.Abs(to-from), min(from, to), max(from, to)
		minMove, minRatio := ThresholdMove, ThresholdRatio
		if tested {
			minMove, minRatio = MinMove, MinRatio
		}
		if move < minMove*scale || hi < minRatio*lo {
			continue
		}
		c := cand{row: j, from: from, to: to, p: 1}
		if tested {
			prev, cur := b.perRun(k, i-1, mover), b.perRun(k, i, mover)
			var err error
			if to > from {
				c.p, err = gate.GrowthP(prev, cur)
			} else {
				c.p, err = gate.GrowthP(cur, prev)
			}
			c.p = min(1, 2*c.p) // two-sided: see the package comment
			if err != nil {
				c.p = 1
			}
		}
		cands = append(cands, c)
	}
	ps := make([]float64, max(len(cands), family))
	for j := range ps {
		ps[j] = 1 // the rows the size rule left out: conservative for the others
	}
	for j, c := range cands {
		ps[j] = c.p
	}
	adj := gate.Holm(ps)
	for j, c := range cands {
		if tested && adj[j] > Alpha {
			continue
		}
		ch := result.SeriesChange{Step: i, Name: b.steps[i].Name, From: c.from, To: c.to, Note: note(rows[c.row].Changes, c.from, c.to)}
		if tested {
			p := adj[j]
			ch.P = &p
		}
		if !b.rate && b.rowBucket(ks[c.row]) != mover {
			ch.Without = &mover
		}
		rows[c.row].Changes = append(rows[c.row].Changes, ch)
	}
}

// perRun is row k's measure in each profile of step i.
func (b *builder) perRun(k key, i int, mover rules.Bucket) []float64 {
	out := make([]float64, len(b.runs[i]))
	for r := range out {
		out[r] = b.measureOf(k, i, r, mover)
	}
	return out
}

// note is how a change from→to reads, given the row's earlier changes:
// "recovered" where it takes back at least Recovered of the last counted
// change in the other direction, else units.RatioNote's "doubled",
// "new", "gone", "1/3", else the relative change ("+40%").
func note(before []result.SeriesChange, from, to float64) string {
	if n := len(before); n > 0 {
		last := before[n-1]
		grew := last.To - last.From
		if grew*(to-from) < 0 && math.Abs(to-last.From) <= (1-Recovered)*math.Abs(grew) {
			return "recovered"
		}
	}
	if n := units.RatioNote(from, to); n != "" {
		return n
	}
	return fmt.Sprintf("%+.0f%%", (to/from-1)*100)
}

// methodRows are the rows of the methods that are among the largest
// (2×top by merged value) at any step.
func (b *builder) methodRows(top int) []result.SeriesRow {
	if top == 0 {
		top = DefaultTop
	}
	keep := map[string]bool{}
	for _, st := range b.steps {
		sum := map[string]float64{}
		for _, r := range st.Runs {
			for _, m := range r.Methods {
				sum[m.Name] += m.Value
			}
		}
		names := make([]string, 0, len(sum))
		for n := range sum {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			if sum[names[i]] != sum[names[j]] {
				return sum[names[i]] > sum[names[j]]
			}
			return names[i] < names[j]
		})
		if top > 0 && len(names) > 2*top {
			names = names[:2*top]
		}
		for _, n := range names {
			keep[n] = true
		}
	}
	names := make([]string, 0, len(keep))
	for n := range keep {
		names = append(names, n)
	}
	sort.Strings(names)
	rows := make([]result.SeriesRow, len(names))
	for i, n := range names {
		rows[i] = result.SeriesRow{Name: n, Bucket: b.methodBucket[n], Cells: b.row(key{name: n}).cells}
	}
	return rows
}

// keepChanged keeps the method rows with a change that counts, the
// largest change (relative to its step's total) first, at most top.
func keepChanged(rows []result.SeriesRow, top int, s *result.Series) []result.SeriesRow {
	if top == 0 {
		top = DefaultTop
	}
	size := func(r *result.SeriesRow) float64 {
		m := 0.0
		for _, c := range r.Changes {
			m = max(m, math.Abs(c.To-c.From))
		}
		return m
	}
	var out []result.SeriesRow
	for _, r := range rows {
		if len(r.Changes) > 0 {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return size(&out[i]) > size(&out[j]) })
	if top > 0 && len(out) > top {
		out = out[:top]
	}
	return out
}

// substitution is result.FindSubstitution between step i-1 and i, on
// shares, the rows whose change does not count at i marked noisy.
func (b *builder) substitution(s *result.Series, mrows []result.SeriesRow, i int) *result.Substitution {
	counted := func(r *result.SeriesRow) bool {
		for _, c := range r.Changes {
			if c.Step == i {
				return true
			}
		}
		return false
	}
	var bs []result.BucketRow
	for j := range s.Buckets {
		r := &s.Buckets[j]
		p, n := r.Cells[i-1].Share, r.Cells[i].Share
		bs = append(bs, result.BucketRow{Bucket: r.Bucket, Base: p, New: n, Delta: n - p, Noisy: !counted(r)})
	}
	var ms []result.MethodRow
	for j := range mrows {
		r := &mrows[j]
		p, n := r.Cells[i-1].Share, r.Cells[i].Share
		ms = append(ms, result.MethodRow{Name: r.Name, Bucket: r.Bucket, Base: p, New: n, Delta: n - p, Noisy: !counted(r)})
	}
	return result.FindSubstitution(s.Meaning, bs, ms)
}
