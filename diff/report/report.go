// Package report is the model of everything profdiff prints: a Report is a
// verdict and a sequence of blocks (headings, paragraphs, tables of typed
// cells, charts, a flame graph of a call tree), the records that CSV
// writes, the value that JSON marshals, and warnings.
//
// It imports only the standard library and nothing of the engine, so that
// anything can build a report and have it laid out without linking a
// profile reader: package diff/present builds the reports of the engine's
// results, the gate, the workload sweeps and the load generator build
// their own, and package render lays every one of them out.
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
	// field names are the released schema); one that implements Rows has
	// its long array written a row at a time. Nil when there is no JSON
	// form.
	JSON any
	// Warnings are for the user on stderr; no format lays them out.
	Warnings []string

	// Title names the report where no Markdown heading does: the html
	// page's title ("profdiff report" without either).
	Title string
	// Verdict is the plain-language conclusion, shown before every block
	// in the terminal, in Markdown and in HTML, and the summary of a JSON
	// value that is Summarized (nil: none).
	Verdict *Verdict
}

// Rows is implemented by a JSON value (Report.JSON) whose bulk is one long
// array at its top level, such as a diff's method rows (12,600 rows, 6.7
// MB, on the 200k-stack pair): the json format writes the rest of the
// value around it and the array a row at a time, so the document is never
// held whole. The output is the value's own encoding.
type Rows interface {
	// JSONRows returns the value with the array empty (shell), the key
	// that holds the array, and its n rows by index.
	JSONRows() (shell any, key string, n int, row func(i int) any)
}

// Summarized is implemented by a JSON value (Report.JSON) that carries the
// report's verdict in words, as a diff's verdict "summary" does: the json
// format writes the value WithSummary returns, given the sentences of
// Report.Verdict as the terminal shows them (plain text, one after the
// other), so the data and the laid-out verdict cannot say different
// things. The value itself is left as it is.
type Summarized interface {
	WithSummary(sentences string) any
}

// Parts are parts of a Report, as a format reads them, so that a builder
// asked for some may leave the rest out: a diff's 12,600 method rows are
// cells that only the text formats show.
type Parts uint8

const (
	// PartBlocks is Blocks, Verdict and Title: the text formats, the
	// html page and the pictures.
	PartBlocks Parts = 1 << iota
	// PartRecords is Records: CSV.
	PartRecords
	// PartJSON is JSON and the Verdict its summary says (Summarized):
	// the json format.
	PartJSON
)

// Medium is where human-readable blocks are shown.
type Medium uint8

const (
	// Terminal is plain text with box-drawn tables.
	Terminal Medium = 1 << iota
	// Markdown is GitHub-flavoured Markdown.
	Markdown
	// HTML is the self-contained page of the html format.
	HTML
)

// Block is a Heading, a Para, a *Table, or a *Chart or *Flame (pictures,
// shown in HTML alone; a *Flame is also the svg format).
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

// Verdict is a plain-language conclusion: one short paragraph (Lines are
// its sentences, printed one after the other) that a reader gets first.
// Tone marks a verdict of failure or growth for colour.
type Verdict struct {
	Lines []Line
	Tone  Tone
}

// Flame is a differential flame graph of a merged call tree (both sides'
// values on every node, in Unit): shown in HTML and, alone, as the svg
// format; the folded formats write its stacks (Stacks, when set, else
// Tree's).
type Flame struct {
	Tree *Node
	// Stacks, when set, are the tree's stacks unmerged, for the folded
	// formats; a flame with Stacks may have no Tree.
	Stacks Stacks
	// Sides is 2 for a comparison, 1 for one profile (top: the values are
	// the base side's).
	Sides int
	// Unit is the values' unit; RateUnit the unit of a rate, a value times
	// its side's RateFactor (0 where the side's rate is unknown).
	Unit, RateUnit string
	RateFactor     [2]float64
	// Measure is what colour compares.
	Measure Measure
	// Labels name the sides ("base", "new" or the sources).
	Labels [2]string
	// Buckets name the buckets a node's Bucket and BucketValue.Bucket
	// index, in the order a legend lists them.
	Buckets []string
}

// Measure is what a flame graph's colour compares between the sides:
// shares of each side's total, rates (values times the side's
// RateFactor, where both are known) or raw values.
type Measure string

const (
	MeasureShare Measure = "share"
	MeasureRate  Measure = "rate"
	MeasureValue Measure = "value"
)

// Node is a frame of a call tree: its value on each side (index 0 base,
// 1 new) in the flame's Unit, inclusive (Total) and its own (Self).
type Node struct {
	Name        string
	Total, Self [2]float64
	// Bucket is the bucket holding most of the node's value (an index
	// into Flame.Buckets); Split, when the value spans several buckets,
	// its value in each, in bucket order.
	Bucket int
	Split  []BucketValue
	// Other, when above 0, is the number of subtrees too narrow to draw
	// that this node merges (a drawing's "other" frame).
	Other    int
	Children []*Node
}

// BucketValue is a node's value in one bucket (an index into
// Flame.Buckets), on each side.
type BucketValue struct {
	Bucket int
	Value  [2]float64
}

// In reports that a flame graph is shown in HTML alone.
func (f *Flame) In(m Medium) bool { return m == HTML }

// ShareUnit is the axis unit (Chart.XUnit, Chart.YUnit) of shares and other
// fractions (0..1): ticks and tooltips read them as percentages ("4.86%").
const ShareUnit = "share"

// Chart is a picture of numbers: shown in HTML alone (as inline SVG).
type Chart struct {
	Title string
	Kind  ChartKind
	// X and Y name the axes; their units, when an amount (see
	// KindAmount), scale the tick labels.
	X, Y         string
	XUnit, YUnit string
	Series       []Series
	// Threshold, when set, is drawn as a line across the Y axis, named
	// ThresholdLabel (a gate's limit).
	Threshold      *float64
	ThresholdLabel string
	// Note is a line of text under the chart.
	Note string
}

// ChartKind is how a chart draws its series.
type ChartKind uint8

const (
	ChartLine ChartKind = iota // points joined by lines, X numeric
	ChartBars                  // a bar per point, X categories (Point.Label), one group per label with a bar per series
	ChartDots                  // a dot per point, X categories (Point.Label): observations
)

// Series is one named line, set of bars or set of dots.
type Series struct {
	Name   string
	Points []Point
}

// Point is one value. Label is its X category (bars and dots) or its
// tooltip; Mark flags it; Link, when set, is where clicking it goes (a
// relative path beside the page).
type Point struct {
	X, Y  float64
	Label string
	Mark  Mark
	Link  string
}

// Mark is what a point shows beyond its value.
type Mark uint8

const (
	MarkNone   Mark = iota
	MarkPeak        // the best point (a sweep's peak)
	MarkFailed      // a point whose run failed or had failed requests
)

// In reports that a chart is shown in HTML alone.
func (c *Chart) In(m Medium) bool { return m == HTML }

// Stacks are the stacks of a call tree, unmerged: Len records, each a
// stack (Frame: indexes into Names, root first; none for samples without
// a stack) and a value on one side (0 base, 1 new) in the flame's Unit.
// One stack may have several records; a writer sums them.
type Stacks interface {
	Len() int
	Names() []string
	// Depth is the number of frames of record i's stack, Frame its
	// k-th (0 the root).
	Depth(i int) int
	Frame(i, k int) int32
	Value(i int) (side int, value float64)
}
