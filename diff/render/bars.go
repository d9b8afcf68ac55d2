package render

import (
	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// bucketCharts are the bucket bars of a diff (HTML). Placeholder of the
// skeleton commit.
func bucketCharts(r *diff.Result) []report.Block { return nil }

// topBucketCharts are the bucket bars of a top listing. Placeholder.
func topBucketCharts(t *diff.TopResult) []report.Block { return nil }
