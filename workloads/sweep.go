package workloads

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
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
	r, l := tw.AlignRight, tw.AlignLeft
	t := render.NewTable(w, format == "markdown",
		[]string{"cores", "requests/s", "p99 ms", "errors", "CPU/req µs", "lock-contention", "wait", "gc", "efficiency", ""},
		[]tw.Align{r, r, r, r, r, r, r, r, r, l})
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
			render.Pct(row.Share(diff.LockContention)), render.Pct(row.Share(diff.Wait)), render.Pct(row.Share(diff.GC)),
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
