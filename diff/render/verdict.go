package render

import (
	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// diffVerdict is the verdict paragraph of a diff. Placeholder of the
// skeleton commit.
func diffVerdict(r *diff.Result) *report.Verdict { return nil }
