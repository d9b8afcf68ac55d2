package workloads

import "github.com/profdiff/profdiff/diff/report"

// sweepCharts are a core-count sweep's charts (HTML). Placeholder of the skeleton commit.
func sweepCharts(rows []SweepRow) []report.Block { return nil }

// wasmCharts are the wasm sweep's charts (HTML). Placeholder.
func wasmCharts(points []WasmPoint) []report.Block { return nil }
