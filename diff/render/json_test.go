package render

import (
	"bytes"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// synthPair is the diff, every method row kept (as the data formats keep
// them), and the base side's top listing of a small generated pair.
func synthPair(t *testing.T) (*diff.Result, *diff.TopResult) {
	t.Helper()
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = 3000, 800
	a := diff.NewAnalyzer(diff.Options{Top: -1})
	top := diff.NewAnalyzer(diff.Options{Top: -1})
	for side, s := range []synth.Side{synth.Base, synth.New} {
		cfg.Side = s
		var buf bytes.Buffer
		if err := synth.Write(&buf, cfg); err != nil {
			t.Fatal(err)
		}
		l, err := profile.Parse("synth.pb.gz", buf.Bytes(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(diff.Side(side), l); err != nil {
			t.Fatal(err)
		}
		if side == 0 {
			if err := top.Add(diff.Base, l); err != nil {
				t.Fatal(err)
			}
		}
	}
	return a.Diff(), top.Top()
}

// writeJSON streams the method rows; what it writes is what encoding the
// whole value writes, byte for byte: for results with rows, with one row,
// with none, and with names that spell the key it looks for.
func TestWriteJSONIsTheEncoder(t *testing.T) {
	r, top := synthPair(t)
	if len(r.Methods) < 300 || len(top.Methods) < 300 {
		t.Fatalf("%d and %d method rows, want a few hundred", len(r.Methods), len(top.Methods))
	}
	odd := *r
	odd.Methods = append([]diff.MethodRow(nil), r.Methods[:3]...)
	odd.Methods[0].Name = "\n  \"methods\": []"
	odd.Methods[1].Note = "]\n  \"methods\": [],"
	one := *r
	one.Methods = r.Methods[:1]
	none := *r
	none.Methods = nil
	empty := *top
	empty.Methods = []diff.TopMethod{}
	values := map[string]any{"diff": r, "top": top, "odd names": &odd, "one row": &one, "no rows": &none, "empty top": &empty,
		"the rule table": diff.DefaultRules().Rules, "dotnet": dotnetResult(t, diff.Options{Top: -1})}
	for name, v := range values {
		// The report's JSON value is the result wrapped with its rows,
		// which must encode as the result itself does.
		w := v
		switch v := v.(type) {
		case *diff.Result:
			w = resultJSON{v}
		case *diff.TopResult:
			w = topJSON{v}
		}
		var want, got bytes.Buffer
		if err := encodeJSON(&want, v, ""); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(&got, w); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: writeJSON differs from the encoder at byte %d of %d:\n%s", name, firstDiff(got.Bytes(), want.Bytes()), want.Len(), got.String())
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A format's own report writes what the whole report writes in that
// format: CSV without the method table's cells, JSON with nothing but
// the result.
func TestReportForWritesTheReport(t *testing.T) {
	r, top := synthPair(t)
	diffs := map[string]*diff.Result{"synth pair": r, "dotnet": dotnetResult(t, diff.Options{Top: -1})}
	for _, s := range synths {
		diffs[s.name] = s.r()
	}
	for name, r := range diffs {
		for _, f := range []Format{CSV, JSON, Table, Markdown} {
			want := write(t, DiffReport(r), f, Options{})
			if got := write(t, DiffReportFor(r, f), f, Options{}); got != want {
				t.Errorf("%s, %s: DiffReportFor writes\n%s\nDiffReport\n%s", name, f, got, want)
			}
		}
	}
	for name, top := range map[string]*diff.TopResult{"synth base": top, "mutex synth": topSynth(), "dotnet": dotnetTop(t)} {
		for _, f := range []Format{CSV, JSON, Table, Markdown} {
			want := write(t, TopReport(top), f, Options{})
			if got := write(t, TopReportFor(top, f), f, Options{}); got != want {
				t.Errorf("%s, %s: TopReportFor writes\n%s\nTopReport\n%s", name, f, got, want)
			}
		}
	}
	// What the formats' reports leave out.
	if rows := methodCells(DiffReportFor(r, CSV)) + methodCells(TopReportFor(top, CSV)); rows != 0 {
		t.Errorf("CSV's reports hold %d method table rows, want none", rows)
	}
	if rows := methodCells(DiffReport(r)); rows != len(r.Methods) {
		t.Errorf("the diff report holds %d method table rows, want %d", rows, len(r.Methods))
	}
	if rep := DiffReportFor(r, JSON); rep.Blocks != nil || rep.Records != nil || rep.JSON != (resultJSON{r}) {
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
