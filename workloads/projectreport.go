package workloads

import (
	"fmt"

	"github.com/profdiff/profdiff/diff/report"
)

// AddProjection appends a projection to a sweep's report: its label and
// summary, a table of the projected curve, its inputs and assumptions,
// and (HTML) a chart of the curves with the measured points; the sweep's
// JSON gets it as "projection".
func AddProjection(rep *report.Report, p *Projection) {
	rep.Blocks = append(rep.Blocks, projectionBlocks(p)...)
	if j, ok := rep.JSON.(SweepJSON); ok {
		j.Projection = p
		rep.JSON = j
	}
}

func projectionBlocks(p *Projection) []report.Block {
	head := report.Para{Lines: []report.Line{report.Cat(report.Text(p.Label).Bold(), fmt.Sprintf(" to %d cores: ", p.ToCores), p.Summary, ".")}}
	cols := []report.Column{report.RCol("cores"), report.RCol("CPU-bound req/s"), report.RCol("USL req/s"), report.RCol("lock bound req/s"), report.RCol("projected req/s"), report.Col("")}
	t := &report.Table{Columns: cols}
	none := report.None("–")
	num := func(v float64) report.Cell {
		if v <= 0 {
			return none
		}
		return report.Fixed(v, 0)
	}
	for _, c := range p.Curve {
		mark := ""
		if c.Cores == p.PeakCores {
			mark = "◀ projected peak (" + p.Cause + ")"
		}
		t.Rows = append(t.Rows, []report.Cell{report.Int(int64(c.Cores)), num(c.CPUBoundRPS), num(c.USLRPS), num(c.LockBoundRPS), num(c.ProjectedRPS), report.Text(mark)})
	}
	notes := report.Para{Lines: projectionInputs(p)}
	as := report.Para{Lines: []report.Line{report.Cat("Assumptions:")}}
	for _, a := range p.Assumptions {
		as.Lines = append(as.Lines, report.Cat("- ", a))
	}
	return []report.Block{head, t, notes, as, projectionChart(p)}
}

// projectionInputs are the lines saying what the projection was made
// from, with the profile cross-check of the lock's numbers.
func projectionInputs(p *Projection) []report.Line {
	var ls []report.Line
	if p.DemandUS > 0 {
		ls = append(ls, report.Cat("Inputs: CPU per request ", report.Fixed(p.DemandUS, 1), fmt.Sprintf(" µs (the %d-core run).", p.DemandCores)))
	}
	if l := p.Lock; l != nil {
		ls = append(ls, report.Cat("Lock (counted by the server at ", l.FromCores, " core(s)): hold ", report.Fixed(l.HoldUS, 2), " µs (mean of ", report.Int(int64(l.TimedHolds)),
			" timed holds), ", report.Fixed(l.AcquisitionsPerRequest, 2), " acquisitions per request, ", l.Shards, " lock(s), the busiest taking ", report.Share(l.BusiestShare).Places(0), "."))
		for _, c := range l.CrossChecks {
			ls = append(ls, report.Cat("Cross-check: ", c.Source, " charges ", report.Fixed(c.USPerRequest, 2), " µs of CPU per request to the critical sections; hold × acquisitions is ",
				report.Fixed(l.HoldUS*l.AcquisitionsPerRequest, 2), " µs."))
		}
	} else if p.LockWhyNot != "" {
		ls = append(ls, report.Cat("Lock not measured: ", p.LockWhyNot, "."))
	} else {
		ls = append(ls, report.Cat("Lock: the server has none to bound it."))
	}
	if u := p.USL; u != nil {
		peak := "no peak (κ = 0)"
		if u.PeakCores > 0 {
			peak = fmt.Sprintf("N* = sqrt((1−σ)/κ) = %.1f", u.PeakCores)
		}
		ls = append(ls, report.Cat(fmt.Sprintf("USL fitted to %d points: λ %.0f requests/s, σ %.4f, κ %.6f; %s.", u.Points, u.Lambda, u.Sigma, u.Kappa, peak)))
	} else {
		ls = append(ls, report.Cat("USL not fitted: ", p.USLWhyNot, "."))
	}
	return ls
}

// projectionChart draws the projected curve and the lines it is the
// least of (HTML only).
func projectionChart(p *Projection) *report.Chart {
	series := []report.Series{{Name: "projected"}, {Name: "CPU-bound"}, {Name: "USL"}, {Name: "lock bound"}}
	for _, c := range p.Curve {
		for i, v := range []float64{c.ProjectedRPS, c.CPUBoundRPS, c.USLRPS, c.LockBoundRPS} {
			if v > 0 {
				pt := report.Point{X: float64(c.Cores), Y: v}
				if i == 0 && c.Cores == p.PeakCores {
					pt.Mark = report.MarkPeak
				}
				series[i].Points = append(series[i].Points, pt)
			}
		}
	}
	var keep []report.Series
	for _, s := range series {
		if len(s.Points) > 0 {
			keep = append(keep, s)
		}
	}
	return &report.Chart{Title: "Projected requests/s by cores (a projection, not a measurement)", Kind: report.ChartLine, X: "cores", Y: "requests/s", XUnit: "cores", YUnit: "requests/s",
		Series: keep, Note: "The projection is the least of the lines that apply. Ringed: the projected peak."}
}
