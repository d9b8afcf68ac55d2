package render

import (
	"strings"

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

// writeTable lays out t: box drawing in the terminal, pipes in Markdown.
func writeTable(ew *errWriter, t *report.Table, l layout) {
	g := newGrid(t, l.m)
	if l.m == report.Markdown {
		g.markdown(ew)
		return
	}
	g.fit(l.width)
	ew.printf("%s\n", g.rule("┌", "┬", "┐"))
	header := make([]string, len(t.Columns))
	for c, col := range t.Columns {
		header[c] = pad(col.Name, g.width[c], col.Align)
	}
	ew.printf("│ %s │\n", strings.Join(header, " │ "))
	ew.printf("%s\n", g.rule("├", "┼", "┤"))
	for r, row := range t.Rows {
		cells := make([][]string, len(row))
		height := 1
		for c := range row {
			cells[c] = g.lines(r, c)
			height = max(height, len(cells[c]))
		}
		for i := range height {
			out := make([]string, len(row))
			for c, cell := range row {
				s := ""
				if i < len(cells[c]) {
					s = cells[c][i]
				}
				out[c] = paint(pad(s, g.width[c], t.Columns[c].Align), width(s), cell.Tone, t.Columns[c].Align, l.color)
			}
			ew.printf("│ %s │\n", strings.Join(out, " │ "))
		}
	}
	ew.printf("%s\n", g.rule("└", "┴", "┘"))
}

func (g *grid) rule(left, mid, right string) string {
	parts := make([]string, len(g.width))
	for c, w := range g.width {
		parts[c] = strings.Repeat("─", w+2)
	}
	return left + strings.Join(parts, mid) + right
}

// markdown writes the grid as a GitHub table, every cell whole.
func (g *grid) markdown(ew *errWriter) {
	row := func(cells []string) {
		for c, s := range cells {
			cells[c] = pad(s, g.width[c], g.t.Columns[c].Align)
		}
		ew.printf("| %s |\n", strings.Join(cells, " | "))
	}
	header := make([]string, len(g.width))
	for c, col := range g.t.Columns {
		header[c] = col.Name
	}
	row(header)
	seps := make([]string, len(g.width))
	for c, w := range g.width {
		if g.t.Columns[c].Align == report.AlignRight {
			seps[c] = strings.Repeat("-", w+1) + ":"
		} else {
			seps[c] = ":" + strings.Repeat("-", w+1)
		}
	}
	ew.printf("|%s|\n", strings.Join(seps, "|"))
	for _, cells := range g.text {
		row(append([]string(nil), cells...))
	}
}

// pad fills s with spaces to w columns on the side alignment a leaves.
func pad(s string, w int, a report.Align) string {
	n := max(w-width(s), 0)
	if a == report.AlignRight {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}
