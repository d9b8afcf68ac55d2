package diff

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
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
func (m *method) bucketOf() rules.Bucket {
	best, bv := rules.CPU, -1.0
	for _, b := range rules.Buckets {
		v := m.buckets[0][b] + m.buckets[1][b]
		if v > bv {
			best, bv = b, v
		}
	}
	return best
}

// split is a method's dominant bucket, the fraction of its value (both
// sides) in it, and, when the value spans more than one bucket, the whole
// split.
func (m *method) split() (rules.Bucket, float64, map[rules.Bucket]result.BucketSplit) {
	best := m.bucketOf()
	total, spans := 0.0, 0
	for _, b := range rules.Buckets {
		if v := m.buckets[0][b] + m.buckets[1][b]; v != 0 {
			total += v
			spans++
		}
	}
	bs := share(m.buckets[0][best]+m.buckets[1][best], total)
	if spans < 2 {
		return best, bs, nil
	}
	out := make(map[rules.Bucket]result.BucketSplit, spans)
	for _, b := range rules.Buckets {
		if m.buckets[0][b] != 0 || m.buckets[1][b] != 0 {
			out[b] = result.BucketSplit{BaseValue: m.buckets[0][b], NewValue: m.buckets[1][b]}
		}
	}
	return best, bs, out
}

// sideTotals sums the values of a side's profiles.
func (a *Analyzer) sideTotals(side result.Side) (t ProfileStats, sources []string) {
	sources = []string{}
	for i := range a.profiles {
		if p := &a.profiles[i]; p.Side == side {
			t.add(p)
			sources = append(sources, p.Source)
		}
	}
	return t, sources
}

func (a *Analyzer) summary(side result.Side, t *ProfileStats, sources []string, rt *rates) result.SideSummary {
	m := &a.sides[side]
	s := result.SideSummary{
		Sources:       sources,
		Total:         t.Total,
		Unit:          a.unit,
		Samples:       t.Samples,
		Kind:          m.kind,
		Period:        m.period,
		PeriodType:    m.periodType,
		DurationNanos: t.DurationNanos,
		Records:       t.Samples,
		Profiles:      len(sources),
		TotalRate:     rt.rate(side, t.Total),
	}
	if !m.goMissing {
		s.GoVersion = m.goVersion
	}
	return s
}

// Diff computes the comparison of the base and new sides. It is pure:
// calling it again, or Top, gives the same answer and the same warnings.
func (a *Analyzer) Diff() *result.Result {
	a.flush()
	bt, bsrc := a.sideTotals(result.Base)
	nt, nsrc := a.sideTotals(result.New)
	kind := a.sides[result.Base].kind
	if kind == "" {
		kind = a.sides[result.New].kind
	}
	rt := a.rates(kind)
	an, nw := a.analysis(kind, &rt, rt.known())
	r := &result.Result{Analysis: an, Base: a.summary(result.Base, &bt, bsrc, &rt), New: a.summary(result.New, &nt, nsrc, &rt)}
	r.Warnings = append(append([]string(nil), a.warnings...), a.sideWarnings(result.Base, "base", &bt, bsrc, true)...)
	r.Warnings = append(r.Warnings, a.sideWarnings(result.New, "new", &nt, nsrc, true)...)
	r.Warnings = append(r.Warnings, a.heapWarning()...)
	r.Warnings = append(r.Warnings, a.crossWarnings(r, &rt)...)
	if nw != "" {
		r.Warnings = append(r.Warnings, nw)
	}
	for _, b := range rules.Buckets {
		pb, pn := share(bt.Buckets[b], bt.Total), share(nt.Buckets[b], nt.Total)
		row := result.BucketRow{Bucket: b, Base: pb, New: pn, Delta: pn - pb,
			Noisy: pb != pn && noisy(pb, pn, bt.Samples, nt.Samples), Values: rt.values(a.unit, bt.Buckets[b], nt.Buckets[b])}
		mb, mn := measure(r.Normalize, pb, pn, &row.Values)
		row.Change = mn - mb
		r.Buckets = append(r.Buckets, row)
	}
	r.Sched = apartRow(&rt, a.unit, &bt, &nt, bt.Sched, nt.Sched)
	r.Unknown = apartRow(&rt, a.unit, &bt, &nt, bt.Unknown, nt.Unknown)
	r.Methods = a.methodRows(&bt, &nt, &rt, r.Normalize)
	if a.peek != nil {
		r.Peek, r.PeekOmitted = a.peek.rows(a, &rt, r.Normalize, bt.Total, nt.Total, a.opts.Top)
		r.Warnings = append(r.Warnings, a.peek.warning()...)
	}
	r.Tree, r.Stacks, r.Warnings = a.treeResult(result.New, r.Warnings)
	r.Verdict = a.verdict(r, &rt, &bt, &nt)
	return r
}

// analysis is the header of a result of kind k, and a warning when the
// measure asked for cannot be used (known: whether the rates needed are).
func (a *Analyzer) analysis(k profile.Kind, rt *rates, known bool) (result.Analysis, string) {
	by := a.by
	if by == "" { // nothing added yet
		by = result.DefaultBy(k)
	}
	n, w := resolveNormalize(a.opts.Normalize, known, meaningOf(k), a.sameProfileCount())
	return result.Analysis{SampleType: a.sampleType, Kind: k, Meaning: meaningOf(k), By: by, ByDefault: a.opts.By == "",
		Cum: a.opts.Cum, Normalize: n, Unit: a.unit, RateUnit: rt.unit}, w
}

// sameProfileCount reports whether both sides hold as many profiles (a
// side with none counts as the same: Top).
func (a *Analyzer) sameProfileCount() bool {
	var n [2]int
	for i := range a.profiles {
		n[a.profiles[i].Side]++
	}
	return n[result.Base] == n[result.New] || n[result.New] == 0
}

// methodRows builds the method table: shares of each side's total, values
// and rates, notes in measure n, moves between modules, sorted by |Δ| in
// n and cut to Options.Top.
func (a *Analyzer) methodRows(bt, nt *ProfileStats, rt *rates, n result.Normalize) []result.MethodRow {
	rows := make([]result.MethodRow, 0, len(a.methods))
	vars := a.variants()
	for _, p := range a.rowPairs() {
		m, renamedFrom := a.pairedMethod(p)
		pb, pn := share(m.val[0], bt.Total), share(m.val[1], nt.Total)
		row := result.MethodRow{Name: m.name, Base: pb, New: pn, Delta: pn - pb,
			Values: rt.values(a.unit, m.val[0], m.val[1]),
			Noisy:  noisy(pb, pn, bt.Samples, nt.Samples),
		}
		if p.base == p.new && vars[p.base] > 1 {
			row.Name, row.Variants = m.label(vars[p.base]), int(vars[p.base])
		}
		row.Bucket, row.BucketShare, row.Buckets = m.split()
		row.Module = m.module[result.New]
		if m.val[1] == 0 {
			row.Module = m.module[result.Base]
		}
		mb, mn := measure(n, pb, pn, &row.Values)
		row.Note, row.Change = measureNote(n, mb, mn), mn-mb
		if renamedFrom != "" {
			row.Note = joinNote(row.Note, "renumbered from "+renamedFrom)
			row.RenumberedFrom = renamedFrom
		}
		rows = append(rows, row)
	}
	annotateMoves(rows)
	for i := range rows {
		rows[i].Name = a.qualify(rows[i].Name, rows[i].Module)
	}
	return sortRows(rows, n, a.opts.Top)
}

// sortRows orders method rows by |Δ| in measure n descending, then by
// name, then as they came (the method table's order, itself made
// without a map), so output never depends on map or input order; with
// top > 0 it returns only the first top rows.
//
// Each row's |Δ| is worked out once and an index of the rows is sorted
// in their place, so each row (some 200 bytes) is moved once, not at
// every swap. Where top is small beside the rows (the table's 20 of the
// 200k pair's 12,600), the first top are picked in one pass, each row
// compared with the last of those kept so far, and only they are
// sorted, not every row for the table's 20.
func sortRows(rows []result.MethodRow, n result.Normalize, top int) []result.MethodRow {
	keys := make([]float64, len(rows))
	for i := range rows {
		b, nw := measure(n, rows[i].Base, rows[i].New, &rows[i].Values)
		keys[i] = math.Abs(nw - b)
	}
	cmpRows := func(x, y int32) int {
		switch {
		case keys[x] > keys[y]:
			return -1
		case keys[x] < keys[y]:
			return 1
		}
		if c := strings.Compare(rows[x].Name, rows[y].Name); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	}
	var idx []int32
	if top > 0 && top*8 < len(rows) {
		idx = make([]int32, 0, top+1)
		for i := range int32(len(rows)) {
			if len(idx) == top && cmpRows(i, idx[top-1]) >= 0 {
				continue
			}
			at, _ := slices.BinarySearchFunc(idx, i, cmpRows)
			idx = slices.Insert(idx, at, i)
			if len(idx) > top {
				idx = idx[:top]
			}
		}
	} else {
		idx = make([]int32, len(rows))
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortFunc(idx, cmpRows)
		if top > 0 && len(idx) > top {
			idx = idx[:top]
		}
	}
	sorted := make([]result.MethodRow, len(idx))
	for i, x := range idx {
		sorted[i] = rows[x]
	}
	return sorted
}

// Top computes the single-side analysis of everything added to the base
// side. Like Diff it is pure. It warns of no sampling noise: it shows no
// deltas.
func (a *Analyzer) Top() *result.TopResult {
	a.flush()
	s := &a.sides[result.Base]
	tt, src := a.sideTotals(result.Base)
	rt := a.rates(s.kind)
	an, nw := a.analysis(s.kind, &rt, rt.factor[result.Base] != nil)
	t := &result.TopResult{Analysis: an, Sources: src, Total: tt.Total, Unit: a.unit, Samples: tt.Samples, Records: tt.Samples,
		DurationNanos: tt.DurationNanos, TotalRate: rt.rate(result.Base, tt.Total)}
	t.Warnings = append(append([]string(nil), a.warnings...), a.sideWarnings(result.Base, "profile", &tt, src, false)...)
	t.Warnings = append(t.Warnings, a.heapWarning()...)
	if nw != "" {
		t.Warnings = append(t.Warnings, nw)
	}
	for _, b := range rules.Buckets {
		t.Buckets = append(t.Buckets, result.TopBucket{Bucket: b, Share: share(tt.Buckets[b], tt.Total), Value: tt.Buckets[b], Rate: rt.rate(result.Base, tt.Buckets[b])})
	}
	t.Sched = topApart(&rt, &tt, tt.Sched)
	t.Unknown = topApart(&rt, &tt, tt.Unknown)
	t.Methods = a.topMethods(&tt, &rt)
	if a.peek != nil {
		t.Peek, t.PeekOmitted = a.peek.rows(a, &rt, t.Normalize, tt.Total, 0, a.opts.Top)
		t.Warnings = append(t.Warnings, a.peek.warning()...)
	}
	t.Tree, t.Stacks, t.Warnings = a.treeResult(result.Base, t.Warnings)
	return t
}

// topMethods is Top's method table, by value descending, then by name.
func (a *Analyzer) topMethods(tt *ProfileStats, rt *rates) []result.TopMethod {
	var out []result.TopMethod
	vars := a.variants()
	for id, m := range a.methods {
		if m.val[0] == 0 {
			continue
		}
		tm := result.TopMethod{Name: a.qualify(m.label(vars[id]), m.module[result.Base]), Share: share(m.val[0], tt.Total), Value: m.val[0],
			Rate: rt.rate(result.Base, m.val[0]), Module: m.module[result.Base]}
		if vars[id] > 1 {
			tm.Variants = int(vars[id])
		}
		var split map[rules.Bucket]result.BucketSplit
		tm.Bucket, tm.BucketShare, split = m.split()
		if split != nil {
			tm.Buckets = make(map[rules.Bucket]float64, len(split))
			for b, v := range split {
				tm.Buckets[b] = v.BaseValue
			}
		}
		out = append(out, tm)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return out[i].Value > out[j].Value
		}
		return out[i].Name < out[j].Name
	})
	if a.opts.Top > 0 && len(out) > a.opts.Top {
		out = out[:a.opts.Top]
	}
	return out
}

// recorded is all the time a side recorded: its buckets and the time kept
// apart from them.
func (s *ProfileStats) recorded() float64 { return s.Total + s.Sched + s.Unknown }

// apartRow is the row of time kept apart from the buckets (base and new
// values b and n), nil when neither side has any.
func apartRow(rt *rates, unit string, bt, nt *ProfileStats, b, n float64) *result.SchedRow {
	if b <= 0 && n <= 0 {
		return nil
	}
	pb, pn := share(b, bt.recorded()), share(n, nt.recorded())
	return &result.SchedRow{Base: pb, New: pn, Delta: pn - pb, Values: rt.values(unit, b, n)}
}

// topApart is a single side's time kept apart from the buckets, nil when
// it has none.
func topApart(rt *rates, tt *ProfileStats, v float64) *result.TopSched {
	if v <= 0 {
		return nil
	}
	return &result.TopSched{Share: share(v, tt.recorded()), Value: v, Rate: rt.rate(result.Base, v)}
}

// joinNote adds a second note to a row's note.
func joinNote(note, more string) string {
	if note == "" {
		return more
	}
	return note + "; " + more
}

// treeResult is what the call tree gives a result, names qualified for
// the prefer side: its stacks unbuilt (Options.TreeStacks), else the
// built tree (Options.CallTree), whose warning is added to warnings.
func (a *Analyzer) treeResult(prefer result.Side, warnings []string) (*result.CallNode, result.Stacks, []string) {
	switch {
	case a.tree != nil && a.opts.TreeStacks:
		return nil, a.tree.stacks(a, prefer), warnings
	case a.tree != nil && a.opts.CallTree:
		n, w := a.tree.result(a, prefer, a.opts.TreeMin)
		if w != "" {
			warnings = append(warnings, w)
		}
		return n, nil, warnings
	}
	return nil, nil, warnings
}
