package render

import (
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/profdiff/profdiff/diff/report"
)

// Narrowest widths a cell is made to fit a width: an elided name keeps
// minName columns (narrower, it no longer says what it was), a wrapped
// word minWord before it is cut.
const (
	minName = 20
	minWord = 20
)

// layout is how the text formats are laid out: the medium, and in the
// terminal the width (0: unlimited) and whether to colour.
type layout struct {
	m     report.Medium
	width int
	color bool
}

// grid is a table's cells as text: one string per cell, before fitting.
type grid struct {
	t     *report.Table
	text  [][]string
	width []int
	min   []int  // the narrowest each column can be made
	names []bool // the column holds names that are elided to fit
}

// newGrid formats every cell, aligning the parts of group cells within
// their column ("0.27% ·  12 ms/s" over "4.86% · 310 ms/s").
func newGrid(t *report.Table, m report.Medium) *grid {
	g := &grid{t: t, text: make([][]string, len(t.Rows)), width: make([]int, len(t.Columns)),
		min: make([]int, len(t.Columns)), names: make([]bool, len(t.Columns))}
	for c, col := range t.Columns {
		g.width[c], g.min[c] = width(col.Name), width(col.Name)
	}
	for c := range t.Columns {
		partW := map[int][]int{} // per part count, the widest of each part
		for _, row := range t.Rows {
			if p := row[c].Parts; row[c].Kind == report.KindGroup && row[c].Markdown == nil {
				w := partW[len(p)]
				if w == nil {
					w = make([]int, len(p))
					partW[len(p)] = w
				}
				for i, part := range p {
					w[i] = max(w[i], width(human(part, m)))
				}
			}
		}
		for r, row := range t.Rows {
			if g.text[r] == nil {
				g.text[r] = make([]string, len(t.Columns))
			}
			s := line(report.Line{row[c]}, m)
			if w := partW[len(row[c].Parts)]; row[c].Kind == report.KindGroup && row[c].Markdown == nil && w != nil {
				s = alignedGroup(row[c], w, m)
			}
			g.text[r][c] = s
			g.width[c] = max(g.width[c], width(s))
			g.min[c] = max(g.min[c], minWidth(row[c], s, m))
			g.names[c] = g.names[c] || row[c].Kind == report.KindCode && !row[c].Wrap
		}
	}
	return g
}

// alignedGroup is a group cell with each part right-aligned to w.
func alignedGroup(c report.Cell, w []int, m report.Medium) string {
	parts := make([]string, len(c.Parts))
	for i, p := range c.Parts {
		parts[i] = pad(human(p, m), w[i], report.AlignRight)
	}
	s := strings.Join(parts, " · ")
	return human(report.Cell{Kind: report.KindText, Text: s, Note: c.Note, Relative: c.Relative}, m)
}

// minWidth is the narrowest cell c (shown as s) can be made: a name
// elided to minName, text wrapped at its longest word (up to minWord), a
// value's note wrapped under it; other values are whole.
func minWidth(c report.Cell, s string, m report.Medium) int {
	switch {
	case c.Kind == report.KindCode && !c.Wrap:
		return min(width(s), minName)
	case c.Kind == report.KindCode || c.Kind == report.KindText:
		return min(longestWord(s), minWord)
	case c.Note != "" || c.Relative != nil:
		c.Note, c.Relative = "", nil
		return max(width(human(c, m)), longestWord(s))
	}
	return width(s)
}

func longestWord(s string) int {
	w := 0
	for _, f := range strings.Fields(s) {
		w = max(w, width(f))
	}
	return w
}

// fit narrows columns, a character at a time, until a box-drawn table is
// at most w wide or none can narrow further: the widest first, where a
// name column counts two thirds of its width, since names lose more.
func (g *grid) fit(w int) {
	if w <= 0 {
		return
	}
	total := 1 + 3*len(g.width)
	for _, cw := range g.width {
		total += cw
	}
	for total > w {
		best, bestW := -1, 0
		for c, cw := range g.width {
			if cw <= g.min[c] {
				continue
			}
			if g.names[c] {
				cw = cw * 2 / 3
			}
			if best < 0 || cw > bestW {
				best, bestW = c, cw
			}
		}
		if best < 0 {
			return
		}
		g.width[best]--
		total--
	}
}

// lines is cell (r, c) as the lines it takes in its column: a name too
// wide elided, text (and names marked Wrap) wrapped.
func (g *grid) lines(r, c int) []string {
	s, w := g.text[r][c], g.width[c]
	if width(s) <= w {
		return []string{s}
	}
	if cell := g.t.Rows[r][c]; cell.Kind == report.KindCode && !cell.Wrap {
		return []string{ElideName(s, w)}
	}
	return wrap(s, w)
}

// writeTable lays out t with tablewriter: box drawing in the terminal,
// a GitHub table in Markdown. profdiff fits the cells (see fit and lines)
// and paints them; tablewriter draws them as they are, at the fitted
// widths, measuring without the escape codes.
func writeTable(ew *errWriter, t *report.Table, l layout) {
	g := newGrid(t, l.m)
	md := l.m == report.Markdown
	if !md {
		g.fit(l.width)
	}
	header := make([]string, len(t.Columns))
	align := make(tw.Alignment, len(t.Columns))
	widths := tw.NewMapper[int, int]()
	for c, col := range t.Columns {
		header[c], align[c] = col.Name, tw.AlignLeft
		if col.Align == report.AlignRight {
			align[c] = tw.AlignRight
		}
		widths.Set(c, g.width[c]+2) // the cell and its padding
	}
	rows := make([][]string, len(t.Rows))
	for r, row := range t.Rows {
		rows[r] = make([]string, len(row))
		for c, cell := range row {
			if md {
				rows[r][c] = g.text[r][c] // Markdown cells stay whole
				continue
			}
			lines := g.lines(r, c)
			for i, s := range lines {
				lines[i] = paint(s, width(s), cell.Tone, t.Columns[c].Align, l.color)
			}
			rows[r][c] = strings.Join(lines, "\n")
		}
	}
	if ew.err != nil {
		return
	}
	tt := newTable(ew, md, header, align, widths)
	if err := tt.Bulk(rows); err != nil {
		ew.err = err
		return
	}
	if err := tt.Render(); err != nil && ew.err == nil {
		ew.err = err
	}
}

// newTable returns a table for the terminal (box drawing) or Markdown
// (pipes) with columns of the given widths (padding included), headers
// kept as written and cells as profdiff fitted them: no formatting,
// wrapping or trimming of its own, and characters measured one column
// each, as width measures them for the fitting (East Asian wide measures,
// which twwidth picks from the locale, would misalign the cells with the
// widths fit chose). Every profdiff table is made here, so all of them
// look alike.
func newTable(w io.Writer, md bool, header []string, align tw.Alignment, widths tw.Mapper[int, int]) *tablewriter.Table {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithAlignment(align),
		tablewriter.WithColumnWidths(widths),
		tablewriter.WithEastAsian(tw.Off),
	}
	if md {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	return t
}

// pad fills s with spaces to w columns on the side alignment a leaves.
func pad(s string, w int, a report.Align) string {
	n := max(w-width(s), 0)
	if a == report.AlignRight {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}
