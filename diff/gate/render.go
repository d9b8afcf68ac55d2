package gate

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
)

// Render writes r in format f: a terminal table, a Markdown summary ready
// for a pull-request comment or a GitHub step summary, CSV or JSON. The
// text formats list the frames behind each failed check.
func Render(w io.Writer, r *Report, f render.Format) error { return Write(w, r, f, render.Options{}) }

// Write is Render laid out for o: the terminal table fits o.Width and,
// with o.Color, failures are red (see render.Write).
func Write(w io.Writer, r *Report, f render.Format, o render.Options) error {
	return render.Write(w, r.Model(), f, o)
}

// PValue formats a p-value for a table: "0.008", "<0.001", or "n/a" when
// no test was run.
func PValue(p *float64) string { return render.String(report.P(p)) }

// DeltaCell is the Δ column: the merged growth in percentage points, and
// for a relative threshold also the growth relative to base ("new" when
// the base share is zero).
func DeltaCell(c CheckResult) string { return render.String(deltaCell(c)) }

func deltaCell(c CheckResult) report.Cell {
	d := c.delta(c.Delta)
	if c.Verdict == Fail {
		d = d.WithTone(report.ToneGrowth)
	}
	switch {
	case !c.Threshold.Relative && !c.Threshold.Factor:
	case c.Base <= 0 && c.New > 0:
		d = d.WithNote("new")
	case c.Threshold.Factor && c.Base > 0:
		d = d.WithNote(factor(c.New / c.Base))
	case c.Relative != nil:
		d = d.WithRelative(*c.Relative)
	}
	return d
}

// factor prints a ratio with three significant digits and no exponent:
// "2.04x", "13.2x", "633x".
func factor(f float64) string {
	if f >= 100 {
		return strconv.FormatFloat(f, 'f', 0, 64) + "x"
	}
	return strconv.FormatFloat(f, 'g', 3, 64) + "x"
}

// value is a value of check c: a share, or an amount in c's unit.
func (c CheckResult) value(v float64) report.Cell {
	if c.Measure == MeasureRate || c.Measure == MeasurePerRun {
		return report.Amount(v, c.Unit)
	}
	return report.Share(v)
}

// delta is a growth of check c: in percentage points of share, or an
// amount in c's unit.
func (c CheckResult) delta(v float64) report.Cell {
	d := report.Delta(v, false, "")
	if c.Measure == MeasureRate || c.Measure == MeasurePerRun {
		d = d.WithUnit(c.Unit)
	}
	return d
}

// Model is the gate report as a report.Report: a summary, the check table,
// a line on the method, and for each failed check the frames behind it;
// CSV has a record per check and per frame behind one, JSON is r itself.
func (r *Report) Model() *report.Report {
	checks := &report.Table{Columns: []report.Column{report.Col("Check"), report.RCol("base"), report.RCol("new"), report.RCol("Δ"), report.RCol("threshold"), report.RCol("p"), report.Col("verdict")}}
	records := &report.Table{Columns: report.Cols("section", "check", "name", "threshold", "base", "new", "delta", "p", "p_raw", "verdict", "measure", "unit")}
	for _, c := range r.Checks {
		md := report.Line{report.Code(c.Name)}
		if c.Target == TargetMethod {
			md = report.Cat("method ", md)
		}
		checks.Rows = append(checks.Rows, []report.Cell{report.Text(c.Check).OrInMarkdown(md...), c.value(c.Base), c.value(c.New),
			deltaCell(c), report.Text(c.Threshold.String()), report.P(c.P), verdictCell(c.Verdict)})
		records.Rows = append(records.Rows, []report.Cell{report.Text("check"), report.Text(c.Check), report.Text(c.Name), report.Text(c.Threshold.String()),
			c.value(c.Base), c.value(c.New), c.delta(c.Delta), report.P(c.P), report.P(c.PRaw), report.Text(string(c.Verdict)),
			report.Text(string(c.Measure)), report.Text(c.Unit)})
	}
	method := r.method()
	term, md := []report.Line{report.Cat(method)}, []report.Line{report.Cat(strings.ToUpper(method[:1]) + method[1:] + ".")}
	for _, n := range r.Notes {
		term, md = append(term, report.Cat(n)), append(md, report.Cat(strings.ToUpper(n[:1])+n[1:]+"."))
	}
	blocks := append(r.summary(), checks,
		report.Para{Only: report.Terminal, Tight: true, Lines: term},
		report.Para{Only: report.Markdown, Lines: md})
	for _, c := range r.Checks {
		if c.Behind == nil {
			continue
		}
		d := c.delta(c.Delta)
		blocks = append(blocks,
			report.Heading{Level: 4, Only: report.Markdown, Line: report.Cat("Behind ", report.Code(c.Check), " (", d, ", threshold ", c.Threshold.String(), ")")},
			report.Heading{Only: report.Terminal, Line: report.Cat("behind ", c.Check, " (", d, ", threshold ", c.Threshold.String(), "):")})
		for _, part := range []struct {
			head, section string
			frames        []Frame
		}{
			{"Frame that decided the bucket", "decider", c.Behind.Deciders},
			{"Caller (nearest program frame)", "caller", c.Behind.Callers},
		} {
			t := &report.Table{Columns: []report.Column{report.Col(part.head), report.RCol("base"), report.RCol("new"), report.RCol("Δ")}}
			for _, f := range part.frames {
				cells := []report.Cell{c.value(f.Base), c.value(f.New), c.delta(f.Delta)}
				t.Rows = append(t.Rows, append([]report.Cell{present.Name(f.Name)}, cells...))
				records.Rows = append(records.Rows, []report.Cell{report.Text(part.section), report.Text(c.Check), report.Text(f.Name), report.None(""),
					cells[0], cells[1], cells[2], report.None(""), report.None(""), report.None(""), report.Text(string(c.Measure)), report.Text(c.Unit)})
			}
			blocks = append(blocks, t)
		}
	}
	blocks = append(blocks, r.charts()...)
	if r.merged != nil {
		// The merged sides as the html format shows a diff: bucket bars
		// and the differential flame graph (when the tree was built).
		blocks = append(blocks, present.DiffPictures(r.merged)...)
	}
	return &report.Report{Blocks: blocks, Records: records, JSON: r, Warnings: r.Warnings, Verdict: r.verdict()}
}

// summary is the head of the report: in Markdown a heading and a sentence
// on each side, in the terminal the headline over a line per side.
func (r *Report) summary() []report.Block {
	src := present.ShortSources(r.Base.Sources, r.New.Sources)
	side := func(s SideInfo, sources report.Line) report.Line {
		l := report.Cat(s.Profiles, " ", plural(s.Profiles, "profile", "profiles"), " (", sources, "), ",
			report.Int(s.Samples), " samples")
		if s.DurationNanos > 0 {
			l = append(l, report.Text(", total "), report.Amount(s.Total, s.Unit), report.Text(" over "), report.Amount(float64(s.DurationNanos), "nanoseconds"))
			if s.TotalRate != nil && s.RateUnit != "" {
				l = append(l, report.Text(" ("), report.Amount(*s.TotalRate, s.RateUnit), report.Text(")"))
			}
		}
		return l
	}
	return []report.Block{
		report.Heading{Level: 3, Line: report.Cat("profdiff gate: ", report.Text(r.headline()).WithTone(r.tone()))},
		report.Para{Only: report.Markdown, Lines: []report.Line{report.Cat("Base: ", side(r.Base, report.List(src[0], report.Code)), ". New: ", side(r.New, report.List(src[1], report.Code)),
			". Sample type ", report.Code(r.SampleType), ", kind ", report.Code(string(r.Kind)), ".")}},
		report.Para{Only: report.Terminal, Lines: []report.Line{
			report.Cat("base: ", side(r.Base, present.SourceList(src[0], r.Base.Sources))),
			report.Cat("new:  ", side(r.New, present.SourceList(src[1], r.New.Sources))),
			report.Cat("sample type ", r.SampleType, ", kind ", r.Kind),
		}},
	}
}

func verdictCell(v Verdict) report.Cell {
	switch v {
	case Fail:
		return report.Text("FAIL").Bold().WithTone(report.ToneFail)
	case Noise:
		return report.Text("pass (not significant)")
	}
	return report.Text("pass")
}

// tone marks a failed gate.
func (r *Report) tone() report.Tone {
	if r.Verdict == Fail {
		return report.ToneFail
	}
	return report.ToneNone
}

func (r *Report) headline() string {
	n := len(r.Checks)
	if r.Verdict == Fail {
		return fmt.Sprintf("FAIL (%d of %d %s failed)", r.Failed, n, plural(n, "check", "checks"))
	}
	return fmt.Sprintf("pass (%d %s)", n, plural(n, "check", "checks"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// method says how the checks were decided.
func (r *Report) method() string {
	alpha := strconv.FormatFloat(r.Alpha, 'g', -1, 64)
	if r.Mode == ModeMerged {
		return "no significance test (too few profiles): the merged sides are compared with the thresholds alone"
	}
	n := len(r.Checks)
	return fmt.Sprintf("each profile is one observation: one-sided Mann–Whitney U test per check, p Holm-adjusted over %d %s; a check fails when its growth exceeds the threshold and p ≤ %s",
		n, plural(n, "check", "checks"), alpha)
}
