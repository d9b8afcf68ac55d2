package workloads

import (
	"io"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
)

// WriteSweep writes a core-count sweep as a table ("table" or "markdown")
// or as JSON. Rows keep the order of the sweep; the peak requests/s row is
// marked "◀ peak", and a failed run's row shows "failed: " and its reason
// in place of numbers. format is a render.Format name; a sweep has no CSV form.
func WriteSweep(w io.Writer, rows []SweepRow, format string) error {
	return render.Report(w, SweepReport(rows), render.Format(format))
}

// SweepJSON is a sweep's JSON: its runs, in the order they ran, and its
// verdict.
type SweepJSON struct {
	Runs    []SweepRow    `json:"runs"`
	Verdict *SweepVerdict `json:"verdict,omitempty"`
	// Projection is there when the sweep was projected to more cores
	// (AddProjection).
	Projection *Projection `json:"projection,omitempty"`
}

// SweepReport is the sweep as a report: a row per run and a line on where
// the bucket shares come from and what efficiency is relative to.
func SweepReport(rows []SweepRow) *report.Report {
	cols := []report.Column{report.RCol("cores"), report.RCol("requests/s"), report.RCol("p99 ms"), report.RCol("errors"), report.RCol("CPU/req µs"),
		report.RCol("lock-contention"), report.RCol("wait"), report.RCol("gc"), report.RCol("efficiency"), report.Col("")}
	t := &report.Table{Columns: cols}
	missing := report.None("–")
	for _, row := range rows {
		if row.Failed != "" {
			t.Rows = append(t.Rows, []report.Cell{report.Int(int64(row.Cores)), missing, missing, missing, missing, missing, missing, missing, missing,
				report.Text("failed: " + row.Failed)})
			continue
		}
		mark := ""
		if row.Peak {
			mark = "◀ peak"
		}
		t.Rows = append(t.Rows, []report.Cell{
			report.Int(int64(row.Cores)),
			report.Fixed(row.RequestsPerS, 0),
			report.Fixed(row.P99MS, 2),
			errorCount(row.Errors),
			report.Fixed(row.CPUPerRequestUS, 1),
			report.Share(row.Share(rules.LockContention)), report.Share(row.Share(rules.Wait)), report.Share(row.Share(rules.GC)),
			report.Share(row.Efficiency).Places(0),
			report.Text(mark),
		})
	}
	kind := "wall-clock (fgprof)"
	first := 0
	for _, row := range rows {
		if row.Failed == "" {
			first = row.Cores
			if row.Kind == "cpu" {
				kind = "CPU"
			}
			break
		}
	}
	note := report.Cat("Bucket shares from each run's ", kind, " profile. Efficiency: requests/s per core relative to ", first, " core(s).")
	blocks := append([]report.Block{t, report.Para{Lines: []report.Line{note}}}, sweepCharts(rows)...)
	c := SweepConclusion(rows) // the JSON's verdict and the paragraph, worked out once
	return &report.Report{Blocks: blocks, JSON: SweepJSON{Runs: rows, Verdict: c}, Verdict: c.report()}
}

// errorCount is a count of failed requests, marked "(!)" when any failed.
func errorCount(n int64) report.Cell {
	c := report.Int(n)
	if n > 0 {
		c = c.WithNote("!")
	}
	return c
}
