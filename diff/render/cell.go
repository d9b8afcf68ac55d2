package render

import (
	"math"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/render/sink"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/units"
)

// Pct formats a share (fraction 0..1) as a percentage: 0.0486 → "4.86%".
func Pct(f float64) string { return percent(f, 2) }

// Pct1 formats a share with one decimal, for summary lines: "80.4%".
func Pct1(f float64) string { return percent(f, 1) }

func percent(f float64, digits int) string {
	return strconv.FormatFloat(f*100, 'f', digits, 64) + "%"
}

// PP formats a share delta in percentage points with its sign: "+4.59pp";
// no change is "0.00pp".
func PP(d float64) string {
	s := strconv.FormatFloat(d*100, 'f', 2, 64)
	if s == "-0.00" || s == "0.00" {
		return "0.00pp"
	}
	return plus(s) + "pp"
}

// relative formats a relative growth (fraction) as a signed percentage
// with one decimal: "+2.8%", "-2.9%", and "+0.0%" for none.
func relative(f float64) string {
	s := strconv.FormatFloat(f*100, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	return plus(s) + "%"
}

func plus(s string) string {
	if !strings.HasPrefix(s, "-") {
		return "+" + s
	}
	return s
}

// MarkdownCode writes a name as a Markdown code span that is safe in a
// table cell (see sink.MarkdownCode).
func MarkdownCode(s string) string { return sink.MarkdownCode(s) }

// proseCode is a Markdown line of prose: code spans as MarkdownCode
// writes them but for '|', which needs no escape outside a table (where
// GitHub would show the backslash).
func proseCode(l report.Line) report.Line {
	out := make(report.Line, len(l))
	for i, c := range l {
		if c.Kind == report.KindCode {
			span := "`" + strings.ReplaceAll(sink.Terminal(sink.Cut(c.Text, sink.MaxName)), "`", "'") + "`"
			c.Kind, c.Text, c.Parts = report.KindPhrase, "", report.Line{{Kind: kindVerbatim, Text: span}}
		}
		if c.Markdown != nil {
			c.Markdown = proseCode(c.Markdown)
		}
		if c.Parts != nil {
			c.Parts = proseCode(c.Parts)
		}
		out[i] = c
	}
	return out
}

// kindVerbatim marks text the layout made safe already (a Markdown code
// span), which human writes as it is.
const kindVerbatim report.Kind = 255

// outside is text that may have come from outside profdiff (a name, a
// file name, a sample type) as medium m writes it (see package sink):
// in the terminal and in Markdown cut to sink.MaxName and escaped.
func outside(s string, m report.Medium) string {
	switch m {
	case report.Terminal:
		return sink.Terminal(sink.Cut(s, sink.MaxName))
	case report.Markdown:
		return sink.MarkdownText(sink.Cut(s, sink.MaxName))
	}
	return s
}

// line writes cells one after the other as medium m shows them; in
// Markdown a run of bold cells is one bold span.
func line(l report.Line, m report.Medium) string {
	var b strings.Builder
	bold := false
	for _, c := range l {
		alt := m == report.Markdown && c.Markdown != nil
		if strong := c.Strong && m == report.Markdown && !alt; strong != bold {
			b.WriteString("**")
			bold = strong
		}
		if alt {
			b.WriteString(line(c.Markdown, m))
		} else {
			b.WriteString(human(c, m))
		}
	}
	if bold {
		b.WriteString("**")
	}
	return b.String()
}

// Plain is a line as the terminal shows it without colour: a sentence
// for data (a verdict's summary).
func Plain(l report.Line) string { return line(l, report.Terminal) }

// String is a cell as the terminal shows it, for a command's own messages.
func String(c report.Cell) string { return human(c, report.Terminal) }

// human is a cell as people read it.
func human(c report.Cell, m report.Medium) string {
	var s string
	switch c.Kind {
	case report.KindCode:
		s = outside(c.Text, m)
		if m == report.Markdown {
			s = MarkdownCode(sink.Cut(c.Text, sink.MaxName))
		}
	case kindVerbatim:
		s = c.Text
	case report.KindNumber:
		s = number(c.Value, c.Digits)
		if c.Unit != "" {
			s += " " + c.Unit
		}
	case report.KindShare:
		s = percent(c.Value, c.Digits)
	case report.KindAmount:
		s = units.Format(c.Value, shownUnit(c))
	case report.KindGroup:
		parts := make([]string, len(c.Parts))
		for i, p := range c.Parts {
			parts[i] = human(p, m)
		}
		s = strings.Join(parts, " · ")
	case report.KindPhrase:
		var b strings.Builder
		for _, p := range c.Parts {
			b.WriteString(human(p, m))
		}
		s = b.String()
	case report.KindDelta:
		s = PP(c.Value)
		if c.Unit != "" {
			s = units.Signed(c.Value, shownUnit(c))
		}
		if c.Noisy {
			s += " ~"
		}
	case report.KindP:
		s = pValue(c.Value, c.Digits)
	case report.KindBool:
		s = strconv.FormatBool(c.Value != 0)
	default:
		s = outside(c.Text, m)
	}
	switch {
	case c.Relative != nil:
		s += " (" + relative(*c.Relative) + ")"
	case c.Note != "":
		s += " (" + outside(c.Note, m) + ")"
	}
	return s
}

// number prints a value with digits decimals; for report.Exact in its
// shortest exact form; for report.Compact exactly enough to read: integers
// as integers, others with up to 6 significant digits.
func number(v float64, digits int) string {
	switch {
	case digits >= 0:
		return strconv.FormatFloat(v, 'f', digits, 64)
	case digits == report.Exact:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// pValue prints p with digits decimals, or "<0.001" (for 3 digits) when
// it would round to zero there.
func pValue(p float64, digits int) string {
	if floor := math.Pow(10, -float64(digits)); p < floor {
		return "<" + strconv.FormatFloat(floor, 'f', digits, 64)
	}
	return strconv.FormatFloat(p, 'f', digits, 64)
}

// raw is a cell's value as CSV writes it: text as is (a phrase as its
// parts read, unescaped as in the html page; see csvCell for formulas), numbers in their shortest
// exact form (whole numbers without an exponent), flags as true or false, a missing value as an empty field.
func raw(c report.Cell) string {
	switch c.Kind {
	case report.KindText, report.KindCode:
		return c.Text
	case report.KindPhrase:
		return human(c, report.HTML)
	case report.KindNone:
		return ""
	case report.KindBool:
		return strconv.FormatBool(c.Value != 0)
	case report.KindGroup:
		if len(c.Parts) == 0 {
			return ""
		}
		return raw(c.Parts[0])
	}
	if c.Value == math.Trunc(c.Value) && math.Abs(c.Value) < 1e15 {
		return strconv.FormatFloat(c.Value, 'f', 0, 64) // 600000000, not 6e+08
	}
	return strconv.FormatFloat(c.Value, 'g', -1, 64)
}

// csvCell is a cell as CSV writes it: raw, and for text a spreadsheet
// would evaluate as a formula a leading quote (sink.CSV) unless keep.
func csvCell(c report.Cell, keep bool) string {
	s := raw(c)
	for c.Kind == report.KindGroup && len(c.Parts) > 0 {
		c = c.Parts[0]
	}
	if keep || c.Kind != report.KindText && c.Kind != report.KindCode && c.Kind != report.KindPhrase {
		return s
	}
	return sink.CSV(s)
}

// shownUnit is the unit an amount or a delta is shown in: none ("", a
// bare number) where its column's header names it (Cell.Bare).
func shownUnit(c report.Cell) string {
	if c.Bare {
		return ""
	}
	return c.Unit
}
