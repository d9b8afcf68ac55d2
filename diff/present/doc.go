// Package present turns the engine's results into reports: a diff
// (result.Result), a top listing (result.TopResult) and the rule table become
// report.Report values, which package render lays out in every format.
// Here a result's numbers become cells (shares, rates, values, deltas in
// the result's measure, notes), the verdict is worded, and the call tree
// becomes the report's tree for the flame graph and the folded formats.
// It computes nothing the engine has not and formats no number: cells
// carry raw values, and render decides how they read.
//
// A row shows each side's share beside its rate, or its value where no
// rate is known ("0.27% · 12 ms/s"), and its Δ in the result's measure
// (share points, rate or value units), marked as noise when it is within
// two standard errors of sampling noise. Scheduler latency (runnable time
// in a Go execution trace) and native-or-blocked time no frame places are
// lines of their own under the bucket table ("sched" and "unknown" records
// in CSV), never buckets. A report's JSON is the result itself.
//
// Diff and Top build every part of a report; DiffFor and TopFor only the
// parts a format reads (render.Format.Parts), since the cells of every
// method row of a large diff cost more to build than a data format takes
// to write them. Name is a function name as a cell, marked so that a
// narrow column elides its parameter list first; the gate's tables use it
// too.
package present
