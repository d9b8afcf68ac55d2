package present

import (
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
)

// Rules is the rule table (runtime, bucket, strength, pattern, note); CSV
// and JSON add the file each rule came from. In a narrow terminal,
// patterns and notes wrap rather than being elided: every character of a
// pattern matters.
func Rules(rules []*rules.Rule) *report.Report {
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
		table.Rows = append(table.Rows, []report.Cell{report.Text(r.Runtime), report.Text(r.BucketName()), report.Text(r.Modifiers()), report.Code(r.Pattern).Wrapped(), report.Text(r.Note)})
		records.Rows = append(records.Rows, []report.Cell{report.Text(r.Runtime), report.Text(r.BucketName()), report.Text(r.Modifiers()), report.Text(r.Pattern), report.Text(r.Note), report.Text(r.Source)})
	}
	return &report.Report{Blocks: []report.Block{table}, Records: records, JSON: rows}
}
