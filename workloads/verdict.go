package workloads

import "github.com/profdiff/profdiff/diff/report"

// sweepVerdict is a core-count sweep's verdict. Placeholder of the skeleton commit.
func sweepVerdict(rows []SweepRow) *report.Verdict { return nil }

// wasmVerdict is the wasm sweep's verdict paragraph. Placeholder.
func wasmVerdict(points []WasmPoint) *report.Verdict { return nil }
