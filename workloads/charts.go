package workloads

import (
	"fmt"
	"strconv"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/workloads/wasmhost"
)

// sweepCharts are a core-count sweep's charts (HTML): requests/s against
// cores with the peak ringed, efficiency per core relative to the
// smallest core count that ran (a dashed line at 100%, linear scaling),
// and the lock-contention, wait and gc shares per core count. A failed
// run is a ✕ on the X axis of each, its tooltip saying why, and the lines
// join the others; a run with failed requests keeps its point (and its
// peak) and has a ✕ of its own in the requests/s chart's "failed
// requests" series. See LinkCharts for the points' links.
func sweepCharts(rows []SweepRow) []report.Block {
	if len(rows) == 0 {
		return nil
	}
	rps := report.Series{Name: "requests/s"}
	errs := report.Series{Name: "failed requests"}
	eff := report.Series{Name: "efficiency"}
	buckets := []rules.Bucket{rules.LockContention, rules.Wait, rules.GC}
	shares := make([]report.Series, len(buckets))
	for i, b := range buckets {
		shares[i].Name = b.String()
	}
	first := 0
	for _, row := range rows {
		if first == 0 && row.Failed == "" {
			first = row.Cores
		}
		p := report.Point{X: float64(row.Cores)}
		if row.Failed != "" {
			p.Mark, p.Label = report.MarkFailed, coresText(row.Cores)+" (failed: "+row.Failed+")"
		}
		if row.Errors > 0 {
			errs.Points = append(errs.Points, report.Point{X: p.X, Mark: report.MarkFailed, Label: fmt.Sprintf("%s (%d failed requests)", coresText(row.Cores), row.Errors)})
		}
		p.Y = row.Efficiency
		eff.Points = append(eff.Points, p)
		for i, b := range buckets {
			p.Y = row.Share(b)
			shares[i].Points = append(shares[i].Points, p)
		}
		p.Y = row.RequestsPerS
		if row.Peak && row.Failed == "" {
			p.Mark = report.MarkPeak
		}
		rps.Points = append(rps.Points, p)
	}
	series := []report.Series{rps}
	if len(errs.Points) > 0 {
		series = append(series, errs)
	}
	linear := 1.0
	return []report.Block{
		&report.Chart{Title: "Requests/s by cores", Kind: report.ChartLine, X: "cores", Y: "requests/s", XUnit: "cores", YUnit: "requests/s",
			Series: series, Note: "Ringed: the peak. ✕: a run that failed, or (failed requests) one whose requests failed in part."},
		&report.Chart{Title: fmt.Sprintf("Efficiency per core (%% of %s)", coresText(first)), Kind: report.ChartLine, X: "cores", Y: "requests/s per core",
			XUnit: "cores", YUnit: report.ShareUnit, Series: []report.Series{eff}, Threshold: &linear, ThresholdLabel: "100%: linear scaling",
			Note: fmt.Sprintf("Requests/s per core relative to %s; below 100%% each added core adds less.", coresText(first))},
		&report.Chart{Title: "Bucket shares by cores", Kind: report.ChartLine, X: "cores", Y: "share of the profile's total", XUnit: "cores", YUnit: report.ShareUnit,
			Series: shares, Note: "From each run's profile (see the table's note)."},
	}
}

// coresText is "1 core" or "4 cores".
func coresText(n int) string {
	if n == 1 {
		return "1 core"
	}
	return strconv.Itoa(n) + " cores"
}

// LinkCharts sets the Link of every point of rep's charts to link(the
// point's series name, the point): e.g. to that run's diff page
// ("cores-4/diff-vs-cores-1.html", relative to where the page is read);
// "" leaves the point unlinked.
func LinkCharts(rep *report.Report, link func(series string, p report.Point) string) {
	for _, b := range rep.Blocks {
		c, ok := b.(*report.Chart)
		if !ok {
			continue
		}
		for i := range c.Series {
			for j := range c.Series[i].Points {
				p := &c.Series[i].Points[j]
				p.Link = link(c.Series[i].Name, *p)
			}
		}
	}
}

// wasmCharts are the wasm sweep's charts (HTML): CPU per request and
// requests/s per keep-resident setting, a bar per mode side by side (in
// the order the sweep ran them). A failed run, or one with failed
// requests, is a ✕ on the X axis in place of its bar.
func wasmCharts(points []WasmPoint) []report.Block {
	if len(points) == 0 {
		return nil
	}
	var cpu, rps []report.Series
	index := map[string]int{}
	keys, _ := wasmCells(points)
	grid := len(keys) > 1
	for _, p := range points {
		i, ok := index[p.Mode]
		if !ok {
			i = len(cpu)
			index[p.Mode] = i
			cpu = append(cpu, report.Series{Name: p.Mode})
			rps = append(rps, report.Series{Name: p.Mode})
		}
		label := wasmhost.FormatSize(p.KeepResident)
		if grid {
			label = wasmhost.FormatSize(p.Touch) + "×" + strconv.Itoa(p.Modules) + " keep " + label
		}
		c := report.Point{Label: label, Y: p.CPUPerRequestUS * 1e3}
		r := report.Point{Label: c.Label, Y: p.RequestsPerS}
		if p.Failed != "" || p.Errors > 0 {
			c.Mark, r.Mark = report.MarkFailed, report.MarkFailed
		}
		cpu[i].Points = append(cpu[i].Points, c)
		rps[i].Points = append(rps[i].Points, r)
	}
	note := "A bar per mode. ✕: the run failed or had failed requests (see the table)."
	x := "keep_resident"
	if grid {
		note = "A bar per mode; labels are touch×modules and keep_resident. ✕: the run failed or had failed requests (see the table)."
		x = "touch×modules, keep_resident"
	}
	blocks := []report.Block{
		&report.Chart{Title: "CPU per request by keep-resident", Kind: report.ChartBars, X: x, Y: "CPU per request",
			YUnit: "nanoseconds", Series: cpu, Note: note},
		&report.Chart{Title: "Requests/s by keep-resident", Kind: report.ChartBars, X: x, Y: "requests/s",
			YUnit: "requests/s", Series: rps, Note: note},
	}
	if grid {
		blocks = append(blocks, reversalChart(points))
	}
	return blocks
}

// reversalChart is the grid's answer: for each cell where both modes have
// a winner, the loop winner's requests/s under concurrency as a percentage
// of the concurrent winner's (100: the loop's winner also wins; below 100:
// it loses by the difference).
func reversalChart(points []WasmPoint) report.Block {
	v := Verdict(points)
	s := report.Series{Name: "loop winner under concurrency"}
	_, by := wasmCells(points)
	for _, c := range v.Cells {
		if c.LoopWinner < 0 || c.ConcurrentWinner < 0 {
			continue
		}
		pct := 100.0
		if c.Reversed {
			pct = 100 - c.LossPct
		}
		pt := report.Point{Label: wasmhost.FormatSize(c.Touch) + "×" + strconv.Itoa(c.Modules), Y: pct}
		for _, p := range by[cellKey{c.Touch, c.Modules}] {
			if p.Failed != "" || p.Errors > 0 {
				pt.Mark = report.MarkFailed
			}
		}
		s.Points = append(s.Points, pt)
	}
	return &report.Chart{Title: "The loop's winner under concurrency, by cell", Kind: report.ChartBars, X: "touch×modules", Y: "% of the concurrent winner's requests/s",
		YUnit: "percent", Series: []report.Series{s},
		Note: "100: the keep-resident setting that won the loop also wins under concurrency; below 100 it loses by the difference. ✕: a run in the cell failed or had failed requests."}
}
