package render

import (
	"io"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// Diff writes r in format f.
func Diff(w io.Writer, r *diff.Result, f Format) error { return Report(w, DiffReport(r), f) }

// Top writes t in format f.
func Top(w io.Writer, t *diff.TopResult, f Format) error { return Report(w, TopReport(t), f) }

// Rules writes the rule table: runtime, bucket, strength, pattern, note
// (and in CSV and JSON the file each rule came from).
func Rules(w io.Writer, rules []*diff.Rule, f Format) error { return Report(w, RulesReport(rules), f) }

// delta is a delta shown without a noise mark or note.
func delta(d float64) report.Cell { return report.Delta(d, false, "") }

// DiffReport is the report of a diff: a summary, the bucket table, the
// scheduler-latency line, the method table and a footnote on noise; CSV
// has one record per bucket, scheduler latency and method.
func DiffReport(r *diff.Result) *report.Report {
	buckets := &report.Table{Columns: []report.Column{report.Col("Bucket"), report.RCol("base"), report.RCol("new"), report.RCol("Δ")}}
	methods := &report.Table{Columns: []report.Column{report.Col("Method"), report.RCol("base"), report.RCol("new"), report.RCol("Δ"), report.Col("Bucket")}}
	records := &report.Table{Columns: report.Cols("section", "name", "bucket", "base", "new", "delta", "base_value", "new_value", "note", "noisy")}
	noisy := false
	for _, b := range r.Buckets {
		name := report.Text(b.Bucket.String())
		buckets.Rows = append(buckets.Rows, []report.Cell{name, report.Share(b.Base), report.Share(b.New), report.Delta(b.Delta, b.Noisy, "")})
		records.Rows = append(records.Rows, []report.Cell{report.Text("bucket"), name, name, report.Share(b.Base), report.Share(b.New), delta(b.Delta),
			report.None(""), report.None(""), report.Text(""), report.Bool(b.Noisy)})
		noisy = noisy || b.Noisy
	}
	blocks := append(diffSummary(r), buckets)
	if sr := r.Sched; sr != nil {
		blocks = append(blocks, report.Para{Lines: []report.Line{report.Cat(schedTitle(), ": ", report.Share(sr.Base), " → ", report.Share(sr.New),
			" (", delta(sr.Delta), ") of all goroutine time; not in the buckets above")}})
		records.Rows = append(records.Rows, []report.Cell{report.Text("sched"), report.Text("scheduler-latency"), report.Text(""), report.Share(sr.Base), report.Share(sr.New), delta(sr.Delta),
			report.Num(sr.BaseValue), report.Num(sr.NewValue), report.Text("runnable; share of all goroutine time, not in the buckets"), report.Bool(false)})
	}
	for _, m := range r.Methods {
		bucket := report.Text(m.Bucket.String())
		methods.Rows = append(methods.Rows, []report.Cell{report.Code(m.Name), report.Share(m.Base), report.Share(m.New), report.Delta(m.Delta, m.Noisy, m.Note), bucket})
		records.Rows = append(records.Rows, []report.Cell{report.Text("method"), report.Text(m.Name), bucket, report.Share(m.Base), report.Share(m.New), delta(m.Delta),
			report.Num(m.BaseValue), report.Num(m.NewValue), report.Text(m.Note), report.Bool(m.Noisy)})
		noisy = noisy || m.Noisy
	}
	blocks = append(blocks, methods)
	if noisy {
		blocks = append(blocks, report.Para{Lines: []report.Line{report.Cat("~ marks a delta within two standard errors of sampling noise.")}})
	}
	return &report.Report{Blocks: blocks, Records: records, JSON: r, Warnings: r.Warnings}
}

// diffSummary is the head of a diff: in Markdown a heading, the total
// wait/synchronization in bold and a sentence on the data; in the terminal
// the same facts as four lines.
func diffSummary(r *diff.Result) []report.Block {
	sb, sn := r.SyncShare()
	mode := "self"
	if r.Cum {
		mode = "inclusive"
	}
	baseSrc, newSrc := report.List(r.Base.Sources, report.Text), report.List(r.New.Sources, report.Text)
	total := report.Cat(report.Text("Total wait/synchronization: ").Bold(), report.Share(sb).Places(1).Bold(), report.Text(" → ").Bold(), report.Share(sn).Places(1).Bold(),
		" (", delta(sn-sb), ")")
	return []report.Block{
		report.Heading{Level: 3, Only: report.Markdown, Line: report.Cat("profdiff: ", baseSrc, " → ", newSrc)},
		report.Para{Only: report.Markdown, Lines: []report.Line{total}},
		report.Para{Only: report.Markdown, Lines: []report.Line{report.Cat("Sample type ", report.Code(r.SampleType), ", ", kindPhrase(r.Kind),
			". Base: ", report.Int(r.Base.Samples), " samples; new: ", report.Int(r.New.Samples), " samples. Methods by ", r.By, ", ", mode, " shares.")}},
		report.Para{Only: report.Terminal, Lines: []report.Line{
			report.Cat("base: ", baseSrc, " (", report.Int(r.Base.Samples), " samples)"),
			report.Cat("new:  ", newSrc, " (", report.Int(r.New.Samples), " samples)"),
			report.Cat("sample type ", r.SampleType, "; ", kindPhrase(r.Kind)),
			total,
		}},
	}
}

// TopReport is the report of one side's top listing: a summary, the bucket
// table, the scheduler-latency line and the method table.
func TopReport(t *diff.TopResult) *report.Report {
	buckets := &report.Table{Columns: []report.Column{report.Col("Bucket"), report.RCol("share"), report.RCol("value")}}
	methods := &report.Table{Columns: []report.Column{report.Col("Method"), report.RCol("share"), report.RCol("value"), report.Col("Bucket")}}
	records := &report.Table{Columns: report.Cols("section", "name", "bucket", "share", "value")}
	for _, b := range t.Buckets {
		name := report.Text(b.Bucket.String())
		buckets.Rows = append(buckets.Rows, []report.Cell{name, report.Share(b.Share), report.Num(b.Value)})
		records.Rows = append(records.Rows, []report.Cell{report.Text("bucket"), name, name, report.Share(b.Share), report.Num(b.Value)})
	}
	blocks := append(topSummary(t), buckets)
	if ts := t.Sched; ts != nil {
		blocks = append(blocks, report.Para{Lines: []report.Line{report.Cat(schedTitle(), ": ", report.Share(ts.Share),
			" of all goroutine time (", report.Num(ts.Value).WithUnit(t.Unit), "); not in the buckets above")}})
		records.Rows = append(records.Rows, []report.Cell{report.Text("sched"), report.Text("scheduler-latency"), report.Text(""), report.Share(ts.Share), report.Num(ts.Value)})
	}
	for _, m := range t.Methods {
		bucket := report.Text(m.Bucket.String())
		methods.Rows = append(methods.Rows, []report.Cell{report.Code(m.Name), report.Share(m.Share), report.Num(m.Value), bucket})
		records.Rows = append(records.Rows, []report.Cell{report.Text("method"), report.Text(m.Name), bucket, report.Share(m.Share), report.Num(m.Value)})
	}
	blocks = append(blocks, methods)
	return &report.Report{Blocks: blocks, Records: records, JSON: t}
}

func topSummary(t *diff.TopResult) []report.Block {
	sources := report.List(t.Sources, report.Text)
	total := report.Num(t.Total).WithUnit(t.Unit)
	sync := report.Cat(report.Text("Total wait/synchronization: ").Bold(), report.Share(t.SyncShare()).Places(1).Bold())
	return []report.Block{
		report.Heading{Level: 3, Only: report.Markdown, Line: report.Cat("profdiff top: ", sources)},
		report.Para{Only: report.Markdown, Lines: []report.Line{sync}},
		report.Para{Only: report.Markdown, Lines: []report.Line{report.Cat("Sample type ", report.Code(t.SampleType), ", ", kindPhrase(t.Kind),
			". ", report.Int(t.Samples), " samples, total ", total, ".")}},
		report.Para{Only: report.Terminal, Lines: []report.Line{
			report.Cat("profile: ", sources, " (", report.Int(t.Samples), " samples, total ", total, ")"),
			report.Cat("sample type ", t.SampleType, "; ", kindPhrase(t.Kind)),
			sync,
		}},
	}
}

// RulesReport is the rule table; CSV and JSON add each rule's source.
func RulesReport(rules []*diff.Rule) *report.Report {
	type row struct {
		Runtime  string `json:"runtime"`
		Bucket   string `json:"bucket"`
		Strength string `json:"strength"`
		Pattern  string `json:"pattern"`
		Note     string `json:"note"`
		Source   string `json:"source"`
	}
	rows := make([]row, len(rules))
	table := &report.Table{Columns: report.Cols("Runtime", "Bucket", "Strength", "Pattern", "Note")}
	records := &report.Table{Columns: report.Cols("runtime", "bucket", "strength", "pattern", "note", "source")}
	for i, r := range rules {
		rows[i] = row{r.Runtime, r.BucketName(), r.Modifiers(), r.Pattern, r.Note, r.Source}
		table.Rows = append(table.Rows, []report.Cell{report.Text(r.Runtime), report.Text(r.BucketName()), report.Text(r.Modifiers()), report.Code(r.Pattern), report.Text(r.Note)})
		records.Rows = append(records.Rows, []report.Cell{report.Text(r.Runtime), report.Text(r.BucketName()), report.Text(r.Modifiers()), report.Text(r.Pattern), report.Text(r.Note), report.Text(r.Source)})
	}
	return &report.Report{Blocks: []report.Block{table}, Records: records, JSON: rows}
}

// schedTitle names scheduler latency, the time goroutines spent runnable
// (Go execution traces), which is reported beside the buckets.
func schedTitle() report.Cell { return report.Text("Scheduler latency (runnable)").Bold() }

func kindPhrase[K ~string](k K) string {
	switch k {
	case "cpu":
		return "CPU profile: buckets are CPU time spent in each kind of machinery"
	case "wall":
		return "wall-clock profile: buckets are time spent in each state"
	case "mutex":
		return "mutex profile: every sample is lock contention, recorded at the unlocker"
	case "block":
		return "block profile: off-CPU time split into lock contention and wait"
	case "goroutine":
		return "goroutine profile: goroutine counts per state"
	case "heap":
		return "heap profile: buckets are not time"
	case "trace":
		return "execution trace: time per state"
	}
	return "kind unknown: frame rules applied as for wall-clock time"
}
