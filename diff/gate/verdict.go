package gate

import "github.com/profdiff/profdiff/diff/report"

// verdict is the gate's verdict paragraph. Placeholder of the skeleton commit.
func (r *Report) verdict() *report.Verdict { return nil }
