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
	t      *report.Table
	text   [][]string
	width  []int
	min    []int  // the narrowest each column can be made
	names  []bool // the column holds names that are elided to fit
	groups []bool // the column holds share · rate groups that stack to fit
}

// newGrid formats every cell, aligning the parts of group cells within
// their column ("0.27% ·  12 ms/s" over "4.86% · 310 ms/s").
func newGrid(t *report.Table, m report.Medium) *grid {
	g := &grid{t: t, text: make([][]string, len(t.Rows)), width: make([]int, len(t.Columns)),
		min: make([]int, len(t.Columns)), names: make([]bool, len(t.Columns)), groups: make([]bool, len(t.Columns))}
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
			g.groups[c] = g.groups[c] || row[c].Kind == report.KindGroup && row[c].Markdown == nil
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
	case c.Kind == report.KindGroup && c.Markdown == nil:
		// Parts stack one over another when the group does not fit.
		w := longestWord(s)
		for _, p := range c.Parts {
			w = max(w, width(human(p, m)))
		}
		return w
	case c.Kind == report.KindCode && !c.Wrap:
		return min(width(s), minName)
	case c.Kind == report.KindCode || c.Kind == report.KindText || c.Kind == report.KindPhrase:
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

// fit narrows columns until a box-drawn table is at most w wide or none
// can narrow further, in three steps, so that names stay readable and
// numbers whole as long as they can: first names, down to comfortName
// only; then columns of share · rate groups stack their
// parts (the widest column first); last everything down to its minimum.
// Each step narrows the widest column first, a character at a time, where
// a name column counts two thirds of its width, since names lose more.
func (g *grid) fit(w int) {
	if w <= 0 {
		return
	}
	total := 1 + 3*len(g.width)
	for _, cw := range g.width {
		total += cw
	}
	whole := append([]int(nil), g.width...)
	total = g.narrow(total, w, func(c int) int {
		if g.names[c] {
			return max(g.min[c], min(comfortName, g.width[c]))
		}
		return g.width[c]
	})
	if total > w {
		// Stack every group column, not only the widest, so the
		// table's numbers read alike.
		for c := range g.width {
			if g.groups[c] {
				total -= g.width[c] - g.min[c]
				g.width[c] = g.min[c]
			}
		}
	}
	total = g.narrow(total, w, func(c int) int { return g.min[c] })
	// What stacking freed beyond the need goes back to names, then to
	// the rest, up to their whole widths.
	for _, names := range []bool{true, false} {
		for c := range g.width {
			if g.names[c] == names && total < w && g.width[c] < whole[c] {
				grow := min(w-total, whole[c]-g.width[c])
				g.width[c] += grow
				total += grow
			}
		}
	}
}

// comfortName is the width a name column keeps until numbers have
// stacked: enough for a package, a type and a method.
const comfortName = 36

// narrow narrows columns a character at a time, the widest first (names
// at two thirds), none below floor(c), until total is at most w; it
// returns the new total.
func (g *grid) narrow(total, w int, floor func(c int) int) int {
	for total > w {
		best, bestW := -1, 0
		for c, cw := range g.width {
			if cw <= floor(c) {
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
			return total
		}
		g.width[best]--
		total--
	}
	return total
}

// lines is cell (r, c) as the lines it takes in its column: a name too
// wide elided, text (and names marked Wrap) wrapped.
func (g *grid) lines(r, c int) []string {
	s, w := g.text[r][c], g.width[c]
	if width(s) <= w {
		return []string{s}
	}
	cell := g.t.Rows[r][c]
	switch {
	case cell.Kind == report.KindCode && !cell.Wrap:
		return []string{elideName(s, cell.Params, w)}
	case cell.Kind == report.KindGroup && cell.Markdown == nil:
		return stack(s, w)
	}
	return wrap(s, w)
}

// stack is a group cell too wide for w as its parts one under another
// ("14.47%" over "1.05 goroutines"), each wrapped if still too wide.
func stack(s string, w int) []string {
	var out []string
	for _, p := range strings.Split(s, " · ") {
		out = append(out, wrap(strings.TrimSpace(p), w)...)
	}
	return out
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
