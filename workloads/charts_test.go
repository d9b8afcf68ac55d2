package workloads

import (
	"slices"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
)

func chartsIn(r *report.Report) []*report.Chart {
	var cs []*report.Chart
	for _, b := range r.Blocks {
		if c, ok := b.(*report.Chart); ok {
			cs = append(cs, c)
		}
	}
	return cs
}

func handRows() []SweepRow {
	rows := []SweepRow{
		{Cores: 1, RequestsPerS: 1000, Efficiency: 1},
		{Cores: 2, RequestsPerS: 1800, Efficiency: 0.9, Peak: true},
		{Cores: 4, RequestsPerS: 1600, Efficiency: 0.4, Errors: 3},
		{Cores: 8, Failed: "child exited (status 2)"},
	}
	rows[1].raw[rules.LockContention] = 0.05
	rows[2].raw[rules.LockContention] = 0.2
	return rows
}

// The sweep's charts: requests/s by cores with the peak marked, the
// failed run marked failed, and the run with failed requests keeping its
// point with a ✕ in a series of its own; efficiency with the
// linear-scaling line; bucket shares from the rows.
func TestSweepCharts(t *testing.T) {
	cs := chartsIn(SweepReport(handRows()))
	if len(cs) != 3 {
		t.Fatalf("%d charts, want 3", len(cs))
	}
	if len(cs[0].Series) != 2 || cs[0].Series[1].Name != "failed requests" {
		t.Fatalf("requests/s series %+v", cs[0].Series)
	}
	rps := cs[0].Series[0].Points
	var marks []report.Mark
	var ys []float64
	for _, p := range rps {
		marks = append(marks, p.Mark)
		ys = append(ys, p.Y)
	}
	if !slices.Equal(marks, []report.Mark{report.MarkNone, report.MarkPeak, report.MarkNone, report.MarkFailed}) || !slices.Equal(ys[:3], []float64{1000, 1800, 1600}) {
		t.Errorf("requests/s points %+v", rps)
	}
	errs := cs[0].Series[1].Points
	if len(errs) != 1 || errs[0].X != 4 || errs[0].Mark != report.MarkFailed || !strings.Contains(errs[0].Label, "3 failed requests") {
		t.Errorf("failed-requests points %+v", errs)
	}
	if !strings.Contains(rps[3].Label, "child exited") {
		t.Errorf("the failed run does not say why: %q", rps[3].Label)
	}
	eff := cs[1]
	if eff.Series[0].Points[1].Y != 0.9 || eff.Series[0].Points[1].Mark != report.MarkNone || *eff.Threshold != 1 || !strings.Contains(eff.Title, "1 core") {
		t.Errorf("efficiency chart %+v", eff)
	}
	sh := cs[2]
	if sh.Series[0].Name != "lock-contention" || sh.Series[0].Points[1].Y != 0.05 || sh.Series[0].Points[2].Y != 0.2 {
		t.Errorf("bucket shares %+v", sh.Series[0])
	}
	clean := handRows()[:2]
	if cs := chartsIn(SweepReport(clean)); len(cs[0].Series) != 1 {
		t.Errorf("a failed-requests series without failed requests: %+v", cs[0].Series)
	}

	rep := SweepReport(handRows())
	LinkCharts(rep, func(_ string, p report.Point) string {
		return map[float64]string{2: "cores-2/diff-vs-cores-1.html"}[p.X]
	})
	for _, c := range chartsIn(rep) {
		for _, p := range c.Series[0].Points {
			if want := map[float64]string{2: "cores-2/diff-vs-cores-1.html"}[p.X]; p.Link != want {
				t.Errorf("%s: %v cores links to %q, want %q", c.Title, p.X, p.Link, want)
			}
		}
	}
	if sweepCharts(nil) != nil {
		t.Error("charts of no runs")
	}
}

// The wasm charts: a series per mode, a bar per keep-resident setting,
// CPU per request in nanoseconds, failed runs and runs with errors marked.
func TestWasmCharts(t *testing.T) {
	points := []WasmPoint{
		{Mode: "loop", KeepResident: 0, CPUPerRequestUS: 12.5, RequestsPerS: 5000},
		{Mode: "loop", KeepResident: 1 << 20, CPUPerRequestUS: 30, RequestsPerS: 2000},
		{Mode: "concurrent", KeepResident: 0, CPUPerRequestUS: 20, RequestsPerS: 9000, Errors: 2},
		{Mode: "concurrent", KeepResident: 1 << 20, Failed: "child exited (status 2)"},
	}
	cs := chartsIn(WasmSweepReport(points))
	if len(cs) != 2 {
		t.Fatalf("%d charts, want 2", len(cs))
	}
	cpu, rps := cs[0], cs[1]
	if len(cpu.Series) != 2 || cpu.Series[0].Name != "loop" || cpu.Series[1].Name != "concurrent" || cpu.Kind != report.ChartBars {
		t.Fatalf("cpu chart %+v", cpu)
	}
	if p := cpu.Series[0].Points[0]; p.Y != 12500 || p.Label != "0" || cpu.YUnit != "nanoseconds" {
		t.Errorf("loop at 0: %+v in %s", p, cpu.YUnit)
	}
	if p := rps.Series[0].Points[1]; p.Y != 2000 || p.Label != "1MiB" {
		t.Errorf("loop at 1MiB: %+v", p)
	}
	for _, c := range cs {
		if c.Series[1].Points[0].Mark != report.MarkFailed || c.Series[1].Points[1].Mark != report.MarkFailed || c.Series[0].Points[0].Mark != report.MarkNone {
			t.Errorf("%s: failed marks %+v", c.Title, c.Series)
		}
	}
}
