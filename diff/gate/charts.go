package gate

import "github.com/profdiff/profdiff/diff/report"

// charts are the gate's dot plots (HTML). Placeholder of the skeleton commit.
func (r *Report) charts() []report.Block { return nil }
