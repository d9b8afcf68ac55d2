// Package result is the engine's output as pure numbers: the sides of a
// comparison, its buckets and methods with raw values, rates and shares
// (Result, TopResult), the merged call tree (CallNode), the peek rows and
// the verdict. It imports no reader and no part of the engine but the
// bucket names (package diff/rules), so a report (package diff/present)
// is built from results alone. Package diff computes them, and keeps
// these names as aliases.
package result

import "github.com/profdiff/profdiff/diff/rules"

// Bucket is where a sample's time went (rules.Bucket).
type Bucket = rules.Bucket
