package workloads

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

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
	Mode         string `json:"mode"`
	KeepResident int64  `json:"keep_resident_bytes"`
	Connections  int    `json:"connections"` // 1 in loop mode
	// Touch is the guest's working set per request and Modules the plugin
	// modules sharing the pool: the grid's cell (0 when not recorded).
	Touch           int64   `json:"touch_bytes"`
	Modules         int     `json:"modules"`
	RequestsPerS    float64 `json:"requests_per_s"`
	CPUPerRequestUS float64 `json:"cpu_per_request_us"`
	Errors          int64   `json:"errors"`
	P99MS           float64 `json:"p99_ms"`
	PoolRefused     int64   `json:"pool_refused"` // the host's own count of pool-full refusals
	// SlotsTouched is how many distinct slots the run leased (each a
	// resident slab when keep-resident is on), Rebinds how many leases
	// took another module's warm slot.
	SlotsTouched int   `json:"slots_touched"`
	Rebinds      int64 `json:"rebinds"`
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
		p.SlotsTouched, p.Touch, p.Modules = end.Pool.SlotsTouched, int64(end.Touch), end.Modules
	}
	if start, ok0 := stats("server_stats_start"); ok && ok0 && start.MinorFaults >= 0 && end.MinorFaults >= start.MinorFaults && r.Load.OK > 0 {
		p.FaultsPerRequest = float64(end.MinorFaults-start.MinorFaults) / float64(r.Load.OK)
		p.Rebinds = end.Pool.Rebinds - start.Pool.Rebinds
	}
	return p
}

// WasmVerdict says which keep-resident setting won each mode and whether
// the loop's winner also wins under concurrency; over a grid, for each cell
// (working set, modules).
type WasmVerdict struct {
	Lines []string `json:"lines"`
	// LoopWinner and ConcurrentWinner are the winning keep-resident bytes
	// (-1 when the mode was not run or nothing succeeded); over a grid,
	// the first cell's.
	LoopWinner       int64 `json:"loop_winner"`
	ConcurrentWinner int64 `json:"concurrent_winner"`
	// Cells is each grid cell's outcome, in the order the sweep ran them.
	Cells []WasmCell `json:"cells"`
}

// WasmCell is one cell of the grid: which keep-resident setting won each
// mode, and, when the loop's winner does not win under concurrency, how
// far below the concurrent winner it is there.
type WasmCell struct {
	Touch            int64 `json:"touch_bytes"`
	Modules          int   `json:"modules"`
	LoopWinner       int64 `json:"loop_winner"`
	ConcurrentWinner int64 `json:"concurrent_winner"`
	// Reversed: both modes have a winner and they differ. LossPct is the
	// loop winner's concurrent requests/s below the concurrent winner's,
	// in percent (0 when not reversed).
	Reversed bool    `json:"reversed"`
	LossPct  float64 `json:"loss_pct"`
	// WithinNoise: reversed, but by less than NoisePct, which one run of
	// each point cannot tell from run-to-run variation.
	WithinNoise bool `json:"within_noise"`
	// LoopGainPct is how far the loop's winner was ahead of the
	// concurrent winner's setting in the loop, in percent.
	LoopGainPct float64 `json:"loop_gain_pct"`
}

// cellName is how lines name a cell: "touch 16KiB, 8 modules".
func (c WasmCell) name() string {
	m := "modules"
	if c.Modules == 1 {
		m = "module"
	}
	return fmt.Sprintf("touch %s, %d %s", wasmhost.FormatSize(c.Touch), max(c.Modules, 1), m)
}

// NoisePct is the smallest loss under concurrency the verdict calls a
// reversal: two sweeps a minute apart on the development machine differed
// by up to about 5% at the same point.
const NoisePct = 5.0

type cellKey struct {
	touch   int64
	modules int
}

// wasmCells groups points by grid cell, in the order they came.
func wasmCells(points []WasmPoint) ([]cellKey, map[cellKey][]WasmPoint) {
	var keys []cellKey
	by := map[cellKey][]WasmPoint{}
	for _, p := range points {
		k := cellKey{p.Touch, p.Modules}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], p)
	}
	return keys, by
}

// Verdict compares the points by requests/s (2xx only) within each mode
// (and cell); failed points take no part, and each gets a line saying why
// it failed. Over a grid each line names its cell and a last line counts
// the cells where the loop's winner loses under concurrency.
func Verdict(points []WasmPoint) WasmVerdict {
	v := WasmVerdict{LoopWinner: -1, ConcurrentWinner: -1}
	keys, by := wasmCells(points)
	var reversed []WasmCell
	for i, k := range keys {
		prefix := ""
		if len(keys) > 1 {
			prefix = WasmCell{Touch: k.touch, Modules: k.modules}.name() + ": "
		}
		lines, cell := verdictCell(by[k], prefix)
		cell.Touch, cell.Modules = k.touch, k.modules
		v.Lines = append(v.Lines, lines...)
		v.Cells = append(v.Cells, cell)
		if i == 0 {
			v.LoopWinner, v.ConcurrentWinner = cell.LoopWinner, cell.ConcurrentWinner
		}
		if cell.Reversed && !cell.WithinNoise {
			reversed = append(reversed, cell)
		}
	}
	if len(keys) > 1 {
		both := 0
		for _, c := range v.Cells {
			if c.LoopWinner >= 0 && c.ConcurrentWinner >= 0 {
				both++
			}
		}
		switch {
		case both == 0:
		case len(reversed) == 0:
			v.Lines = append(v.Lines, fmt.Sprintf("In none of the %d cells with both modes does the loop's winner lose under concurrency by %.0f%% or more.", both, NoisePct))
		default:
			var names []string
			for _, c := range reversed {
				names = append(names, fmt.Sprintf("%s (−%.0f%%)", c.name(), c.LossPct))
			}
			v.Lines = append(v.Lines, fmt.Sprintf("The loop's winner loses under concurrency by %.0f%% or more in %d of %d cells: %s.", NoisePct, len(reversed), both, strings.Join(names, ", ")))
		}
	}
	for _, p := range points {
		what := p.Mode
		if len(keys) > 1 {
			what = WasmCell{Touch: p.Touch, Modules: p.Modules}.name() + ", " + p.Mode
		}
		if p.Failed != "" {
			v.Lines = append(v.Lines, fmt.Sprintf("%s, keep_resident %s: failed: %s.", what, wasmhost.FormatSize(p.KeepResident), p.Failed))
		}
		if p.Errors > 0 {
			v.Lines = append(v.Lines, fmt.Sprintf("%s, keep_resident %s: %d requests failed (%d refused by the full pool); requests/s counts only successes — this is not saturation.",
				what, wasmhost.FormatSize(p.KeepResident), p.Errors, p.PoolRefused))
		}
	}
	return v
}

// verdictCell is the verdict lines of one cell's points, each led by
// prefix, and the cell's winners.
func verdictCell(points []WasmPoint, prefix string) ([]string, WasmCell) {
	var lines []string
	cell := WasmCell{LoopWinner: -1, ConcurrentWinner: -1}
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
			lines = append(lines, fmt.Sprintf("%s%s: no setting served a request", prefix, label))
			return -1, ps
		}
		line := fmt.Sprintf("%s%s: keep_resident %s wins with %.0f requests/s", prefix, label, wasmhost.FormatSize(ps[0].KeepResident), ps[0].RequestsPerS)
		if len(ps) > 1 {
			line += fmt.Sprintf(", %.0f%% ahead of keep_resident %s", (ps[0].RequestsPerS/max(ps[1].RequestsPerS, 1e-9)-1)*100, wasmhost.FormatSize(ps[1].KeepResident))
		}
		if len(ps) > 2 {
			worst := ps[len(ps)-1]
			line += fmt.Sprintf(" and %.1fx the worst, keep_resident %s", ps[0].RequestsPerS/max(worst.RequestsPerS, 1e-9), wasmhost.FormatSize(worst.KeepResident))
		}
		lines = append(lines, line+".")
		return ps[0].KeepResident, ps
	}
	var loop, conc []WasmPoint
	cell.LoopWinner, loop = describe(ModeLoop, "loop (1 goroutine, no HTTP)")
	label := "concurrent"
	if ps := byMode[ModeConcurrent]; len(ps) > 0 {
		label = fmt.Sprintf("concurrent (%d connections)", ps[0].Connections)
	}
	cell.ConcurrentWinner, conc = describe(ModeConcurrent, label)
	if cell.LoopWinner < 0 || cell.ConcurrentWinner < 0 {
		return lines, cell
	}
	if cell.LoopWinner == cell.ConcurrentWinner {
		return append(lines, prefix+"The loop's winner also wins under concurrency."), cell
	}
	for i, p := range conc {
		if p.KeepResident == cell.LoopWinner {
			cell.Reversed = true
			cell.LossPct = (1 - p.RequestsPerS/conc[0].RequestsPerS) * 100
			cell.WithinNoise = cell.LossPct < NoisePct
			line := fmt.Sprintf("%sThe loop's winner does NOT win under concurrency: keep_resident %s ranks %d of %d there, %.0f%% below %s",
				prefix, wasmhost.FormatSize(cell.LoopWinner), i+1, len(conc), cell.LossPct, wasmhost.FormatSize(cell.ConcurrentWinner))
			if cell.WithinNoise {
				line += fmt.Sprintf(" (under %.0f%%: within run-to-run noise)", NoisePct)
			}
			lines = append(lines, line+".")
		}
	}
	for _, p := range loop {
		if p.KeepResident == cell.ConcurrentWinner && p.RequestsPerS > 0 {
			cell.LoopGainPct = (loop[0].RequestsPerS/p.RequestsPerS - 1) * 100
		}
	}
	return lines, cell
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
	// Rows are (cell,) keep-resident settings and column groups modes, all
	// in the order the sweep ran them; a grid leads each row with its cell.
	type rowKey struct {
		cell cellKey
		keep int64
	}
	keys, _ := wasmCells(points)
	grid := len(keys) > 1
	var modes []string
	var rows []rowKey
	cell := map[string]map[rowKey]WasmPoint{}
	seenRow := map[rowKey]bool{}
	for _, p := range points {
		if cell[p.Mode] == nil {
			cell[p.Mode] = map[rowKey]WasmPoint{}
			modes = append(modes, p.Mode)
		}
		k := rowKey{cellKey{p.Touch, p.Modules}, p.KeepResident}
		if !seenRow[k] {
			seenRow[k] = true
			rows = append(rows, k)
		}
		cell[p.Mode][k] = p
	}
	if grid {
		// Group a cell's rows together whatever order the modes ran in.
		order := map[cellKey]int{}
		for i, k := range keys {
			order[k] = i
		}
		sort.SliceStable(rows, func(i, j int) bool { return order[rows[i].cell] < order[rows[j].cell] })
	}
	t := &report.Table{}
	if grid {
		t.Columns = append(t.Columns, report.RCol("touch"), report.RCol("modules"))
	}
	t.Columns = append(t.Columns, report.RCol("keep_resident"))
	for _, m := range modes {
		for _, h := range []string{"CPU/req µs", "faults/req", "requests/s", "errors", "p99 ms"} {
			t.Columns = append(t.Columns, report.RCol(m+" "+h))
		}
	}
	missing := report.None("–")
	for _, k := range rows {
		var row []report.Cell
		if grid {
			row = append(row, report.Text(wasmhost.FormatSize(k.cell.touch)), report.Int(int64(k.cell.modules)))
		}
		row = append(row, report.Text(wasmhost.FormatSize(k.keep)))
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
