package present

import (
	"strings"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// Series is the report of a series of steps (package diff/series): a
// verdict with a sentence per step saying what changed there (or that
// nothing did) and the substitutions, how each step was judged, the
// bucket table (a column per step, share and rate, and where each change
// appeared), the method rows with a change, and in HTML a small chart
// per principal bucket. CSV is a record per row and step; JSON is s.
// The thresholds named in the text are the series package's, passed in
// t so that this package imports no engine.
func Series(s *result.Series, t SeriesRules) *report.Report {
	v := seriesView{s}
	rep := &report.Report{JSON: seriesJSON{s}, Verdict: v.verdict()}
	names := make([]string, len(s.Steps))
	for i, st := range s.Steps {
		names[i] = st.Name
	}
	rep.Title = "profdiff series: " + strings.Join(names, " → ")
	rep.Blocks = append(rep.Blocks, report.Heading{Level: 3, Only: report.Markdown, Line: report.Cat(rep.Title)})
	rep.Blocks = append(rep.Blocks, v.summary(t))
	rep.Blocks = append(rep.Blocks, v.table("Bucket", s.Buckets, true))
	rep.Blocks = append(rep.Blocks, v.charts()...)
	if len(s.Methods) > 0 {
		rep.Blocks = append(rep.Blocks, v.table("Method", s.Methods, false))
	} else {
		rep.Blocks = append(rep.Blocks, report.Para{Lines: []report.Line{report.Cat("No method changed beyond noise between steps.")}})
	}
	rep.Records = v.records()
	rep.Warnings = s.Warnings
	return rep
}

// seriesJSON is a series as the json format writes it, its summary
// filled from the report's verdict.
type seriesJSON struct{ *result.Series }

// WithSummary is the series with its Summary set (a copy).
func (j seriesJSON) WithSummary(sentences string) any {
	s := *j.Series
	s.Summary = sentences
	return &s
}

// SeriesRules are the thresholds a series report names (package
// diff/series's constants).
type SeriesRules struct {
	MinRuns                       int
	Alpha                         float64
	MinMove, MinRatio             float64
	ThresholdMove, ThresholdRatio float64
}

type seriesView struct{ *result.Series }

// rated reports whether the cells have rates.
func (v seriesView) rated() bool { return v.Measure == result.NormalizeRate && v.RateUnit != "" }

// cell is a row's cell at a step: its share and, where known, its rate.
func (v seriesView) cell(c result.SeriesCell) report.Cell {
	if c.Rate == nil || !v.rated() {
		return report.Share(c.Share)
	}
	return report.Group(report.Share(c.Share), report.Amount(*c.Rate, v.RateUnit))
}

// changes is a row's changes in words: "doubled at alpha; recovered at +env".
func changes(r *result.SeriesRow) report.Cell {
	var parts []string
	for _, c := range r.Changes {
		parts = append(parts, c.Note+" at "+c.Name)
	}
	if len(parts) == 0 {
		return report.Text("")
	}
	tone := report.ToneGrowth
	if last := r.Changes[len(r.Changes)-1]; last.To < last.From {
		tone = report.ToneShrink
	}
	return report.Text(strings.Join(parts, "; ")).WithTone(tone)
}

// table is the bucket or method table: a column per step, then the
// changes; a bucket table starts with the metric's row where there is one
// and ends with the step's total.
func (v seriesView) table(first string, rows []result.SeriesRow, buckets bool) *report.Table {
	cols := []report.Column{report.Col(first)}
	for _, st := range v.Steps {
		cols = append(cols, report.RCol(st.Name))
	}
	if !buckets {
		cols = append(cols, report.Col("Bucket"))
	}
	cols = append(cols, report.Col("Change"))
	t := &report.Table{Columns: cols}
	if buckets && v.Metric != "" {
		row := []report.Cell{report.Text(v.Metric)}
		for _, st := range v.Steps {
			if st.Metric == nil {
				row = append(row, report.None("–"))
			} else {
				row = append(row, report.Num(*st.Metric))
			}
		}
		t.Rows = append(t.Rows, append(row, report.Text("")))
	}
	for i := range rows {
		r := &rows[i]
		row := []report.Cell{report.Text(r.Bucket.String())}
		if !buckets {
			row[0] = Name(r.Name)
		}
		for _, c := range r.Cells {
			row = append(row, v.cell(c))
		}
		if !buckets {
			row = append(row, report.Text(r.Bucket.String()))
		}
		t.Rows = append(t.Rows, append(row, changes(r)))
	}
	if buckets && v.rated() {
		row := []report.Cell{report.Text("total")}
		for _, st := range v.Steps {
			if st.TotalRate == nil {
				row = append(row, report.None("–"))
			} else {
				row = append(row, report.Amount(*st.TotalRate, v.RateUnit))
			}
		}
		t.Rows = append(t.Rows, append(row, report.Text("")))
	}
	return t
}

// summary says what each step holds, the measure, and how each step was
// judged against the one before.
func (v seriesView) summary(t SeriesRules) report.Para {
	var lines []report.Line
	all := make([][]string, len(v.Steps))
	for i, st := range v.Steps {
		all[i] = st.Sources
	}
	short := ShortSources(all...)
	for i, st := range v.Steps {
		l := report.Cat(report.Code(st.Name), ": ", report.Int(int64(st.Runs)), plural(st.Runs, " profile", " profiles"), " (")
		l = append(l, SourceList(short[i], st.Sources)...)
		l = append(l, report.Text("), "), report.Int(st.Samples), report.Text(" samples"))
		lines = append(lines, l)
	}
	measure := "shares: a bucket is judged on its share of the total without the bucket that moved most at that step, that bucket on its own share"
	if v.rated() {
		measure = "rates, in " + v.RateUnit + " (per second of each profile's duration)"
	}
	lines = append(lines, report.Cat("sample type "+v.SampleType+", kind "+string(v.Kind)+"; changes judged on "+measure))
	for i, st := range v.Steps[1:] {
		prev := v.Steps[i]
		l := report.Cat(report.Code(st.Name), " against ", report.Code(prev.Name), ": ", report.Int(int64(prev.Runs)), " vs ", report.Int(int64(st.Runs)), " profiles, ")
		if st.Test == result.TestU {
			l = append(l, report.Text("two-sided Mann–Whitney U test, p Holm-adjusted; a change counts at p ≤ "), report.Num(t.Alpha),
				report.Text(" when it moves at least "), report.Share(t.MinMove).Places(0), report.Text(" of the total and "), report.Num(t.MinRatio), report.Text("x"))
		} else {
			l = append(l, report.Text("too few to test ("), report.Int(int64(t.MinRuns)), report.Text(" a step needed): threshold rule, a change counts when it moves at least "),
				report.Share(t.ThresholdMove).Places(0), report.Text(" of the total and "), report.Num(t.ThresholdRatio), report.Text("x"))
		}
		lines = append(lines, l)
	}
	return report.Para{Lines: lines}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// verdict is a sentence per step after the first: the buckets that
// changed there, or that nothing did; then the substitutions.
func (v seriesView) verdict() *report.Verdict {
	out := &report.Verdict{}
	for i := 1; i < len(v.Steps); i++ {
		l := report.Cat("At ", report.Code(v.Steps[i].Name), ": ")
		n := 0
		for j := range v.Buckets {
			for _, c := range v.Buckets[j].Changes {
				if c.Step != i {
					continue
				}
				if n > 0 {
					l = append(l, report.Text("; "))
				}
				n++
				cells := v.Buckets[j].Cells
				l = append(l, report.Code(v.Buckets[j].Bucket.String()), report.Text(" "+c.Note+" ("))
				if c.Without != nil {
					l = append(l, report.Text("as a share of all but "), report.Code(c.Without.String()), report.Text("; "))
				}
				l = append(l, v.cell(cells[i-1]), report.Text(" → "), v.cell(cells[i]))
				if c.P != nil {
					l = append(l, report.Text(", p "), report.P(c.P))
				}
				l = append(l, report.Text(")"))
				if c.To > c.From && v.Buckets[j].Bucket != rules.CPU {
					out.Tone = report.ToneGrowth
				}
			}
		}
		if n == 0 {
			l = append(l, report.Text("no bucket changed beyond noise"))
		}
		out.Lines = append(out.Lines, append(l, report.Text(".")))
	}
	for _, s := range v.Substitutions {
		l := report.Cat("At ", report.Code(s.Name), ": ")
		out.Lines = append(out.Lines, append(l, SubstitutionLine(&s.Substitution, v.Meaning)...))
	}
	return out
}

// charts are the small multiples of the HTML page: a bar chart per
// principal bucket (one with a change, or at least 1% of a step), a bar
// per step.
func (v seriesView) charts() []report.Block {
	var out []report.Block
	unit, y := report.ShareUnit, "share of the total"
	if v.rated() {
		unit, y = v.RateUnit, v.RateUnit
	}
	for _, r := range v.Buckets {
		big := len(r.Changes) > 0
		for _, c := range r.Cells {
			big = big || c.Share >= 0.01
		}
		if !big {
			continue
		}
		s := report.Series{Name: r.Bucket.String()}
		for i, c := range r.Cells {
			y := c.Share
			if v.rated() && c.Rate != nil {
				y = *c.Rate
			}
			p := report.Point{Label: v.Steps[i].Name, Y: y}
			s.Points = append(s.Points, p)
		}
		out = append(out, &report.Chart{Title: r.Bucket.String(), Kind: report.ChartBars, X: "step", Y: y, YUnit: unit,
			Series: []report.Series{s}, Note: changes(&r).Text})
	}
	return out
}

// records are the CSV rows: one per bucket or method and step, raw
// values, after the metric's rows (section "metric", its value in value).
func (v seriesView) records() *report.Table {
	t := &report.Table{Columns: report.Cols("section", "name", "bucket", "step", "share", "value", "rate", "unit", "rate_unit", "change", "p")}
	add := func(section, name string, rows []result.SeriesRow) {
		for _, r := range rows {
			n := name
			if n == "" {
				n = r.Bucket.String()
			}
			if section == "method" {
				n = r.Name
			}
			for i, c := range r.Cells {
				change, p := report.Text(""), report.None("")
				for _, ch := range r.Changes {
					if ch.Step == i {
						change = report.Text(ch.Note)
						if ch.P != nil {
							p = report.ExactNum(*ch.P)
						}
					}
				}
				t.Rows = append(t.Rows, []report.Cell{report.Text(section), report.Text(n), report.Text(r.Bucket.String()), report.Text(v.Steps[i].Name),
					report.ExactNum(c.Share), report.ExactNum(c.Value), rateRecord(c.Rate), report.Text(v.Unit), report.Text(v.RateUnit), change, p})
			}
		}
	}
	for _, st := range v.Steps {
		if v.Metric != "" && st.Metric != nil {
			t.Rows = append(t.Rows, []report.Cell{report.Text("metric"), report.Text(v.Metric), report.Text(""), report.Text(st.Name),
				report.None(""), report.ExactNum(*st.Metric), report.None(""), report.Text(""), report.Text(""), report.Text(""), report.None("")})
		}
	}
	add("bucket", "", v.Buckets)
	add("method", "", v.Methods)
	return t
}
