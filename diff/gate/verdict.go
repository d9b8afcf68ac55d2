package gate

import (
	"github.com/profdiff/profdiff/diff/report"
)

// verdictFrames is how many deciders and callers a failed check's
// verdict sentence names (the tables below list more).
const verdictFrames = 2

// verdict is the gate's verdict paragraph: a sentence per failed check
// (its growth against its threshold and the frames behind it, deciders
// and callers), then what passed; "All N checks passed." when none
// failed, naming those that grew past their threshold within noise.
func (r *Report) verdict() *report.Verdict {
	v := &report.Verdict{}
	var noise []string
	for _, c := range r.Checks {
		switch c.Verdict {
		case Fail:
			v.Lines = append(v.Lines, failedLine(c))
		case Noise:
			noise = append(noise, c.Check)
		}
	}
	passed := len(r.Checks) - r.Failed
	var l report.Line
	switch {
	case len(r.Checks) == 0:
		return nil
	case r.Failed == 0:
		l = report.Cat("All ", passed, " ", plural(passed, "check", "checks"), " passed")
	case passed == 1:
		l = report.Cat("The other check passed")
	case passed > 1:
		l = report.Cat("The other ", passed, " checks passed")
	}
	if l != nil {
		if len(noise) > 0 {
			l = append(append(l, report.Text("; ")), report.List(noise, report.Code)...)
			l = append(l, report.Text(" grew past "+plural(len(noise), "its threshold", "their thresholds")+" but not significantly"))
		}
		v.Lines = append(v.Lines, append(l, report.Text(".")))
	}
	if r.Failed > 0 {
		v.Tone = report.ToneFail
	}
	return v
}

// failedLine is "`lock-contention` failed: 1.20% → 4.50% (+3.30pp,
// threshold +1pp, p 0.004), led by `Decider` (+3.10pp) called from
// `Caller` (+3.00pp)."
func failedLine(c CheckResult) report.Line {
	l := report.Cat(report.Code(c.Check), " failed: ", c.value(c.Base), " → ", c.value(c.New),
		" (", deltaCell(c).WithTone(report.ToneNone), ", threshold ", c.Threshold.String())
	if c.P != nil {
		l = append(l, report.Text(", p "), report.P(c.P))
	}
	l = append(l, report.Text(")"))
	if c.Behind != nil {
		if f := frameList(c, c.Behind.Deciders, c.Delta/10, nil); f != nil {
			l = append(append(l, report.Text(", led by ")), f...)
		}
		// A deciding frame that is its own caller is not named as the
		// caller of the others.
		deciders := map[string]bool{}
		for _, f := range c.Behind.Deciders {
			deciders[f.Name] = true
		}
		if f := frameList(c, c.Behind.Callers, c.Delta/10, deciders); f != nil {
			l = append(append(l, report.Text(" called from ")), f...)
		}
	}
	return append(l, report.Text("."))
}

// frameList names up to verdictFrames frames behind check c that grew by
// at least least, with their growth, leaving out those in skip: "`a`
// (+3.10pp) and `b` (+0.90pp)"; nil for none.
func frameList(c CheckResult, fs []Frame, least float64, skip map[string]bool) report.Line {
	var l report.Line
	n := 0
	for _, f := range fs {
		if n == verdictFrames || f.Delta < least {
			break
		}
		if skip[f.Name] {
			continue
		}
		if n > 0 {
			l = append(l, report.Text(" and "))
		}
		n++
		l = append(l, report.Code(f.Name), report.Text(" ("), c.delta(f.Delta), report.Text(")"))
	}
	return l
}
