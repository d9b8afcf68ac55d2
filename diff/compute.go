package diff

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/profile"
)

// noiseSE is the standard error of a share p estimated from n samples
// (binomial), the yardstick for "is this delta more than sampling noise".
func noiseSE(p float64, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return math.Sqrt(p * (1 - p) / float64(n))
}

// noisy reports whether a change from pb (nb samples) to pn (nn samples) is
// within two standard errors of sampling noise.
func noisy(pb, pn float64, nb, nn int64) bool {
	se := math.Hypot(noiseSE(pb, nb), noiseSE(pn, nn))
	return math.Abs(pn-pb) < 2*se
}

func share(v, total float64) float64 {
	if total == 0 {
		return 0
	}
	return v / total
}

// bucketOf is the bucket holding most of a method's value over both sides
// (ties go to the earlier bucket in report order).
func (m *method) bucketOf() Bucket {
	best, bv := CPU, -1.0
	for _, b := range Buckets {
		v := m.buckets[0][b] + m.buckets[1][b]
		if v > bv {
			best, bv = b, v
		}
	}
	return best
}

// sideTotals sums the values of a side's profiles.
func (a *Analyzer) sideTotals(side Side) (t ProfileStats, sources []string) {
	sources = []string{}
	for i := range a.profiles {
		if p := &a.profiles[i]; p.Side == side {
			t.add(p)
			sources = append(sources, p.Source)
		}
	}
	return t, sources
}

func (a *Analyzer) summary(side Side, t *ProfileStats, sources []string) SideSummary {
	m := &a.sides[side]
	return SideSummary{
		Sources:       sources,
		Total:         t.Total,
		Unit:          a.unit,
		Samples:       t.Samples,
		Kind:          m.kind,
		Period:        m.period,
		PeriodType:    m.periodType,
		DurationNanos: t.DurationNanos,
	}
}

// LowSamples is the sample count under which a side gets a warning that
// small deltas are within sampling noise.
const LowSamples = 1000

// sideWarnings says what is odd about one side: it is empty, small,
// mixes kinds or periods, or is a heap profile.
func (a *Analyzer) sideWarnings(side Side, label string, t *ProfileStats, sources []string) []string {
	m := &a.sides[side]
	if len(sources) == 0 {
		return nil
	}
	var w []string
	if t.Filtered > 0 && t.Total == 0 {
		w = append(w, fmt.Sprintf("%s: every sample was removed by the focus/ignore filters", label))
	} else if t.Total == 0 {
		w = append(w, fmt.Sprintf("%s: side is empty (no sample has a non-zero %s)", label, a.sampleType))
	} else if t.Samples < LowSamples {
		w = append(w, fmt.Sprintf("%s: only %d samples; deltas within two standard errors of sampling noise are marked ~", label, t.Samples))
	}
	if len(m.kinds) > 1 {
		w = append(w, fmt.Sprintf("%s: mixes profile kinds %s", label, kindList(m.kinds)))
	}
	if periodsDiffer(m.periods) {
		w = append(w, fmt.Sprintf("%s: profiles have different sampling periods (%s); merged values weigh them unequally", label, periodList(m.periods)))
	}
	if m.kind == profile.KindHeap {
		w = append(w, fmt.Sprintf("%s: heap profile: buckets describe where memory was allocated, not where time went", label))
	}
	return w
}

// periodsDiffer reports whether a side's sampling periods differ by more
// than 10% (see the cross-side check in Diff).
func periodsDiffer(m map[int64]bool) bool {
	lo, hi := int64(math.MaxInt64), int64(0)
	for p := range m {
		lo, hi = min(lo, p), max(hi, p)
	}
	return len(m) > 1 && float64(hi) > 1.1*float64(lo)
}

func kindList(m map[profile.Kind]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, string(k))
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

func periodList(m map[int64]bool) string {
	var ps []int64
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.FormatInt(p, 10)
	}
	return strings.Join(s, ", ")
}

// Diff computes the comparison of the base and new sides. It is pure:
// calling it again, or Top, gives the same answer and the same warnings.
func (a *Analyzer) Diff() *Result {
	bt, bsrc := a.sideTotals(Base)
	nt, nsrc := a.sideTotals(New)
	base, nw := &a.sides[Base], &a.sides[New]
	r := &Result{Analysis: a.analysis(base.kind), Base: a.summary(Base, &bt, bsrc), New: a.summary(New, &nt, nsrc)}
	if r.Kind == "" {
		r.Kind = nw.kind
	}
	r.Warnings = append(append([]string(nil), a.warnings...), a.sideWarnings(Base, "base", &bt, bsrc)...)
	r.Warnings = append(r.Warnings, a.sideWarnings(New, "new", &nt, nsrc)...)
	r.Warnings = append(r.Warnings, a.crossWarnings(&bt, &nt)...)
	for _, b := range Buckets {
		pb, pn := share(bt.Buckets[b], bt.Total), share(nt.Buckets[b], nt.Total)
		r.Buckets = append(r.Buckets, BucketRow{Bucket: b, Base: pb, New: pn, Delta: pn - pb,
			Noisy: pb != pn && noisy(pb, pn, bt.Samples, nt.Samples), Values: Values{BaseValue: bt.Buckets[b], NewValue: nt.Buckets[b], Unit: a.unit}})
	}
	if bt.Sched > 0 || nt.Sched > 0 {
		pb, pn := share(bt.Sched, bt.Total+bt.Sched), share(nt.Sched, nt.Total+nt.Sched)
		r.Sched = &SchedRow{Base: pb, New: pn, Delta: pn - pb, Values: Values{BaseValue: bt.Sched, NewValue: nt.Sched, Unit: a.unit}}
	}
	r.Methods = a.methodRows(&bt, &nt)
	if a.tree != nil {
		r.Tree = a.tree.result(a, New)
	}
	return r
}

func (a *Analyzer) analysis(k profile.Kind) Analysis {
	return Analysis{SampleType: a.sampleType, Kind: k, By: a.opts.By, Cum: a.opts.Cum}
}

// crossWarnings compares the two sides' kinds, periods, durations and
// thread counts.
func (a *Analyzer) crossWarnings(bt, nt *ProfileStats) []string {
	base, nw := &a.sides[Base], &a.sides[New]
	var w []string
	if base.kind != "" && nw.kind != "" && base.kind != nw.kind {
		w = append(w, fmt.Sprintf("profile kinds differ: base is %s, new is %s", base.kind, nw.kind))
	}
	// fgprof and other wall-clock writers report a measured period that
	// wobbles by a few percent between runs; only a real difference in
	// sampling rate is worth a warning.
	if base.period != 0 && nw.period != 0 && float64(max(base.period, nw.period)) > 1.1*float64(min(base.period, nw.period)) {
		w = append(w, fmt.Sprintf("sampling periods differ: base %d, new %d (%s); shares compare, raw values do not", base.period, nw.period, base.periodType))
	}
	if db, dn := bt.DurationNanos, nt.DurationNanos; db > 0 && dn > 0 {
		if ratio := float64(max(db, dn)) / float64(min(db, dn)); ratio > 1.25 {
			w = append(w, fmt.Sprintf("profile durations differ: base %.3gs, new %.3gs; shares compare, raw values do not", float64(db)/1e9, float64(dn)/1e9))
		}
	}
	if tb, tn := len(base.threads), len(nw.threads); tb > 0 && tn > 0 && tb != tn {
		w = append(w, fmt.Sprintf("thread counts differ: base %d threads, new %d; thread time is the sum over threads, so a side with more (often idle) threads gives each state a different share", tb, tn))
	}
	return w
}

// methodRows builds the method table: shares of each side's total, notes,
// moves between modules, sorted and cut to Options.Top.
func (a *Analyzer) methodRows(bt, nt *ProfileStats) []MethodRow {
	rows := make([]MethodRow, 0, len(a.methods))
	for _, m := range a.methods {
		if m.val[0] == 0 && m.val[1] == 0 {
			continue
		}
		pb, pn := share(m.val[0], bt.Total), share(m.val[1], nt.Total)
		row := MethodRow{
			Name: m.name, Bucket: m.bucketOf(), Base: pb, New: pn, Delta: pn - pb,
			Values: Values{BaseValue: m.val[0], NewValue: m.val[1], Unit: a.unit},
			Noisy:  noisy(pb, pn, bt.Samples, nt.Samples),
		}
		row.Module = m.module[New]
		if m.val[1] == 0 {
			row.Module = m.module[Base]
		}
		row.Note = ratioNote(pb, pn)
		rows = append(rows, row)
	}
	annotateMoves(rows)
	for i := range rows {
		rows[i].Name = a.qualify(rows[i].Name, rows[i].Module)
	}
	sortRows(rows)
	if a.opts.Top > 0 && len(rows) > a.opts.Top {
		rows = rows[:a.opts.Top]
	}
	return rows
}

// sortRows orders method rows by |delta| descending, then by name, so output
// never depends on map or input order.
func sortRows(rows []MethodRow) {
	sort.Slice(rows, func(i, j int) bool {
		di, dj := math.Abs(rows[i].Delta), math.Abs(rows[j].Delta)
		if di != dj {
			return di > dj
		}
		return rows[i].Name < rows[j].Name
	})
}

// Top computes the single-side analysis of everything added to the base
// side. Like Diff it is pure.
func (a *Analyzer) Top() *TopResult {
	s := &a.sides[Base]
	tt, src := a.sideTotals(Base)
	t := &TopResult{Analysis: a.analysis(s.kind), Sources: src, Total: tt.Total, Unit: a.unit, Samples: tt.Samples}
	t.Warnings = append(append([]string(nil), a.warnings...), a.sideWarnings(Base, "profile", &tt, src)...)
	for _, b := range Buckets {
		t.Buckets = append(t.Buckets, TopBucket{Bucket: b, Share: share(tt.Buckets[b], tt.Total), Value: tt.Buckets[b]})
	}
	if tt.Sched > 0 {
		t.Sched = &TopSched{Share: share(tt.Sched, tt.Total+tt.Sched), Value: tt.Sched}
	}
	for _, m := range a.methods {
		if m.val[0] == 0 {
			continue
		}
		t.Methods = append(t.Methods, TopMethod{Name: a.qualify(m.name, m.module[Base]), Bucket: m.bucketOf(), Share: share(m.val[0], tt.Total), Value: m.val[0], Module: m.module[Base]})
	}
	sort.Slice(t.Methods, func(i, j int) bool {
		if t.Methods[i].Value != t.Methods[j].Value {
			return t.Methods[i].Value > t.Methods[j].Value
		}
		return t.Methods[i].Name < t.Methods[j].Name
	})
	if a.opts.Top > 0 && len(t.Methods) > a.opts.Top {
		t.Methods = t.Methods[:a.opts.Top]
	}
	if a.tree != nil {
		t.Tree = a.tree.result(a, Base)
	}
	return t
}
