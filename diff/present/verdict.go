package present

import (
	"strconv"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/units"
)

// verdictNames is how many deciders and callers the paragraph names (the
// JSON verdict keeps result.VerdictLeaders of each).
const verdictNames = 2

// diffVerdict is the verdict paragraph of a diff (r.Verdict in report
// cells): a sentence for the principal change in share and, where known,
// rate, one for the frames that lead it, one for the other large changes
// and one for the caveats. "No change beyond noise." when nothing changed.
// Its tone is growth when a bucket other than cpu grew. A heap diff's
// verdict speaks of memory and the machinery that allocated it
// (memoryPrincipal), not of shares.
func diffVerdict(r *result.Result) *report.Verdict {
	v := r.Verdict
	if v == nil {
		return nil
	}
	out := &report.Verdict{}
	if v.Principal == nil {
		out.Lines = append(out.Lines, report.Cat("No change beyond noise."))
	} else {
		m := meaning(r.Analysis)
		if m == result.MeaningMemory {
			v = inObjects(v)
			out.Lines = append(out.Lines, memoryPrincipal(v, r.SampleType))
		} else {
			out.Lines = append(out.Lines, principalLine(v, m))
		}
		if l := leadersLine(v); l != nil {
			out.Lines = append(out.Lines, l)
		}
		if l := alsoLine(v, m); l != nil {
			out.Lines = append(out.Lines, l)
		}
		if l := SubstitutionLine(v.Substitution, m); l != nil {
			out.Lines = append(out.Lines, l)
		}
		if v.Grew && v.Principal.Bucket != rules.CPU {
			out.Tone = report.ToneGrowth
		}
	}
	if len(v.Caveats) > 0 {
		l := report.Cat("Caveat: ")
		for i, c := range v.Caveats {
			if i > 0 {
				l = append(l, report.Text("; "))
			}
			l = append(l, report.Text(c.Text))
		}
		out.Lines = append(out.Lines, append(l, report.Text(".")))
	}
	return out
}

// verb is how the verdict says its direction.
func verb(v *result.Verdict) string {
	if v.Grew {
		return " grew"
	}
	return " fell"
}

// principalLine is "lock-contention grew from 1.78% to 6.46% (12 ms/s →
// 310 ms/s, 4x rate)." For delay profiles, whose shares stay near 100%
// whatever happens, the change is said in rate (else value) alone:
// "lock-contention grew from 1.35 ms/s to 224 ms/s (166x rate)."
func principalLine(v *result.Verdict, m result.Meaning) report.Line {
	p := v.Principal
	from, to := report.Share(p.Base), report.Share(p.New)
	var paren report.Line
	switch {
	case m == result.MeaningDelay && p.BaseRate != nil && p.NewRate != nil:
		from, to = report.Amount(*p.BaseRate, p.RateUnit), report.Amount(*p.NewRate, p.RateUnit)
	case m == result.MeaningDelay && p.Unit != "":
		from, to = report.Amount(p.BaseValue, p.Unit), report.Amount(p.NewValue, p.Unit)
	case p.BaseRate != nil && p.NewRate != nil:
		paren = report.Cat(report.Amount(*p.BaseRate, p.RateUnit), " → ", report.Amount(*p.NewRate, p.RateUnit))
	case v.Measure == result.NormalizeValue && p.Unit != "":
		paren = report.Cat(report.Amount(p.BaseValue, p.Unit), " → ", report.Amount(p.NewValue, p.Unit))
	}
	l := report.Cat(report.Code(p.Bucket.String()), verb(v), " from ", from, " to ", to)
	if note := units.InMeasure(p.Note, string(v.Measure)); note != "" {
		if paren != nil {
			paren = append(paren, report.Text(", "))
		}
		paren = append(paren, report.Text(note))
	}
	if paren != nil {
		l = append(append(append(l, report.Text(" (")), paren...), report.Text(")"))
	}
	return append(l, report.Text("."))
}

// leadersLine is "Led by `Decider` (+4.59pp), called from `Caller`
// (+4.59pp).", nil without leaders.
func leadersLine(v *result.Verdict) report.Line {
	var dec, call []report.Line
	for _, f := range v.Leaders {
		l := &dec
		if f.Role == "caller" {
			l = &call
		}
		if len(*l) == verdictNames {
			continue
		}
		d := change(v.Measure, f.Delta, f.Values, false, "")
		d.Tone = report.ToneNone
		*l = append(*l, report.Cat(Name(f.Name), " (", d, ")"))
	}
	var out report.Line
	if dec != nil {
		out = append(report.Cat("Led by "), joinLines(dec)...)
	}
	if call != nil {
		if out == nil {
			out = report.Cat("Led by callers ")
		} else {
			out = append(out, report.Text(", called from "))
		}
		out = append(out, joinLines(call)...)
	}
	if out == nil {
		return nil
	}
	return append(out, report.Text("."))
}

// joinLines joins parts with " and ".
func joinLines(parts []report.Line) report.Line {
	var out report.Line
	for i, p := range parts {
		if i > 0 {
			out = append(out, report.Text(" and "))
		}
		out = append(out, p...)
	}
	return out
}

// alsoLine is "Also grew: `gc` 5.52% → 10.91% (doubled share).", nil
// when no other change is large; a heap diff's changes are in memory
// (memoryAlso).
func alsoLine(v *result.Verdict, m result.Meaning) report.Line {
	if len(v.Also) == 0 {
		return nil
	}
	l := report.Cat("Also" + verb(v) + ": ")
	for i, c := range v.Also {
		if i > 0 {
			l = append(l, report.Text("; "))
		}
		if m == result.MeaningMemory {
			l = append(append(l, memoryAlso(v.Measure, &c)...), alsoLeaders(c.Leaders)...)
			continue
		}
		l = append(l, report.Code(c.Bucket.String()), report.Text(" "), report.Share(c.Base), report.Text(" → "), report.Share(c.New))
		if c.BaseRate != nil && c.NewRate != nil {
			l = append(l, report.Text(" ("), report.Amount(*c.BaseRate, c.RateUnit), report.Text(" → "), report.Amount(*c.NewRate, c.RateUnit), report.Text(")"))
		} else if note := units.InMeasure(c.Note, string(v.Measure)); note != "" {
			l = append(l, report.Text(" ("+note+")"))
		}
		l = append(l, alsoLeaders(c.Leaders)...)
	}
	return append(l, report.Text("."))
}

// alsoLeaders is ", led by `Decider`, called from `Caller`": the frame
// that decided a further change's bucket and the program's code behind
// it, each where the verdict has one.
func alsoLeaders(fs []result.VerdictFrame) report.Line {
	var l report.Line
	for _, role := range []string{"decider", "caller"} {
		for _, f := range fs {
			if f.Role != role {
				continue
			}
			word := ", led by "
			if role == "caller" {
				word = ", called from "
			}
			l = append(l, report.Text(word), Name(f.Name))
			break
		}
	}
	return l
}

// SubstitutionLine is the sentence of a substitution: "New waits in `X`
// (and 2 more) replace waits in `Y` (12.4% vs 12.8%): total wait 30.1% →
// 29.7%; `lock-contention` 4x, `wait` 1/3." (within one bucket: "New
// waits in `X` replace waits in `Y` within `lock-contention` (...)");
// nil without one. In CPU profiles the waits are CPU spent in waiting
// machinery, and the total is said so.
func SubstitutionLine(s *result.Substitution, m result.Meaning) report.Line {
	if s == nil {
		return nil
	}
	l := report.Cat("New waits in ")
	l = append(l, group(s.In, s.InMore)...)
	l = append(l, report.Text(" replace waits in "))
	l = append(l, group(s.Out, s.OutMore)...)
	if s.Bucket != nil {
		l = append(l, report.Text(" within "), report.Code(s.Bucket.String()))
	}
	total := "total wait "
	if m == result.MeaningCPU {
		total = "total CPU in waiting machinery "
	}
	l = append(l, report.Text(" ("), report.Share(s.InShare), report.Text(" vs "), report.Share(s.OutShare),
		report.Text("): "+total), report.Share(s.SyncBase), report.Text(" → "), report.Share(s.SyncNew))
	for i, b := range s.Buckets {
		sep := "; "
		if i > 0 {
			sep = ", "
		}
		l = append(l, report.Text(sep), report.Code(b.Bucket.String()), report.Text(" "))
		if b.Note != "" {
			l = append(l, report.Text(b.Note))
		} else {
			l = append(l, report.Share(b.Base), report.Text(" → "), report.Share(b.New))
		}
	}
	return append(l, report.Text("."))
}

// group is a substitution's named methods: "`A`, `B` and 3 more".
func group(names []string, more int) report.Line {
	var l report.Line
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1 && more == 0:
			l = append(l, report.Text(" and "))
		default:
			l = append(l, report.Text(", "))
		}
		l = append(l, Name(n))
	}
	if more > 0 {
		l = append(l, report.Text(" and "+strconv.Itoa(more)+" more"))
	}
	return l
}
