package present

import (
	"fmt"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
)

// noShares are the share fields of a record that has none.
var noShares = [3]report.Cell{report.None(""), report.None(""), report.None("")}

// peeks are a section per peeked frame, pprof's -peek: its inclusive
// value on each side, then its callers and callees with theirs, in the
// same units; each row is a CSV record too.
func (d *diffReport) peeks() []report.Block {
	var blocks []report.Block
	n := d.r.Normalize
	for _, p := range d.r.Peek {
		base, new := peekSides(p.Values)
		head := report.Cat(Name(p.Name), ": ", base, " → ", new, " (", peekChange(n, p.Values), ") inclusive")
		t := &report.Table{Columns: []report.Column{report.Col("Peek"), report.Col("Frame"), report.RCol("base"), report.RCol("new"), report.RCol("Δ")}}
		d.recordCells("peek", p.Name, "", noShares, p.Values, "", false, "")
		for _, part := range peekParts(p) {
			for _, e := range part.edges {
				base, new := peekSides(e.Values)
				t.Rows = append(t.Rows, []report.Cell{report.Text(part.role), Name(e.Name), base, new, peekChange(n, e.Values)})
				d.recordCells("peek-"+part.role, e.Name, "", noShares, e.Values, "", false, p.Name)
			}
			t.Rows = append(t.Rows, part.more(len(t.Columns))...)
		}
		blocks = append(blocks,
			report.Heading{Level: 4, Only: report.Markdown, Line: report.Cat("Peek ", head)},
			report.Heading{Only: report.Terminal, Line: report.Cat("peek ", head)}, t)
	}
	return append(blocks, peeksOmitted(d.r.PeekOmitted)...)
}

// peekPart is a peeked frame's callers or callees, and how many of them
// were cut.
type peekPart struct {
	role    string
	edges   []result.PeekEdge
	omitted int
}

func peekParts(p result.PeekRow) []peekPart {
	return []peekPart{{"caller", p.Callers, p.CallersOmitted}, {"callee", p.Callees, p.CalleesOmitted}}
}

// more is the row that counts the part's cut edges in a table of cols
// columns (none when nothing was cut).
func (p peekPart) more(cols int) [][]report.Cell {
	if p.omitted == 0 {
		return nil
	}
	row := []report.Cell{report.Text(p.role), report.Text(fmt.Sprintf("… %d more", p.omitted))}
	for len(row) < cols {
		row = append(row, report.None(""))
	}
	return [][]report.Cell{row}
}

// peeksOmitted says how many peeked frames were cut.
func peeksOmitted(n int) []report.Block {
	if n == 0 {
		return nil
	}
	return []report.Block{report.Para{Lines: []report.Line{report.Cat(fmt.Sprintf("%d more frames match the peek pattern; they are cut like the method rows.", n))}}}
}

// peekChange is a peek row's Δ: of rates where both are known and values
// were not asked for, else of raw values (peek rows have no shares).
func peekChange(n result.Normalize, v result.Values) report.Cell {
	if v.Unit == "" {
		v.Unit = "count"
	}
	m := result.NormalizeValue
	if n != result.NormalizeValue && v.BaseRate != nil && v.NewRate != nil {
		m = result.NormalizeRate
	}
	return change(m, 0, v, false, "")
}

// peekSides are a peek row's sides: value, and rate where known.
func peekSides(v result.Values) (report.Cell, report.Cell) {
	one := func(value float64, rate *float64) report.Cell {
		if rate != nil {
			return report.Group(report.Amount(value, v.Unit), report.Amount(*rate, v.RateUnit))
		}
		return report.Amount(value, v.Unit)
	}
	return one(v.BaseValue, v.BaseRate), one(v.NewValue, v.NewRate)
}
