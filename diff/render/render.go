// Package render lays out a report.Report in every output format profdiff
// writes: terminal tables, GitHub-flavoured Markdown, CSV, JSON, the html
// page, and a report's flame graph alone as svg, folded or difffolded
// stacks. It is the only place that formats a number; it never computes
// one.
//
// Shares are printed as percentages with two decimals, deltas in
// percentage points (pp), amounts scaled to a unit people read (4.79 s, 23
// ms, 12 MiB, 12 ms/s, 0.53 cores; the ladders are package diff/units')
// with three significant digits, and a group of cells side by side
// ("0.27% · 12 ms/s"). A delta within sampling noise is followed by "~" in
// the text formats. CSV writes the records' raw values; JSON marshals the
// report's value as it is (a diff's and a top listing's method rows a row
// at a time, see report.Rows).
//
// The table format fits Options.Width (see Write) and colours
// cells by their report.Tone with Options.Color; Markdown, CSV and JSON
// never change with the options. profdiff does the fitting (which column
// narrows, how a name is elided, where text wraps) and the colouring;
// github.com/olekukonko/tablewriter draws the box and the Markdown table
// from the fitted cells, measuring them without their escape codes.
//
// It depends on the report model alone (packages diff/report and
// diff/units, and diff/render/sink, which escapes text from outside for each
// format and imports only the standard library), never on the engine or a
// profile reader: package
// diff/present builds the reports of a diff, a top listing and the rule
// table from the engine's results; the gate, the workload sweeps and the
// load generator build their own; Write lays out any of them.
package render

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/report"
)

// Format is an output format.
type Format string

const (
	Table    Format = "table"
	Markdown Format = "markdown"
	CSV      Format = "csv"
	JSON     Format = "json"
	// HTML is one self-contained page (script and style inline, nothing
	// fetched): the verdict, the tables (sortable, filterable), the charts
	// and the differential flame graph.
	HTML Format = "html"
	// SVG is the differential flame graph alone, a static image.
	SVG Format = "svg"
	// Folded is one side's collapsed stacks ("a;b;c 42"), as FlameGraph,
	// inferno and speedscope read them (Options.FoldedBase picks the side).
	Folded Format = "folded"
	// DiffFolded is both sides' stacks, "a;b;c base new", as FlameGraph's
	// difffolded.pl writes them.
	DiffFolded Format = "difffolded"
	// GitHub is the Markdown format shaped for where GitHub shows it (a
	// pull-request comment, a job summary): the verdict and each table's
	// first rows open, the rest of each table in a <details> block, the
	// whole cut between blocks or whole rows to Options.GitHubLimit bytes
	// with a line saying what was left out.
	GitHub Format = "github"
)

// Formats lists the formats of a report in help order: text, data and the
// page; the picture formats (SVG, Folded, DiffFolded) are only the call
// tree's, in Pictures.
var Formats = []Format{Table, Markdown, CSV, JSON, HTML}

// Tables are the formats that lay out a report's blocks as text or its
// data: every format but the page and the pictures.
var Tables = []Format{Table, Markdown, CSV, JSON}

// Pictures are the formats of a call tree alone (diff and top; DiffFolded
// for a diff only).
var Pictures = []Format{SVG, Folded, DiffFolded}

// CI are the formats shaped for a CI page: GitHub, for the reports that
// have Markdown (diff, top, gate).
var CI = []Format{GitHub}

// ParseFormat reads a format name: table, markdown, csv, json, html, svg,
// folded, difffolded or github.
func ParseFormat(s string) (Format, error) {
	for _, f := range append(append(Formats, Pictures...), CI...) {
		if strings.EqualFold(string(f), s) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want table, markdown, csv, json, html, svg, folded, difffolded or github)", s)
}

// Parts are the parts of a report that format f writes (see Write): a
// builder asked for them alone may leave the rest out.
func (f Format) Parts() report.Parts {
	switch f {
	case CSV:
		return report.PartRecords
	case JSON:
		return report.PartJSON
	}
	return report.PartBlocks
}

// TreeMin is the narrowest subtree the html and svg formats draw, as a
// fraction of a side's total: a call tree built for them (the engine's
// diff.Options.TreeMin) merges narrower ones into an "other" frame per
// parent; the folded formats need every stack.
const TreeMin = 1.0 / 5000

// Options say how the text formats fit the terminal they are shown on.
type Options struct {
	// Width bounds every line of the table format (0: unlimited); long
	// names are shortened by meaning to fit (their parameters, module and
	// namespace go first, their class and method stay; see nameForms), and
	// a table that cannot fit even so is written as a list, one row after
	// another.
	Width int
	// Wide keeps names whole in the table format: a name too wide for its
	// column wraps onto more lines instead of shortening, and a source is
	// named by its path as given rather than its short name (a cell's
	// Whole).
	Wide bool
	// Color marks failures, new rows and growth in the table format.
	Color bool
	// CSVRaw writes CSV text cells as they are, where a spreadsheet would
	// evaluate one starting with =, +, -, @, a tab or a CR as a formula;
	// without it such a cell starts with a quote (see package
	// diff/render/sink). For programs that read the CSV, not spreadsheets.
	CSVRaw bool
	// FoldedBase makes the folded format write the base side's stacks
	// rather than the new side's.
	FoldedBase bool
	// GitHubLimit is the most bytes the github format writes (0:
	// GitHubCommentLimit; at least GitHubMinLimit).
	GitHubLimit int
	// Context, when not nil, stops Write soon after it ends: no byte is
	// written after that, the walks over a call tree stop within a
	// thousand nodes, and Write returns the context's cause. What was
	// written until then is a report cut short.
	Context context.Context
}

// Report writes r in format f with no width limit and no colour (see
// Write).
func Report(w io.Writer, r *report.Report, f Format) error { return Write(w, r, f, Options{}) }

// Write writes r in format f, laid out for o. The table and Markdown
// formats lay out its verdict and blocks, CSV its records and JSON its
// JSON value (with the verdict's sentences, where the value is
// report.Summarized); a report without records or a JSON value has no
// such format, and asking for it is an error. Warnings are never written.
//
// In the table format every line fits o.Width: tables narrow their widest
// name and text columns (a name loses its parameter list, type arguments,
// module and namespace, keeping its class and method; text wraps), a table
// that cannot fit is written as a list, and paragraphs wrap; with o.Color, cells and
// text with a tone are coloured with ANSI escape codes, which never count
// towards the width. Markdown, pasted into issues, is never narrowed or
// coloured; CSV and JSON are data.
func Write(w io.Writer, r *report.Report, f Format, o Options) error {
	if o.Context != nil {
		w = stopWriter{ctx: o.Context, w: w}
	}
	switch f {
	case Table:
		return writeText(w, r, layout{m: report.Terminal, width: o.Width, color: o.Color, wide: o.Wide})
	case Markdown:
		return writeText(w, r, layout{m: report.Markdown})
	case GitHub:
		return writeGitHub(w, r, o.GitHubLimit)
	case CSV:
		if r.Records == nil {
			return fmt.Errorf("this report has no %s form", f)
		}
		return writeCSV(w, r.Records, o.CSVRaw)
	case JSON:
		if r.JSON == nil {
			return fmt.Errorf("this report has no %s form", f)
		}
		v := r.JSON
		if s, ok := v.(report.Summarized); ok && r.Verdict != nil {
			v = s.WithSummary(verdictText(r.Verdict))
		}
		return writeJSON(w, v)
	case HTML:
		return writeHTML(w, r, o)
	case SVG:
		return writeSVG(w, r, stop.New(o.Context))
	case Folded, DiffFolded:
		return writeFolded(w, r, f, o)
	}
	return fmt.Errorf("unknown format %q", f)
}

// writeText lays out the blocks shown in medium m, a blank line between
// two blocks, except that in the terminal a heading sits directly above
// the block it heads and a tight paragraph directly under the block before.
func writeText(w io.Writer, r *report.Report, l layout) error {
	ew := &errWriter{w: w}
	m := l.m
	var prev report.Block
	if v := r.Verdict; v != nil && len(v.Lines) > 0 {
		// The verdict is the report's first paragraph: "Verdict:" (bold in
		// Markdown) and its sentences, in its tone.
		for i, line := range v.Lines {
			out := make(report.Line, 0, len(line)+1)
			if i == 0 {
				out = append(out, report.Text("Verdict:").Bold().WithTone(v.Tone), report.Text(" "))
			}
			for _, c := range line {
				if c.Tone == report.ToneNone {
					c = c.WithTone(v.Tone)
				}
				out = append(out, c)
			}
			l.prose(ew, out)
		}
		prev = report.Para{}
	}
	for _, b := range r.Blocks {
		if !b.In(m) {
			continue
		}
		if prev != nil && !tight(prev, b, m) {
			ew.printf("\n")
		}
		prev = b
		switch b := b.(type) {
		case report.Heading:
			if m == report.Markdown {
				ew.printf("%s ", strings.Repeat("#", max(b.Level, 1)))
			}
			l.prose(ew, b.Line)
		case report.Para:
			for _, line := range b.Lines {
				l.prose(ew, line)
			}
		case *report.Table:
			writeTable(ew, b, l)
		}
	}
	return ew.err
}

// verdictText is a verdict's sentences as the terminal shows them without
// colour, one after the other: the summary a JSON value carries.
func verdictText(v *report.Verdict) string {
	s := make([]string, len(v.Lines))
	for i, l := range v.Lines {
		s[i] = Plain(l)
	}
	return strings.Join(s, " ")
}

func tight(prev, b report.Block, m report.Medium) bool {
	if m != report.Terminal {
		return false
	}
	if _, ok := prev.(report.Heading); ok {
		return true
	}
	p, ok := b.(report.Para)
	return ok && p.Tight
}

// prose writes a line of text: in Markdown as it is, in the terminal
// wrapped at the width and coloured by tone, with the whole forms of its
// cells (report.Cell.Whole) where names are kept whole.
func (l layout) prose(ew *errWriter, text report.Line) {
	if l.m == report.Markdown {
		ew.printf("%s\n", line(proseCode(text), l.m))
		return
	}
	if l.wide {
		text = wholeCells(text)
	}
	for _, s := range wrapStyled(prose(text), l.width) {
		ew.printf("%s\n", s.String(l.color))
	}
}

// wholeCells is text with each cell that has a whole form (a source's
// full path, see report.Cell.Whole) showing it.
func wholeCells(text report.Line) report.Line {
	out := make(report.Line, len(text))
	for i, c := range text {
		if c.Whole != "" {
			c.Text = c.Whole
		}
		out[i] = c
	}
	return out
}

// writeCSV writes the records: the column names as the header, then each
// row's raw values, text that a spreadsheet would evaluate quoted unless
// keep (see csvCell).
func writeCSV(w io.Writer, t *report.Table, keep bool) error {
	cw := csv.NewWriter(w)
	rec := make([]string, 0, len(t.Columns))
	for _, c := range t.Columns {
		rec = append(rec, c.Name)
	}
	_ = cw.Write(rec)
	for _, cells := range t.Rows {
		rec = rec[:0]
		for _, c := range cells {
			rec = append(rec, csvCell(c, keep))
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// stopWriter writes to w until ctx ends, then fails with its cause.
type stopWriter struct {
	ctx context.Context
	w   io.Writer
}

func (s stopWriter) Write(p []byte) (int, error) {
	if err := stop.Now(s.ctx); err != nil {
		return 0, err
	}
	return s.w.Write(p)
}

type errWriter struct {
	w   io.Writer
	err error
}

// Write lets tablewriter draw into the report; after the first error it
// writes nothing.
func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	var n int
	n, e.err = e.w.Write(p)
	return n, e.err
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
