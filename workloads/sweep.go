package workloads

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/profdiff/profdiff/diff"
)

// WriteSweep writes a core-count sweep as a table ("table" or "markdown")
// or as JSON. Rows keep the order of the sweep; the peak requests/s row is
// marked "◀ peak".
func WriteSweep(w io.Writer, rows []SweepRow, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
	if format == "markdown" {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	r, l := tw.AlignRight, tw.AlignLeft
	align := []tw.Align{r, r, r, r, r, r, r, r, r, l}
	opts = append(opts, tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}))
	t := tablewriter.NewTable(w, opts...)
	t.Header([]string{"cores", "requests/s", "p99 ms", "errors", "CPU/req µs", "lock-contention", "wait", "gc", "efficiency", ""})
	for _, row := range rows {
		mark := ""
		if row.Peak {
			mark = "◀ peak"
		}
		errs := strconv.FormatInt(row.Errors, 10)
		if row.Errors > 0 {
			errs += " (!)"
		}
		if err := t.Append([]string{
			strconv.Itoa(row.Cores),
			strconv.FormatFloat(row.RequestsPerS, 'f', 0, 64),
			strconv.FormatFloat(row.P99MS, 'f', 2, 64),
			errs,
			strconv.FormatFloat(row.CPUPerRequestUS, 'f', 1, 64),
			pct(row.Share(diff.LockContention)), pct(row.Share(diff.Wait)), pct(row.Share(diff.GC)),
			strconv.FormatFloat(row.Efficiency*100, 'f', 0, 64) + "%",
			mark,
		}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	kind := "wall-clock (fgprof)"
	if len(rows) > 0 && rows[0].Kind == "cpu" {
		kind = "CPU"
	}
	_, err := fmt.Fprintf(w, "\nBucket shares from each run's %s profile. Efficiency: requests/s per core relative to %d core(s).\n", kind, firstCores(rows))
	return err
}

func firstCores(rows []SweepRow) int {
	if len(rows) == 0 {
		return 0
	}
	return rows[0].Cores
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }
