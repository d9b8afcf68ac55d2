package present

import (
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
)

// delta is a delta shown without a noise mark or note.
func delta(d float64) report.Cell { return report.Delta(d, false, "") }

// Diff is the report of a diff: the verdict, a summary, the bucket table
// (and in HTML its bars), the scheduler-latency and native-or-blocked
// lines, the flame graph when r holds a call tree, the method table, a
// footnote on noise and a section per peeked frame; CSV has one record per
// bucket, kept-apart line, method and peek row; JSON is r itself.
func Diff(r *result.Result) *report.Report { return buildDiffReport(r, false) }

// DiffFor is Diff holding only the parts p of it (a format's
// render.Format.Parts). JSON marshals the result itself, so a report of
// that part alone holds nothing else; CSV writes the records, so a report
// of the records holds no method table. Building the cells of every
// method's row (a data format holds them all: 12,600 rows on the
// 200k-stack pair) took longer than writing them.
func DiffFor(r *result.Result, p report.Parts) *report.Report {
	switch {
	case p&(report.PartBlocks|report.PartRecords) == 0:
		return &report.Report{JSON: resultJSON{r}, Warnings: r.Warnings, Verdict: diffVerdict(r)}
	case p&report.PartBlocks == 0:
		return buildDiffReport(r, true)
	}
	return Diff(r)
}

// buildDiffReport is Diff; recordsOnly leaves the method table empty.
func buildDiffReport(r *result.Result, recordsOnly bool) *report.Report {
	d := &diffReport{r: r, recordsOnly: recordsOnly, records: &report.Table{Columns: report.Cols(append(append([]string{"section", "name", "bucket", "base", "new", "delta"},
		valueColumns...), "note", "noisy", "peek")...)}}
	blocks := append(append(diffSummary(r), d.buckets()), bucketCharts(r)...)
	for _, ap := range apartRows(r.Analysis) {
		sr := ap.diff(r)
		if sr == nil {
			continue
		}
		base, new := sides(sr.Base, sr.New, sr.Values)
		blocks = append(blocks, report.Para{Lines: []report.Line{report.Cat(ap.title(), ": ", base, " → ", new,
			" (", change(r.Normalize, sr.Delta, sr.Values, false, ""), ") of all ", ap.of, "; ", ap.why, "not in the buckets above")}})
		d.record(ap.section, ap.name, "", sr.Base, sr.New, sr.Delta, sr.Values, ap.note+"; share of all "+ap.of+", not in the buckets", false, "")
	}
	if f := diffFlame(r); f != nil {
		blocks = append(blocks, f)
	}
	blocks = append(blocks, d.methods())
	if d.noisy {
		blocks = append(blocks, report.Para{Lines: []report.Line{report.Cat("~ marks a delta within two standard errors of sampling noise.")}})
	}
	blocks = append(blocks, d.peeks()...)
	return &report.Report{Blocks: blocks, Records: d.records, JSON: resultJSON{r}, Warnings: r.Warnings, Verdict: diffVerdict(r)}
}

// diffReport builds a diff's tables and the CSV records beside them.
type diffReport struct {
	r           *result.Result
	records     *report.Table
	noisy       bool // a row is marked as noise
	recordsOnly bool // the method table is not shown (CSV): leave it empty
}

// record adds a CSV record of a row with shares.
func (d *diffReport) record(section, name, bucket string, base, new, dlt float64, v result.Values, note string, noisy bool, peek string) {
	d.recordCells(section, name, bucket, [3]report.Cell{report.Share(base), report.Share(new), delta(dlt)}, v, note, noisy, peek)
}

// recordCells adds a CSV record: shares are base, new and delta (empty
// fields for peek rows, which have none); peek names the peeked frame of a
// peek-caller or peek-callee row.
func (d *diffReport) recordCells(section, name, bucket string, shares [3]report.Cell, v result.Values, note string, noisy bool, peek string) {
	row := append([]report.Cell{report.Text(section), report.Text(name), report.Text(bucket)}, shares[:]...)
	row = append(append(row, valueRecords(v)...), report.Text(note), report.Bool(noisy), report.Text(peek))
	d.records.Rows = append(d.records.Rows, row)
}

func (d *diffReport) buckets() *report.Table {
	t := &report.Table{Columns: []report.Column{report.Col("Bucket"), report.RCol("base"), report.RCol("new"), report.RCol("Δ")}}
	for _, b := range d.r.Buckets {
		base, new := sides(b.Base, b.New, b.Values)
		t.Rows = append(t.Rows, []report.Cell{report.Text(b.Bucket.String()), base, new, change(d.r.Normalize, b.Delta, b.Values, b.Noisy, "")})
		d.record("bucket", b.Bucket.String(), b.Bucket.String(), b.Base, b.New, b.Delta, b.Values, "", b.Noisy, "")
		d.noisy = d.noisy || b.Noisy
	}
	unitInHeader(t, d.r.RateUnit, 1, 2, 3)
	return t
}

func (d *diffReport) methods() *report.Table {
	t := &report.Table{Columns: []report.Column{report.Col("Method"), report.RCol("base"), report.RCol("new"), report.RCol("Δ"), report.Col("Bucket")}}
	for _, m := range d.r.Methods {
		d.record("method", m.Name, m.Bucket.String(), m.Base, m.New, m.Delta, m.Values, m.Note, m.Noisy, "")
		if d.recordsOnly {
			continue
		}
		name := methodName(m.Name, m.Variants)
		if m.Base == 0 && m.New > 0 {
			name = name.WithTone(report.ToneNew)
		}
		base, new := sides(m.Base, m.New, m.Values)
		t.Rows = append(t.Rows, []report.Cell{name, base, new, change(d.r.Normalize, m.Delta, m.Values, m.Noisy, m.Note), bucketCell(m.Bucket, m.BucketShare)})
		d.noisy = d.noisy || m.Noisy
	}
	unitInHeader(t, d.r.RateUnit, 1, 2, 3)
	return t
}

// resultJSON is a diff's JSON value: the result itself (its fields
// promoted, so it encodes as the result does), whose method rows the json
// format writes one at a time and whose verdict summary it fills from the
// report's verdict paragraph.
type resultJSON struct{ *result.Result }

// WithSummary is the result with its verdict's summary set to the
// verdict's sentences (a copy: the result is left as it is).
func (j resultJSON) WithSummary(sentences string) any {
	if j.Verdict == nil {
		return j
	}
	r, v := *j.Result, *j.Verdict
	v.Summary = sentences
	r.Verdict = &v
	return resultJSON{&r}
}

// JSONRows is the result without its method rows, and the rows.
func (j resultJSON) JSONRows() (any, string, int, func(int) any) {
	s := *j.Result
	s.Methods = []result.MethodRow{}
	return &s, "methods", len(j.Methods), func(i int) any { return &j.Methods[i] }
}

// topJSON is a top listing's JSON value (see resultJSON).
type topJSON struct{ *result.TopResult }

// JSONRows is the listing without its method rows, and the rows.
func (j topJSON) JSONRows() (any, string, int, func(int) any) {
	s := *j.TopResult
	s.Methods = []result.TopMethod{}
	return &s, "methods", len(j.Methods), func(i int) any { return &j.Methods[i] }
}
