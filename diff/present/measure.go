package present

import (
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/units"
	"github.com/profdiff/profdiff/symbolize"
)

// side is one side of a row as people read it: its share and, beside it,
// its rate where the side's duration is known, else its raw value where
// the values are known (their unit is set) and are not a bare count,
// else the share alone.
func side(share, value float64, rate *float64, v result.Values) report.Cell {
	switch {
	case rate != nil:
		return report.Group(report.Share(share), report.Amount(*rate, v.RateUnit))
	case v.Unit != "" && v.Unit != "count":
		// A count of samples says what the share does: left to CSV and JSON.
		return report.Group(report.Share(share), report.Amount(value, v.Unit))
	}
	return report.Share(share)
}

// sides are a row's base and new cells (see side).
func sides(base, new float64, v result.Values) (report.Cell, report.Cell) {
	return side(base, v.BaseValue, v.BaseRate, v), side(new, v.NewValue, v.NewRate, v)
}

// change is a row's Δ in the result's measure: the difference of rates
// in their unit, of raw values in theirs, or of shares in points (also
// when the measure's numbers are unknown), with the noise mark and the
// note, coloured as growth or decrease unless it is noise.
func change(n result.Normalize, shareDelta float64, v result.Values, noisy bool, note string) report.Cell {
	d := report.Delta(shareDelta, noisy, note)
	switch {
	case n == result.NormalizeRate && v.BaseRate != nil && v.NewRate != nil:
		d.Value, d.Unit = *v.NewRate-*v.BaseRate, v.RateUnit
	case n == result.NormalizeValue && v.Unit != "":
		d.Value, d.Unit = v.NewValue-v.BaseValue, v.Unit
	}
	return d.WithTone(growth(d.Value, noisy))
}

// growth is the tone of a change: growth, decrease, or none for no change
// or noise.
func growth(d float64, noisy bool) report.Tone {
	switch {
	case noisy || d == 0:
		return report.ToneNone
	case d > 0:
		return report.ToneGrowth
	}
	return report.ToneShrink
}

// valueRecords are the CSV fields of a row's values: base_value,
// new_value, base_rate, new_rate, unit, rate_unit; an unknown rate is an
// empty field.
func valueRecords(v result.Values) []report.Cell {
	return []report.Cell{report.ExactNum(v.BaseValue), report.ExactNum(v.NewValue), rateRecord(v.BaseRate), rateRecord(v.NewRate),
		report.Text(v.Unit), report.Text(v.RateUnit)}
}

// valueColumns are the CSV names of valueRecords' fields.
var valueColumns = []string{"base_value", "new_value", "base_rate", "new_rate", "unit", "rate_unit"}

// bucketCell is a method's dominant bucket and, when its samples span
// more than one, the dominant one's share of them ("lock-contention 71%").
func bucketCell(b rules.Bucket, share float64) report.Cell {
	if share <= 0 || share >= 0.995 { // 0.995 would read "100%"
		return report.Text(b.String())
	}
	return report.Phrase(b.String()+" ", report.Share(share).Places(0))
}

// unitInHeader moves a rate unit that is a plain word (goroutines,
// threads, cores, samples/s: units that are never scaled, unlike s/s or
// bytes) from every cell of the columns cols into their headers ("base"
// becomes "base (goroutines)"), so a table of such rates is not a column
// of repeated words. Cells of other units are left alone.
func unitInHeader(t *report.Table, unit string, cols ...int) {
	if units.Scaled(unit) || unit == "" || unit == "count" {
		return
	}
	for _, c := range cols {
		moved := false
		for _, row := range t.Rows {
			moved = bareCell(&row[c], unit) || moved
		}
		if moved {
			t.Columns[c].Name += " (" + unit + ")"
		}
	}
}

// bareCell drops unit from c (or its parts) and reports whether it did.
func bareCell(c *report.Cell, unit string) bool {
	if c.Kind == report.KindGroup {
		parts := append([]report.Cell(nil), c.Parts...)
		moved := false
		for i := range parts {
			moved = bareCell(&parts[i], unit) || moved
		}
		c.Parts = parts
		return moved
	}
	if (c.Kind == report.KindAmount || c.Kind == report.KindDelta) && c.Unit == unit {
		*c = c.InHeader()
		return true
	}
	return false
}

// Name is a function name (a code cell) with where its final parameter
// list starts, which a narrow table column elides first.
func Name(s string) report.Cell {
	return report.Code(s).WithParams(max(symbolize.FinalGroup(s), 0))
}

// methodName is a method row's name cell: Name, or for a row merged from
// several names (result.MethodRow.Variants) what they share and how many
// they are, "work (2 variants)", whose count is no parameter list.
func methodName(name string, variants int) report.Cell {
	if variants > 1 {
		return report.Code(name + result.VariantsSuffix(variants))
	}
	return Name(name)
}
