package report

import "fmt"

// Kind is what a cell holds.
type Kind uint8

const (
	KindText   Kind = iota // Text, as written
	KindCode               // Text is a name: a code span in Markdown
	KindNumber             // Value in Unit
	KindShare              // Value is a fraction 0..1
	KindDelta              // Value is a difference of shares, or with a Unit of amounts in it
	KindP                  // Value is a p-value
	KindBool               // Value is 1 (true) or 0 (false)
	KindNone               // no value; Text is the placeholder people read ("–", "n/a")
	// KindAmount is Value in Unit, shown scaled for people: nanoseconds as
	// "4.79 s" or "23 ms", bytes as "12 MiB", "s/s" (seconds of delay per
	// second) as "12 ms/s", "cores" as "0.53 cores".
	KindAmount
	// KindGroup is its Parts shown side by side ("0.27% · 12 ms/s"); CSV
	// writes the first part.
	KindGroup
	// KindPhrase is its Parts shown one after the other as one piece of
	// text ("lock-contention 71%"), which wraps and sorts as text does.
	KindPhrase
)

// Tone is what a cell means for the reader, which the terminal may show
// in colour: report decides the meaning, render the escape codes.
type Tone uint8

const (
	ToneNone   Tone = iota
	ToneFail        // a failed check
	ToneGrowth      // a value that grew
	ToneShrink      // a value that fell
	ToneNew         // a row absent from the base
)

// Digits values that are not a count of decimals.
const (
	// Compact shows integers as integers and others with up to 6
	// significant digits.
	Compact = -1
	// Exact shows the shortest form that reads back as the same value.
	Exact = -2
)

// Cell is one typed value. Build cells with the constructors below and
// the methods that return a changed copy.
type Cell struct {
	Kind  Kind
	Text  string
	Value float64
	// Unit follows a number ("12 ms", or "0.5s" for the unit "s"); empty
	// in table columns that name the unit in their header.
	Unit string
	// Bare shows an amount or a delta in Unit as a bare number: its
	// column's header names the unit ("base (goroutines)").
	Bare bool
	// Digits is the decimals of a number, share or p-value (or Compact,
	// Exact for a number).
	Digits int
	// Noisy marks a delta within sampling noise.
	Noisy bool
	// Note is a remark shown after the value in parentheses: "18x
	// increase" after a delta, "!" after an error count.
	Note string
	// Relative is a delta's growth relative to base (a fraction), shown in
	// place of the note as a signed percentage: "(+2.9%)".
	Relative *float64
	// Strong is bold in Markdown.
	Strong bool
	// Markdown, when set, is how Markdown shows this cell instead.
	Markdown Line
	// Parts are a group's cells (KindGroup).
	Parts Line
	// Tone is the cell's meaning for colour.
	Tone Tone
	// Link, when set, is a page the cell points to, a path relative to
	// the page showing it: a link in HTML, plain text elsewhere.
	Link string
	// Wrap makes a name too wide for its column wrap onto more lines
	// instead of being elided in the middle (a pattern, whose every
	// character matters).
	Wrap bool
	// Whole, when set, is the cell's text in full where Text is a short
	// form of it (a source's path, whose Text is its shortest unambiguous
	// name): the table format's prose shows it with render.Options.Wide.
	Whole string
	// Params, above 0, is where a name's final parameter list starts
	// (the index in Text of its '('): a column too narrow for the name
	// shortens that list to "(…)" first.
	Params int
}

// Text is a cell of text.
func Text(s string) Cell { return Cell{Kind: KindText, Text: s} }

// Code is a name (a function, a pattern, a file) that Markdown writes as a
// code span.
func Code(s string) Cell { return Cell{Kind: KindCode, Text: s} }

// Num is a number shown compactly (see Compact).
func Num(v float64) Cell { return Cell{Kind: KindNumber, Value: v, Digits: Compact} }

// Int is a count.
func Int(n int64) Cell { return Cell{Kind: KindNumber, Value: float64(n), Digits: 0} }

// ExactNum is a number shown in its shortest exact form (0.1234567).
func ExactNum(v float64) Cell { return Cell{Kind: KindNumber, Value: v, Digits: Exact} }

// Fixed is a number shown with the given decimals.
func Fixed(v float64, digits int) Cell { return Cell{Kind: KindNumber, Value: v, Digits: digits} }

// Amount is a value in unit ("nanoseconds", "bytes", "count", "cores",
// "threads", "goroutines", "s/s"), shown scaled for people.
func Amount(v float64, unit string) Cell { return Cell{Kind: KindAmount, Value: v, Unit: unit} }

// Group is cells shown side by side, as one table cell: a share and its
// rate.
func Group(parts ...Cell) Cell { return Cell{Kind: KindGroup, Parts: parts} }

// Phrase is parts (as Cat takes them) shown one after the other as one
// cell of text: a bucket and its share, "lock-contention 71%".
func Phrase(parts ...any) Cell { return Cell{Kind: KindPhrase, Parts: Cat(parts...)} }

// Share is a fraction 0..1, shown as a percentage with two decimals.
func Share(f float64) Cell { return Cell{Kind: KindShare, Value: f, Digits: 2} }

// Delta is a difference of shares, shown in percentage points; noisy marks
// it as within sampling noise, note is a remark (may be empty). With a
// unit (WithUnit) it is a difference of amounts in that unit, shown
// scaled and signed as Amount is ("+298 ms/s").
func Delta(d float64, noisy bool, note string) Cell {
	return Cell{Kind: KindDelta, Value: d, Noisy: noisy, Note: note}
}

// P is a p-value, or no value ("n/a") when p is nil.
func P(p *float64) Cell {
	if p == nil {
		return None("n/a")
	}
	return Cell{Kind: KindP, Value: *p, Digits: 3}
}

// Bool is a flag.
func Bool(b bool) Cell {
	c := Cell{Kind: KindBool}
	if b {
		c.Value = 1
	}
	return c
}

// None is a missing value; people read placeholder, CSV an empty field.
func None(placeholder string) Cell { return Cell{Kind: KindNone, Text: placeholder} }

// Places returns c with digits decimals.
func (c Cell) Places(digits int) Cell { c.Digits = digits; return c }

// WithUnit returns c with unit u.
func (c Cell) WithUnit(u string) Cell { c.Unit = u; return c }

// WithNote returns c with the remark note.
func (c Cell) WithNote(note string) Cell { c.Note = note; return c }

// WithRelative returns c with its growth relative to base.
func (c Cell) WithRelative(rel float64) Cell { c.Relative = &rel; return c }

// WithLink returns c linking to the page at the relative path link (HTML).
func (c Cell) WithLink(link string) Cell { c.Link = link; return c }

// WithTone returns c with tone t.
func (c Cell) WithTone(t Tone) Cell { c.Tone = t; return c }

// InHeader returns c shown as a bare number, its unit named by its
// column's header.
func (c Cell) InHeader() Cell { c.Bare = true; return c }

// WithParams returns the name c with its final parameter list starting at
// index i of its text (see Cell.Params).
func (c Cell) WithParams(i int) Cell { c.Params = i; return c }

// OrWhole returns c, a short form of the text whole, shown whole where
// names are kept whole (see Cell.Whole).
func (c Cell) OrWhole(whole string) Cell { c.Whole = whole; return c }

// Wrapped returns c wrapped rather than elided when its column is narrowed.
func (c Cell) Wrapped() Cell { c.Wrap = true; return c }

// Bold returns c in bold (Markdown).
func (c Cell) Bold() Cell { c.Strong = true; return c }

// OrInMarkdown returns c shown as the cells md in Markdown.
func (c Cell) OrInMarkdown(md ...Cell) Cell { c.Markdown = md; return c }

// Cat makes a line of parts: a string is a Text cell, a Cell itself, a
// Line its cells, anything else its fmt.Sprint text.
func Cat(parts ...any) Line {
	var l Line
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			l = append(l, Text(p))
		case Cell:
			l = append(l, p)
		case Line:
			l = append(l, p...)
		default:
			l = append(l, Text(fmt.Sprint(p)))
		}
	}
	return l
}

// List names items, each as a cell made by cell (Text or Code): up to
// three joined by commas, more as the first two and a count ("a, b and 3
// more"), as a report names the sources of a side.
func List(items []string, cell func(string) Cell) Line {
	cells := make([]Cell, len(items))
	for i, s := range items {
		cells[i] = cell(s)
	}
	return ListCells(cells)
}

// ListCells is List of cells already made.
func ListCells(cells []Cell) Line {
	if len(cells) > 3 {
		return Cat(cells[0], ", ", cells[1], fmt.Sprintf(" and %d more", len(cells)-2))
	}
	var l Line
	for i, c := range cells {
		if i > 0 {
			l = append(l, Text(", "))
		}
		l = append(l, c)
	}
	return l
}
