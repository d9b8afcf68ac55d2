// Package report is the model of everything profdiff prints: a Report is a
// sequence of blocks (headings, paragraphs, tables of typed cells), the
// records that CSV writes, the value that JSON marshals, and warnings.
//
// Cells carry raw values: a share is a fraction 0..1, a delta a difference
// of shares (or, with a unit, of amounts), a number or an amount a value in
// its unit. Package render decides how each looks in each format (4.86%,
// +4.59pp, 12 ms/s, a Markdown code span); nothing that builds a Report
// formats a number. A cell's Tone says what it means for the reader (a
// failure, growth, a decrease, a new row); render decides whether and how
// that is coloured.
//
// Warnings are never laid out: the command prints them on stderr, so they
// never reach CSV or JSON data.
//
// # Example
//
//	r := &report.Report{Blocks: []report.Block{
//		report.Para{Lines: []report.Line{{report.Text("Total: ").Bold(), report.Share(0.804).Places(1).Bold()}}},
//		&report.Table{
//			Columns: []report.Column{report.Col("Bucket"), report.RCol("share")},
//			Rows:    [][]report.Cell{{report.Text("lock-contention"), report.Share(0.0486)}},
//		},
//	}}
//	render.Report(os.Stdout, r, render.Table)
//
// prints
//
//	Total: 80.4%
//
//	┌─────────────────┬───────┐
//	│ Bucket          │ share │
//	├─────────────────┼───────┤
//	│ lock-contention │ 4.86% │
//	└─────────────────┴───────┘
//
// and in Markdown the first line is "**Total: 80.4%**" (Example keeps
// this true).
package report

// Report is one command's output.
type Report struct {
	// Blocks are laid out in order for the terminal and Markdown; a block
	// whose Only is set appears in those media alone.
	Blocks []Block
	// Records is the table CSV writes: one row per record, raw values.
	// Nil when the report has no CSV form.
	Records *Table
	// JSON is the value the json format marshals (a result struct, whose
	// field names are the released schema). Nil when there is no JSON form.
	JSON any
	// Warnings are for the user on stderr; no format lays them out.
	Warnings []string

	// Tree is a call tree for the flame-graph formats; reserved, not yet
	// laid out by any format.
	Tree *Tree
	// Verdict is a plain-language conclusion; reserved, not yet laid out.
	Verdict *Verdict
}

// Medium is where human-readable blocks are shown.
type Medium uint8

const (
	// Terminal is plain text with box-drawn tables.
	Terminal Medium = 1 << iota
	// Markdown is GitHub-flavoured Markdown.
	Markdown
)

// Block is a Heading, a Para or a *Table.
type Block interface {
	// In reports whether the block is shown in medium m.
	In(m Medium) bool
}

// Heading is a title line. In Markdown it is a heading of its Level (3 is
// "###"; below 1 counts as 1) followed by a blank line; in the terminal a
// plain line directly above the next block.
type Heading struct {
	Level int
	Line  Line
	Only  Medium // zero: every medium
}

// Para is a paragraph: lines printed one under the other. Blocks are
// separated by a blank line, except that in the terminal a Tight paragraph
// sits directly under the block before it (a table's footnote).
type Para struct {
	Lines []Line
	Tight bool
	Only  Medium // zero: every medium
}

// Table is a table of cells; every row has one cell per column.
type Table struct {
	Columns []Column
	Rows    [][]Cell
	Only    Medium // zero: every medium
}

// Column is a table column: its header and alignment. In Records the
// header is the CSV field name.
type Column struct {
	Name  string
	Align Align
}

// Align is a column's alignment.
type Align uint8

const (
	AlignLeft Align = iota
	AlignRight
)

// Col is a left-aligned column (text, names).
func Col(name string) Column { return Column{Name: name} }

// RCol is a right-aligned column (numbers).
func RCol(name string) Column { return Column{Name: name, Align: AlignRight} }

// Cols is left-aligned columns, as CSV records have.
func Cols(names ...string) []Column {
	cs := make([]Column, len(names))
	for i, n := range names {
		cs[i] = Col(n)
	}
	return cs
}

// In reports whether the heading is shown in m.
func (h Heading) In(m Medium) bool { return h.Only == 0 || h.Only&m != 0 }

// In reports whether the paragraph is shown in m.
func (p Para) In(m Medium) bool { return p.Only == 0 || p.Only&m != 0 }

// In reports whether the table is shown in m.
func (t *Table) In(m Medium) bool { return t.Only == 0 || t.Only&m != 0 }

// Line is a line of prose: cells printed one after the other.
type Line []Cell

// Tree is a call tree: values in the profile's unit per side. Reserved
// for the flame-graph formats.
type Tree struct {
	Name      string
	Base, New float64
	Children  []*Tree
}

// Verdict is a plain-language conclusion about a result. Reserved.
type Verdict struct {
	Bucket  string // the bucket the verdict is about, if any
	Summary string
}
