package present

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
)

// The JSON values of a diff and a top listing encode as the results do,
// and say their rows: the result without its method rows, and each row.
func TestJSONIsTheResult(t *testing.T) {
	r, top := fixture.SynthPair(t)
	for name, c := range map[string]struct {
		value, result any
		rows          int
	}{
		"diff": {DiffFor(r, report.PartJSON).JSON, r, len(r.Methods)},
		"top":  {TopFor(top, report.PartJSON).JSON, top, len(top.Methods)},
	} {
		got, err := json.Marshal(c.value)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(c.result)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the JSON value encodes differently from the result", name)
		}
		rv, ok := c.value.(report.Rows)
		if !ok {
			t.Fatalf("%s: the JSON value has no rows", name)
		}
		shell, key, n, row := rv.JSONRows()
		if key != "methods" || n != c.rows || row(n-1) == nil {
			t.Errorf("%s: rows %q, %d, want methods, %d", name, key, n, c.rows)
		}
		if b, _ := json.Marshal(shell); !bytes.Contains(b, []byte(`"methods":[]`)) {
			t.Errorf("%s: the shell holds rows: %.200s", name, b)
		}
	}
}

// A format's own report writes what the whole report writes in that
// format: CSV without the method table's cells, JSON with nothing but
// the result.
func TestReportForWritesTheReport(t *testing.T) {
	r, top := fixture.SynthPair(t)
	diffs := map[string]*result.Result{"synth pair": r, "dotnet": dotnetResult(t, diff.Options{Top: -1})}
	for _, s := range synths {
		diffs[s.name] = s.r()
	}
	for name, r := range diffs {
		for _, f := range []render.Format{render.CSV, render.JSON, render.Table, render.Markdown} {
			want := write(t, Diff(r), f, render.Options{})
			if got := write(t, DiffFor(r, f.Parts()), f, render.Options{}); got != want {
				t.Errorf("%s, %s: DiffFor writes\n%s\nDiff\n%s", name, f, got, want)
			}
		}
	}
	for name, top := range map[string]*result.TopResult{"synth base": top, "mutex synth": topSynth(), "dotnet": dotnetTop(t)} {
		for _, f := range []render.Format{render.CSV, render.JSON, render.Table, render.Markdown} {
			want := write(t, Top(top), f, render.Options{})
			if got := write(t, TopFor(top, f.Parts()), f, render.Options{}); got != want {
				t.Errorf("%s, %s: TopFor writes\n%s\nTop\n%s", name, f, got, want)
			}
		}
	}
	// What the formats' reports leave out.
	if rows := methodCells(DiffFor(r, report.PartRecords)) + methodCells(TopFor(top, report.PartRecords)); rows != 0 {
		t.Errorf("CSV's reports hold %d method table rows, want none", rows)
	}
	if rows := methodCells(Diff(r)); rows != len(r.Methods) {
		t.Errorf("the diff report holds %d method table rows, want %d", rows, len(r.Methods))
	}
	if rep := DiffFor(r, report.PartJSON); rep.Blocks != nil || rep.Records != nil || rep.JSON != (resultJSON{r}) {
		t.Errorf("JSON's report holds blocks or records, or not the result")
	}
}

// methodCells counts the rows of a report's method tables.
func methodCells(rep *report.Report) int {
	n := 0
	for _, b := range rep.Blocks {
		if t, ok := b.(*report.Table); ok && len(t.Columns) > 0 && t.Columns[0].Name == "Method" {
			n += len(t.Rows)
		}
	}
	return n
}
