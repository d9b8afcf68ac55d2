package present

import (
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
)

// Top is the report of one side's top listing: a summary, the bucket
// table (and in HTML its bars), the kept-apart lines, the flame graph when
// res holds a call tree, the method table and a section per peeked frame.
// Shares sit beside rates where the duration is known; the value column is
// in the profile's unit. JSON is res itself.
func Top(res *result.TopResult) *report.Report { return buildTopReport(res, false) }

// TopFor is Top holding only the parts p of it, as DiffFor is Diff.
func TopFor(res *result.TopResult, p report.Parts) *report.Report {
	switch {
	case p&(report.PartBlocks|report.PartRecords) == 0:
		return &report.Report{JSON: topJSON{res}}
	case p&report.PartBlocks == 0:
		return buildTopReport(res, true)
	}
	return Top(res)
}

// buildTopReport is Top; recordsOnly leaves the method table empty.
func buildTopReport(res *result.TopResult, recordsOnly bool) *report.Report {
	t := topView{res}
	share := "share"
	if res.TotalRate != nil && res.RateUnit != "" {
		share = "share · rate"
	}
	buckets := &report.Table{Columns: []report.Column{report.Col("Bucket"), report.RCol(share), report.RCol("value")}}
	methods := &report.Table{Columns: []report.Column{report.Col("Method"), report.RCol(share), report.RCol("value"), report.Col("Bucket")}}
	records := &report.Table{Columns: report.Cols("section", "name", "bucket", "share", "value", "rate", "unit", "rate_unit", "peek")}
	add := func(section, name, bucket string, share, value report.Cell, rate *float64, peek string) {
		records.Rows = append(records.Rows, []report.Cell{report.Text(section), report.Text(name), report.Text(bucket), share, value,
			rateRecord(rate), report.Text(t.Unit), report.Text(t.RateUnit), report.Text(peek)})
	}
	for _, b := range t.Buckets {
		buckets.Rows = append(buckets.Rows, []report.Cell{report.Text(b.Bucket.String()), t.share(b.Share, b.Rate), t.amount(b.Value)})
		add("bucket", b.Bucket.String(), b.Bucket.String(), report.Share(b.Share), report.ExactNum(b.Value), b.Rate, "")
	}
	blocks := append(append(topSummary(res), buckets), topBucketCharts(res)...)
	for _, ap := range apartRows(t.Analysis) {
		ts := ap.top(t.TopResult)
		if ts == nil {
			continue
		}
		blocks = append(blocks, report.Para{Lines: []report.Line{report.Cat(ap.title(), ": ", t.share(ts.Share, ts.Rate),
			" of all ", ap.of, " (", report.Amount(ts.Value, t.Unit), "); ", ap.why, "not in the buckets above")}})
		add(ap.section, ap.name, "", report.Share(ts.Share), report.ExactNum(ts.Value), ts.Rate, "")
	}
	for _, m := range t.Methods {
		add("method", m.Name, m.Bucket.String(), report.Share(m.Share), report.ExactNum(m.Value), m.Rate, "")
		if !recordsOnly {
			methods.Rows = append(methods.Rows, []report.Cell{methodName(m.Name, m.Variants), t.share(m.Share, m.Rate), t.amount(m.Value), bucketCell(m.Bucket, m.BucketShare)})
		}
	}
	if f := topFlame(res); f != nil {
		blocks = append(blocks, f)
	}
	blocks = append(blocks, methods)
	for _, p := range t.Peek {
		pt := &report.Table{Columns: []report.Column{report.Col("Peek"), report.Col("Frame"), report.RCol("value")}}
		add("peek", p.Name, "", report.None(""), report.ExactNum(p.BaseValue), p.BaseRate, "")
		for _, part := range peekParts(p) {
			for _, e := range part.edges {
				pt.Rows = append(pt.Rows, []report.Cell{report.Text(part.role), Name(e.Name), t.valueRate(e.BaseValue, e.BaseRate)})
				add("peek-"+part.role, e.Name, "", report.None(""), report.ExactNum(e.BaseValue), e.BaseRate, p.Name)
			}
			pt.Rows = append(pt.Rows, part.more(len(pt.Columns))...)
		}
		head := report.Cat(Name(p.Name), ": ", t.valueRate(p.BaseValue, p.BaseRate), " inclusive")
		blocks = append(blocks, report.Heading{Level: 4, Only: report.Markdown, Line: report.Cat("Peek ", head)},
			report.Heading{Only: report.Terminal, Line: report.Cat("peek ", head)}, pt)
	}
	blocks = append(blocks, peeksOmitted(t.PeekOmitted)...)
	return &report.Report{Blocks: blocks, Records: records, JSON: topJSON{res}}
}

// rateRecord is a rate as a CSV field: empty when unknown.
func rateRecord(r *float64) report.Cell {
	if r == nil {
		return report.None("")
	}
	return report.ExactNum(*r)
}

// share is a share and, where known, its rate.
func (t topView) share(share float64, rate *float64) report.Cell {
	if rate == nil {
		return report.Share(share)
	}
	return report.Group(report.Share(share), report.Amount(*rate, t.RateUnit))
}

// topView formats the cells of a top listing.
type topView struct{ *result.TopResult }

// amount is a value in the profile's unit.
func (t topView) amount(v float64) report.Cell { return report.Amount(v, t.Unit) }

// valueRate is a value and, where known, its rate.
func (t topView) valueRate(v float64, rate *float64) report.Cell {
	if rate == nil {
		return t.amount(v)
	}
	return report.Group(t.amount(v), report.Amount(*rate, t.RateUnit))
}
