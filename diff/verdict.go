package diff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/units"
	"github.com/profdiff/profdiff/profile"
)

// firstOfEach keeps the first decider and the first caller of fs.
func firstOfEach(fs []result.VerdictFrame) []result.VerdictFrame {
	var out []result.VerdictFrame
	seen := map[string]bool{}
	for _, f := range fs {
		if !seen[f.Role] {
			seen[f.Role] = true
			out = append(out, f)
		}
	}
	return out
}

// leadTally sums, per side, the value each frame decided (dec) or stood
// behind as caller (call) in each bucket: memory bounded by the distinct
// methods, not samples. Each bucket's sums are a slice indexed by method
// id (grown as methods appear), not a map: this runs for every sample.
//
// A shard, which walks one side, sums that side alone (oneSide: dec1 and
// call1), half the memory a sample's two sums touch: they are two
// random loads a sample, which the walk waits on.
type leadTally struct {
	dec, call   [rules.NumBuckets][][2]float64
	oneSide     bool
	dec1, call1 [rules.NumBuckets][]float64
	hint        int // the methods expected: a sum's first make has room for them
}

func newLeadTally() *leadTally { return &leadTally{} }

// newSideLeadTally is a shard's tally, of the side it walks, for about
// methods methods.
func newSideLeadTally(methods int) *leadTally { return &leadTally{oneSide: true, hint: methods} }

// add counts one bucketed sample with a non-empty stack, whose caller
// (Sample.Caller) is at index caller.
func (t *leadTally) add(s *Sample, caller int) {
	if t.oneSide {
		credit1(&t.dec1[s.Bucket], s.Stack[max(s.Decider, 0)], s.Value, t.hint)
		credit1(&t.call1[s.Bucket], s.Stack[caller], s.Value, t.hint)
		return
	}
	credit(&t.dec[s.Bucket], s.Stack[max(s.Decider, 0)], s.Side, s.Value)
	credit(&t.call[s.Bucket], s.Stack[caller], s.Side, s.Value)
}

func credit(sums *[][2]float64, id int32, side result.Side, v float64) {
	if int(id) >= len(*sums) {
		*sums = append(*sums, make([][2]float64, int(id)+1-len(*sums))...)
	}
	(*sums)[id][side] += v
}

// credit1 adds v to (*sums)[id], growing sums to hold id; a sum's first
// make has room for hint methods.
func credit1(sums *[]float64, id int32, v float64, hint int) {
	if int(id) >= len(*sums) {
		if *sums == nil {
			*sums = make([]float64, 0, max(hint, int(id)+1))
		}
		*sums = append(*sums, make([]float64, int(id)+1-len(*sums))...)
	}
	(*sums)[id] += v
}

// sides returns a shard's tally, of side alone, as a tally of both sides.
func (t *leadTally) sides(side result.Side) *leadTally {
	out := newLeadTally()
	out.addSide(t, side, nil)
	return out
}

// addSide adds shard tally s, of side alone, into t, each method id id at
// remap[id] (the same id when remap is nil).
func (t *leadTally) addSide(s *leadTally, side result.Side, remap []int32) {
	for b := range rules.NumBuckets {
		for _, c := range []struct {
			from []float64
			to   *[][2]float64
		}{{s.dec1[b], &t.dec[b]}, {s.call1[b], &t.call[b]}} {
			for id, v := range c.from {
				if v == 0 {
					continue
				}
				to := int32(id)
				if remap != nil {
					to = remap[id]
				}
				credit(c.to, to, side, v)
			}
		}
	}
}

// verdictScore ranks a change from b to n in the measure: Δ²/(b+n).
func verdictScore(b, n float64) float64 {
	if b+n <= 0 {
		return 0
	}
	return (n - b) * (n - b) / (b + n)
}

// verdict concludes r (built by Diff, with its totals and rates).
func (a *Analyzer) verdict(r *result.Result, rt *rates, bt, nt *ProfileStats) *result.Verdict {
	v := &result.Verdict{Measure: r.Normalize, Caveats: a.caveats(r), Substitution: result.FindSubstitution(r.Meaning, r.Buckets, r.Methods)}
	var grew, fell []*result.BucketRow
	for i := range r.Buckets {
		row := &r.Buckets[i]
		switch {
		case row.Noisy || row.Change == 0:
		case row.Change > 0:
			grew = append(grew, row)
		default:
			fell = append(fell, row)
		}
	}
	cands := grew
	v.Grew = len(grew) > 0
	if !v.Grew {
		cands = fell
	}
	if len(cands) == 0 {
		v.NoChange = true
		return v
	}
	score := func(row *result.BucketRow) float64 {
		b, n := measure(r.Normalize, row.Base, row.New, &row.Values)
		return verdictScore(b, n)
	}
	sort.SliceStable(cands, func(i, j int) bool { return score(cands[i]) > score(cands[j]) })
	if v.Grew && r.Meaning == result.MeaningState && cands[0].Bucket == rules.Wait {
		// Idle goroutines and threads park in wait: its growth is
		// mostly the consequence of a change elsewhere, which leads.
		cands = append(cands[1:], cands[0])
	}
	p := cands[0]
	v.Principal = bucketChange(r.Normalize, p)
	for _, row := range cands[1:] {
		if score(row) >= score(p)/4 || abs(row.Change) > abs(p.Change) {
			c := bucketChange(r.Normalize, row)
			c.Leaders = firstOfEach(a.leaders(row.Bucket, row.Change/10, rt, r.Normalize, bt.Total, nt.Total))
			v.Also = append(v.Also, *c)
		}
	}
	v.Leaders = a.leaders(p.Bucket, p.Change/10, rt, r.Normalize, bt.Total, nt.Total)
	return v
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// bucketChange is a bucket row as a verdict's change.
func bucketChange(n result.Normalize, row *result.BucketRow) *result.VerdictChange {
	b, nw := measure(n, row.Base, row.New, &row.Values)
	return &result.VerdictChange{Bucket: row.Bucket, VerdictSize: result.VerdictSize{Base: row.Base, New: row.New, Delta: row.Delta, Change: row.Change,
		Note: units.RatioNote(b, nw), Values: row.Values}}
}

// leaders are the deciders and callers of bucket b whose change in
// measure n leads: in the direction of least (a growth when positive, a
// fall when negative) and at least as large, the largest first.
func (a *Analyzer) leaders(b rules.Bucket, least float64, rt *rates, n result.Normalize, bt, nt float64) []result.VerdictFrame {
	if a.lead == nil {
		return nil
	}
	var out []result.VerdictFrame
	seen := map[string]bool{}
	vars := a.variants()
	for _, role := range []struct {
		name string
		sums [][2]float64
	}{{"decider", a.lead.dec[b]}, {"caller", a.lead.call[b]}} {
		var fs []result.VerdictFrame
		for id, val := range role.sums {
			if val == ([2]float64{}) {
				continue // no sample credited it (a map held only credited keys)
			}
			f := result.VerdictFrame{Name: a.methodDisplayName(int32(id), vars), Role: role.name}
			f.Values = rt.values(a.unit, val[0], val[1])
			f.Base, f.New = share(val[0], bt), share(val[1], nt)
			f.Delta = f.New - f.Base
			mb, mn := measure(n, f.Base, f.New, &f.Values)
			f.Change, f.Note = mn-mb, units.RatioNote(mb, mn)
			if least > 0 && f.Change >= least || least < 0 && f.Change <= least {
				fs = append(fs, f)
			}
		}
		sort.Slice(fs, func(i, j int) bool {
			if ci, cj := abs(fs[i].Change), abs(fs[j].Change); ci != cj {
				return ci > cj
			}
			return fs[i].Name < fs[j].Name
		})
		kept := 0
		for _, f := range fs {
			if role.name == "decider" {
				// Every deciding frame, named or not: a frame that decides
				// its own bucket is its own caller, and naming it as the
				// caller of other deciders would say it calls them.
				seen[f.Name] = true
			}
			if kept == result.VerdictLeaders || role.name == "caller" && seen[f.Name] {
				continue
			}
			out = append(out, f)
			kept++
		}
	}
	return out
}

// caveats are what limits the comparison r, each said once.
func (a *Analyzer) caveats(r *result.Result) []result.Caveat {
	var cs []result.Caveat
	add := func(code, format string, args ...any) {
		cs = append(cs, result.Caveat{Code: code, Text: fmt.Sprintf(format, args...)})
	}
	base, nw := &a.sides[result.Base], &a.sides[result.New]
	switch {
	case r.Kind == "" || r.Kind == profile.KindUnknown:
		add(result.CaveatKindUnknown, "the profiles do not say what they measure")
	case base.kind != "" && nw.kind != "" && base.kind != nw.kind:
		add(result.CaveatKindsDiffer, "kinds differ (base %s, new %s): only shares compare", base.kind, nw.kind)
	}
	if len(base.kinds) > 1 || len(nw.kinds) > 1 {
		add(result.CaveatMixedKinds, "a side mixes profile kinds")
	}
	if a.typesMixed {
		add(result.CaveatTypesDiffer, "folded stacks compared with another sample type: shares only")
	}
	if r.Base.TotalRate == nil || r.New.TotalRate == nil {
		add(result.CaveatSharesOnly, "durations unknown, so shares only (no rates)")
	}
	var empty, few []string
	for _, s := range []struct {
		label string
		side  *result.SideSummary
	}{{"base", &r.Base}, {"new", &r.New}} {
		switch {
		case s.side.Profiles == 0:
		case s.side.Total == 0:
			empty = append(empty, s.label)
		case s.side.Records < LowSamples:
			few = append(few, fmt.Sprintf("%s %d", s.label, s.side.Records))
		}
	}
	if empty != nil {
		add(result.CaveatEmptySide, "empty %s", strings.Join(empty, " and "))
	}
	rb, rn := r.Base.Records, r.New.Records
	switch {
	case few != nil:
		add(result.CaveatFewSamples, "few samples (%s)", strings.Join(few, ", "))
	case recordsDiffer(rb, rn):
		add(result.CaveatSamplesDiffer, "sample counts differ (%d, %d)", rb, rn)
	}
	if base.format != "" && nw.format != "" && base.format != nw.format {
		add(result.CaveatProducers, "different producers (%s, %s) may attribute frames differently", base.format, nw.format)
	}
	if base.kind == profile.KindHeap || nw.kind == profile.KindHeap {
		add(result.CaveatHeap, "heap buckets say where memory was allocated, not where time went")
	}
	if u := r.Unknown; u != nil && max(u.Base, u.New) >= UnknownShare {
		add(result.CaveatUnknown, "%.0f%% of base and %.0f%% of new is native or blocked time no frame places, kept out of the buckets", 100*u.Base, 100*u.New)
	}
	return cs
}
