package report_test

import (
	"os"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
)

// The example of the package comment, in the terminal and in Markdown.
func Example() {
	r := &report.Report{Blocks: []report.Block{
		report.Para{Lines: []report.Line{{report.Text("Total: ").Bold(), report.Share(0.804).Places(1).Bold()}}},
		&report.Table{
			Columns: []report.Column{report.Col("Bucket"), report.RCol("share")},
			Rows:    [][]report.Cell{{report.Text("lock-contention"), report.Share(0.0486)}},
		},
	}}
	_ = render.Report(os.Stdout, r, render.Table)
	_ = render.Report(os.Stdout, r, render.Markdown)
	// Output:
	// Total: 80.4%
	//
	// ┌─────────────────┬───────┐
	// │ Bucket          │ share │
	// ├─────────────────┼───────┤
	// │ lock-contention │ 4.86% │
	// └─────────────────┴───────┘
	// **Total: 80.4%**
	//
	// | Bucket          | share |
	// |:----------------|------:|
	// | lock-contention | 4.86% |
}
