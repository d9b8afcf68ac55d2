package workloads

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/workloads/wasmhost"
)

// Wasm workload modes.
const (
	ModeLoop       = "loop"       // one goroutine instantiating in a loop, no HTTP
	ModeConcurrent = "concurrent" // the HTTP host under the load generator
)

// WasmPoint is one run of the wasm workload's keep-resident sweep.
type WasmPoint struct {
	Mode            string  `json:"mode"`
	KeepResident    int64   `json:"keep_resident_bytes"`
	Connections     int     `json:"connections"` // 1 in loop mode
	RequestsPerS    float64 `json:"requests_per_s"`
	CPUPerRequestUS float64 `json:"cpu_per_request_us"`
	Errors          int64   `json:"errors"`
	P99MS           float64 `json:"p99_ms"`
	PoolRefused     int64   `json:"pool_refused"` // the host's own count of pool-full refusals
	// FaultsPerRequest is the host process's minor page faults in the
	// window per successful request (-1 when unknown).
	FaultsPerRequest float64 `json:"minor_faults_per_request"`
	Folder           string  `json:"folder"`
	// Failed says why the run failed (a Failed result: "child exited
	// (status 2)"); its numbers are then all 0.
	Failed string `json:"failed,omitempty"`
}

// WasmPointOf reads a run's point from its result and the host's stats
// (the manifest's server_stats); a failed result (Failed) gives a failed
// point.
func WasmPointOf(mode string, keep int64, r *Result) WasmPoint {
	if r.Failure != nil {
		return WasmPoint{Mode: mode, KeepResident: keep, Connections: r.Config.Connections, FaultsPerRequest: -1,
			Folder: r.Config.Out, Failed: failureText(r.Failure)}
	}
	p := WasmPoint{
		Mode: mode, KeepResident: keep, Connections: r.Load.Connections,
		RequestsPerS: r.Load.RPSOK, CPUPerRequestUS: r.Load.ServerCPUPerRequestUS,
		Errors: r.Load.Failed(), P99MS: r.Load.LatencyMS.P99, Folder: r.Config.Out,
	}
	p.FaultsPerRequest = -1
	if r.Manifest == nil {
		return p
	}
	stats := func(key string) (wasmhost.Stats, bool) {
		var s wasmhost.Stats
		st, ok := r.Manifest.Params[key]
		if !ok {
			return s, false
		}
		b, _ := json.Marshal(st)
		return s, json.Unmarshal(b, &s) == nil
	}
	end, ok := stats("server_stats")
	if ok {
		p.PoolRefused = end.Pool.Refused
	}
	if start, ok0 := stats("server_stats_start"); ok && ok0 && start.MinorFaults >= 0 && end.MinorFaults >= start.MinorFaults && r.Load.OK > 0 {
		p.FaultsPerRequest = float64(end.MinorFaults-start.MinorFaults) / float64(r.Load.OK)
	}
	return p
}

// WasmVerdict says which keep-resident setting won each mode and whether
// the loop's winner also wins under concurrency.
type WasmVerdict struct {
	Lines []string `json:"lines"`
	// LoopWinner and ConcurrentWinner are the winning keep-resident bytes
	// (-1 when the mode was not run or nothing succeeded).
	LoopWinner       int64 `json:"loop_winner"`
	ConcurrentWinner int64 `json:"concurrent_winner"`
}

// Verdict compares the points by requests/s (2xx only) within each mode;
// failed points take no part, and each gets a line saying why it failed.
func Verdict(points []WasmPoint) WasmVerdict {
	v := WasmVerdict{LoopWinner: -1, ConcurrentWinner: -1}
	byMode := map[string][]WasmPoint{}
	for _, p := range points {
		if p.Failed == "" {
			byMode[p.Mode] = append(byMode[p.Mode], p)
		}
	}
	rank := func(mode string) []WasmPoint {
		ps := append([]WasmPoint(nil), byMode[mode]...)
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].RequestsPerS > ps[j].RequestsPerS })
		return ps
	}
	describe := func(mode, label string) (int64, []WasmPoint) {
		ps := rank(mode)
		if len(ps) == 0 {
			return -1, nil
		}
		if ps[0].RequestsPerS == 0 {
			v.Lines = append(v.Lines, fmt.Sprintf("%s: no setting served a request", label))
			return -1, ps
		}
		line := fmt.Sprintf("%s: keep_resident %s wins with %.0f requests/s", label, wasmhost.FormatSize(ps[0].KeepResident), ps[0].RequestsPerS)
		if len(ps) > 1 {
			line += fmt.Sprintf(", %.0f%% ahead of keep_resident %s", (ps[0].RequestsPerS/max(ps[1].RequestsPerS, 1e-9)-1)*100, wasmhost.FormatSize(ps[1].KeepResident))
		}
		if len(ps) > 2 {
			worst := ps[len(ps)-1]
			line += fmt.Sprintf(" and %.1fx the worst, keep_resident %s", ps[0].RequestsPerS/max(worst.RequestsPerS, 1e-9), wasmhost.FormatSize(worst.KeepResident))
		}
		v.Lines = append(v.Lines, line+".")
		return ps[0].KeepResident, ps
	}
	var conc []WasmPoint
	v.LoopWinner, _ = describe(ModeLoop, "loop (1 goroutine, no HTTP)")
	label := "concurrent"
	if ps := byMode[ModeConcurrent]; len(ps) > 0 {
		label = fmt.Sprintf("concurrent (%d connections)", ps[0].Connections)
	}
	v.ConcurrentWinner, conc = describe(ModeConcurrent, label)
	if v.LoopWinner >= 0 && v.ConcurrentWinner >= 0 {
		if v.LoopWinner == v.ConcurrentWinner {
			v.Lines = append(v.Lines, "The loop's winner also wins under concurrency.")
		} else {
			for i, p := range conc {
				if p.KeepResident == v.LoopWinner {
					v.Lines = append(v.Lines, fmt.Sprintf("The loop's winner does NOT win under concurrency: keep_resident %s ranks %d of %d there, %.0f%% below %s.",
						wasmhost.FormatSize(v.LoopWinner), i+1, len(conc), (1-p.RequestsPerS/conc[0].RequestsPerS)*100, wasmhost.FormatSize(v.ConcurrentWinner)))
				}
			}
		}
	}
	for _, p := range points {
		if p.Failed != "" {
			v.Lines = append(v.Lines, fmt.Sprintf("%s, keep_resident %s: failed: %s.", p.Mode, wasmhost.FormatSize(p.KeepResident), p.Failed))
		}
		if p.Errors > 0 {
			v.Lines = append(v.Lines, fmt.Sprintf("%s, keep_resident %s: %d requests failed (%d refused by the full pool); requests/s counts only successes — this is not saturation.",
				p.Mode, wasmhost.FormatSize(p.KeepResident), p.Errors, p.PoolRefused))
		}
	}
	return v
}

// WriteWasmSweep writes the sweep side by side (one row per keep-resident
// setting, one group of columns per mode) as a table or Markdown, led
// by the verdict lines; or everything as JSON. format is a
// render.Format name; the sweep has no CSV form.
func WriteWasmSweep(w io.Writer, points []WasmPoint, format string) error {
	return render.Report(w, WasmSweepReport(points), render.Format(format))
}

// WasmSweepReport is the sweep as a report: the verdict lines (the
// report's verdict, which leads it) and the side-by-side table; its JSON
// is the points and the verdict.
func WasmSweepReport(points []WasmPoint) *report.Report {
	v := Verdict(points)
	// Rows are keep-resident settings and column groups modes, both in the
	// order the sweep ran them.
	var modes []string
	var keeps []int64
	cell := map[string]map[int64]WasmPoint{}
	seenKeep := map[int64]bool{}
	for _, p := range points {
		if cell[p.Mode] == nil {
			cell[p.Mode] = map[int64]WasmPoint{}
			modes = append(modes, p.Mode)
		}
		if !seenKeep[p.KeepResident] {
			seenKeep[p.KeepResident] = true
			keeps = append(keeps, p.KeepResident)
		}
		cell[p.Mode][p.KeepResident] = p
	}
	t := &report.Table{Columns: []report.Column{report.RCol("keep_resident")}}
	for _, m := range modes {
		for _, h := range []string{"CPU/req µs", "faults/req", "requests/s", "errors", "p99 ms"} {
			t.Columns = append(t.Columns, report.RCol(m+" "+h))
		}
	}
	missing := report.None("–")
	for _, k := range keeps {
		row := []report.Cell{report.Text(wasmhost.FormatSize(k))}
		for _, m := range modes {
			p, ok := cell[m][k]
			if !ok {
				row = append(row, missing, missing, missing, missing, missing)
				continue
			}
			if p.Failed != "" {
				row = append(row, missing, missing, report.Text("failed"), missing, missing)
				continue
			}
			faults := report.None("?")
			if p.FaultsPerRequest >= 0 {
				faults = report.Fixed(p.FaultsPerRequest, 0)
			}
			row = append(row, report.Fixed(p.CPUPerRequestUS, 1), faults, report.Fixed(p.RequestsPerS, 0), errorCount(p.Errors), report.Fixed(p.P99MS, 2))
		}
		t.Rows = append(t.Rows, row)
	}
	return &report.Report{
		Blocks:  append([]report.Block{t}, wasmCharts(points)...),
		Verdict: wasmVerdict(points),
		JSON: struct {
			Points  []WasmPoint `json:"points"`
			Verdict WasmVerdict `json:"verdict"`
		}{points, v},
	}
}
