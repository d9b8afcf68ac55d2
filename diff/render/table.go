package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/profdiff/profdiff/diff/render/sink"
	"github.com/profdiff/profdiff/diff/report"
)

// Narrowest widths a cell is made to fit a width: a name keeps its method
// whole up to minName columns (see nameForms), a wrapped word minWord
// before it is broken, a value's note minNote.
const (
	minName = 32
	minWord = 20
	minNote = 10
)

// layout is how the text formats are laid out: the medium, and in the
// terminal the width (0: unlimited), whether to colour and whether names
// wrap whole rather than shorten (wide).
type layout struct {
	m     report.Medium
	width int
	color bool
	wide  bool
}

// grid is a table's cells as text: one string per cell, before fitting.
type grid struct {
	t      *report.Table
	text   [][]string
	width  []int
	min    []int  // the narrowest each column can be made
	fair   []int  // the width a name column keeps while others narrow: its classes and methods
	names  []bool // the column holds names that are shortened to fit
	groups []bool // the column holds share · rate groups that stack to fit
	wide   bool   // names wrap whole
	// ambiguous are the name cells whose shortened form another name
	// of their column shortens to as well: they wrap whole instead.
	ambiguous map[[2]int]bool
}

// markAmbiguous finds, once the widths are fitted, the names that would
// read the same shortened as another name of their column (Wait(…) of
// two classes), so that lines shows them whole.
func (g *grid) markAmbiguous() {
	for c := range g.width {
		if !g.names[c] {
			continue
		}
		shown := map[string][]int{}
		for r := range g.t.Rows {
			if cell := g.cell(r, c); cell.Kind == report.KindCode && !cell.Wrap && width(g.text[r][c]) > g.width[c] {
				e := elideName(g.text[r][c], cell.Params, g.width[c])
				shown[e] = append(shown[e], r)
			}
		}
		for r := range g.t.Rows {
			if cell := g.cell(r, c); cell.Kind == report.KindCode && !cell.Wrap && width(g.text[r][c]) <= g.width[c] {
				if rows, ok := shown[g.text[r][c]]; ok {
					shown[g.text[r][c]] = append(rows, r)
				}
			}
		}
		for e, rows := range shown {
			whole := map[string]bool{}
			for _, r := range rows {
				whole[g.text[r][c]] = true
			}
			for _, r := range rows {
				if len(whole) > 1 && g.text[r][c] != e {
					if g.ambiguous == nil {
						g.ambiguous = map[[2]int]bool{}
					}
					g.ambiguous[[2]int{r, c}] = true
				}
			}
		}
	}
}

// cell is cell (r, c) as laid out: with wide, a name wraps whole.
func (g *grid) cell(r, c int) report.Cell {
	cell := g.t.Rows[r][c]
	if g.wide && cell.Kind == report.KindCode {
		cell.Wrap = true
	}
	return cell
}

// newGrid formats every cell, aligning the parts of group cells within
// their column ("0.27% ·  12 ms/s" over "4.86% · 310 ms/s").
// With wide, names wrap whole (see report.Cell.Wrap) instead of shortening.
func newGrid(t *report.Table, m report.Medium, wide bool) *grid {
	g := &grid{t: t, text: make([][]string, len(t.Rows)), width: make([]int, len(t.Columns)),
		min: make([]int, len(t.Columns)), fair: make([]int, len(t.Columns)),
		names: make([]bool, len(t.Columns)), groups: make([]bool, len(t.Columns)), wide: wide}
	for c, col := range t.Columns {
		// A header wraps at its spaces ("base" over "(goroutines)").
		g.width[c], g.min[c] = width(col.Name), longestWord(col.Name)
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
		for r := range t.Rows {
			if g.text[r] == nil {
				g.text[r] = make([]string, len(t.Columns))
			}
			cell := g.cell(r, c)
			s := line(report.Line{cell}, m)
			if w := partW[len(cell.Parts)]; cell.Kind == report.KindGroup && cell.Markdown == nil && w != nil {
				s = alignedGroup(cell, w, m)
			}
			g.text[r][c] = s
			g.width[c] = max(g.width[c], width(s))
			g.min[c] = max(g.min[c], minWidth(cell, s, m))
			if orig := t.Rows[r][c]; orig.Kind == report.KindCode && !orig.Wrap {
				// A name (not a pattern): whole with wide, else its
				// class and method, is what the column keeps longest.
				g.names[c] = true
				fair := width(s)
				if !wide {
					forms := nameForms(s, cell.Params)
					fair = width(forms[max(len(forms)-2, 0)])
				}
				g.fair[c] = max(g.fair[c], min(fair, comfortName))
			}
			g.groups[c] = g.groups[c] || cell.Kind == report.KindGroup && cell.Markdown == nil
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
// shortened to its method (up to minName), text wrapped at its widest
// piece (up to minWord), a value's note wrapped under it (at most
// minNote); other values are whole.
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
		forms := nameForms(s, c.Params)
		return min(width(forms[len(forms)-1]), minName)
	case c.Kind == report.KindCode || c.Kind == report.KindText || c.Kind == report.KindPhrase:
		return min(longestPiece(s), minWord)
	case c.Note != "" || c.Relative != nil:
		c.Note, c.Relative = "", nil
		return max(width(human(c, m)), min(longestPiece(s), minNote))
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

// longestPiece is the width of the widest piece wrapping leaves of s
// when every word may break after a separator (see breakAfter).
func longestPiece(s string) int {
	w, n := 0, 0
	for _, r := range s {
		switch {
		case r == ' ':
			n = 0
		case strings.ContainsRune(breakAfter, r):
			w, n = max(w, n+1), 0
		default:
			n += runeWidth(r)
			w = max(w, n)
		}
	}
	return w
}

// fit narrows columns until a box-drawn table is at most w wide, so that
// names keep their classes and methods, and numbers stay whole, as long as
// they can: first names, down to their classes and methods (fair); then
// columns of share · rate groups stack their parts; then the other
// columns narrow to their minimum (text and notes wrap); last names, to
// their methods. Each step narrows the widest column first, a column
// at a time, where a name column counts two thirds of its width, since
// names lose more. It reports whether the table fits w (w ≤ 0: no limit).
func (g *grid) fit(w int) bool {
	if w <= 0 {
		return true
	}
	total := 1 + 3*len(g.width)
	for _, cw := range g.width {
		total += cw
	}
	whole := append([]int(nil), g.width...)
	total = g.narrow(total, w, func(c int) int {
		if g.names[c] {
			return max(g.min[c], min(g.fair[c], g.width[c]))
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
	total = g.narrow(total, w, func(c int) int {
		if g.names[c] {
			return max(g.min[c], min(g.fair[c], g.width[c]))
		}
		return g.min[c]
	})
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
	return total <= w
}

// comfortName is the most a name column keeps while other columns
// narrow: enough for a type and a method.
const comfortName = 40

// narrow narrows columns a column at a time, the widest first (names
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
	cell := g.cell(r, c)
	switch {
	case cell.Kind == report.KindCode && !cell.Wrap && !g.ambiguous[[2]int{r, c}]:
		return []string{elideName(s, cell.Params, w)}
	case cell.Kind == report.KindGroup && cell.Markdown == nil:
		return stack(s, w)
	case cell.Kind == report.KindCode && g.t.Rows[r][c].Wrap:
		// A pattern, not a name: its dots are not where it reads apart.
		return wrapSeps(s, w, "")
	}
	return wrap(s, w)
}

// writeList writes a table that does not fit the width even at its
// columns' minimum as a list, after a line that says so: each row's first
// cell on a line of its own (a name shortened to fit), then its other
// cells as "Column value", indented, wrapped and in their tones.
func writeList(ew *errWriter, g *grid, l layout) {
	t := g.t
	need := 1 + 3*len(g.min)
	for _, m := range g.min {
		need += m
	}
	l.prose(ew, report.Line{report.Text(fmt.Sprintf("(the table below needs %d columns and has %d, so each row is listed)", need, l.width))})
	indent := "  "
	for r := range t.Rows {
		head := g.text[r][0]
		cell := g.cell(r, 0)
		heads := wrap(head, l.width)
		if cell.Kind == report.KindCode && !cell.Wrap {
			heads = []string{elideName(head, cell.Params, l.width)}
		}
		for _, h := range heads {
			ew.printf("%s\n", paint(h, width(h), cell.Tone, report.AlignLeft, l.color))
		}
		// Each "Column value" stays on one line where it fits one.
		var cur styled
		curW := 0
		flush := func() {
			if len(cur) > 0 {
				ew.printf("%s%s\n", indent, cur.String(l.color))
			}
			cur, curW = nil, 0
		}
		for c := 1; c < len(t.Columns); c++ {
			text := strings.TrimSpace(g.text[r][c])
			if text == "" {
				continue
			}
			pair := styled{{text: t.Columns[c].Name + " "}, {text: text, tone: g.cell(r, c).Tone}}
			pw := width(t.Columns[c].Name) + 1 + width(text)
			if curW > 0 && curW+2+pw > l.width-len(indent) {
				flush()
			}
			if curW > 0 {
				cur, curW = append(cur, run{text: "  "}), curW+2
			}
			if curW == 0 && pw > l.width-len(indent) {
				for _, s := range wrapStyled(pair, l.width-len(indent)) {
					ew.printf("%s%s\n", indent, s.String(l.color))
				}
				continue
			}
			cur, curW = append(cur, pair...), curW+pw
		}
		flush()
	}
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
	g := newGrid(t, l.m, l.wide)
	md := l.m == report.Markdown
	if !md && !g.fit(l.width) {
		writeList(ew, g, l)
		return
	}
	var shortened [][2]string
	if md {
		shortened = g.fitMarkdown(markdownWidth)
	} else {
		g.markAmbiguous()
	}
	header := make([]string, len(t.Columns))
	align := make(tw.Alignment, len(t.Columns))
	widths := tw.NewMapper[int, int]()
	for c, col := range t.Columns {
		header[c], align[c] = col.Name, tw.AlignLeft
		if !md && width(col.Name) > g.width[c] {
			header[c] = strings.Join(wrapSeps(col.Name, g.width[c], ""), "\n")
		}
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
	writeFullNames(ew, shortened)
}

// markdownWidth is the longest line a Markdown table is made to fit:
// what a GitHub pull request comment shows without scrolling sideways.
const markdownWidth = 120

// fitMarkdown shortens the names of a Markdown table (see nameForms)
// until its lines fit w, where the other columns leave room: a name keeps
// at least its method, or, where even that is too wide, the end of it
// after "…" (markdownTail); two names never shorten to the same text. It
// returns each name shortened and its whole form, in row order.
func (g *grid) fitMarkdown(w int) [][2]string {
	total, k := 1, 0
	for c, cw := range g.width {
		if g.names[c] {
			k++
			total += 3
			continue
		}
		total += cw + 3
	}
	if k == 0 {
		return nil
	}
	// Where the other columns leave no room, each name takes its
	// shortest form, not its whole one.
	room := max(w-total, 0) / k
	var out [][2]string
	for c := range g.width {
		if !g.names[c] {
			continue
		}
		type choice struct {
			forms []string
			at    int
		}
		rows := make([]choice, len(g.t.Rows))
		for r := range g.t.Rows {
			cell := g.t.Rows[r][c]
			if cell.Kind != report.KindCode || cell.Wrap || cell.Markdown != nil {
				continue
			}
			forms := nameForms(sink.Cut(cell.Text, sink.MaxName), cell.Params)
			if cut, ok := markdownTail(forms[len(forms)-1], room); ok {
				forms = append(forms, cut)
			}
			at := len(forms) - 1
			for i, f := range forms {
				if width(MarkdownCode(f)) <= room {
					at = i
					break
				}
			}
			rows[r] = choice{forms, at}
		}
		// Where two names read the same, both take a longer form.
		for again := true; again; {
			again = false
			seen := map[string]int{}
			for r, ch := range rows {
				if ch.forms == nil {
					continue
				}
				text := ch.forms[ch.at]
				o, dup := seen[text]
				if !dup {
					seen[text] = r
					continue
				}
				if rows[o].forms[0] == ch.forms[0] {
					continue // the same name twice
				}
				for _, i := range []int{o, r} {
					if rows[i].at > 0 {
						rows[i].at--
						again = true
					}
				}
			}
		}
		g.width[c] = width(g.t.Columns[c].Name)
		for r, ch := range rows {
			if ch.forms != nil && ch.at > 0 {
				g.text[r][c] = MarkdownCode(ch.forms[ch.at])
				out = append(out, [2]string{ch.forms[ch.at], g.t.Rows[r][c].Text})
			}
			g.width[c] = max(g.width[c], width(g.text[r][c]))
		}
	}
	return out
}

// minMarkdownTail is the narrowest column a name is cut to fit: a
// shorter tail tells too little.
const minMarkdownTail = 12

// markdownTail is name's shortest form cut to its end, after "…", to fit
// a column of room (its code span's backticks included), when the form
// alone does not fit and room is at least minMarkdownTail: the end keeps
// the method, which nameForms keeps to the last too. The whole name is
// listed under the table.
func markdownTail(shortest string, room int) (string, bool) {
	if room < minMarkdownTail || width(MarkdownCode(shortest)) <= room {
		return "", false
	}
	for w := room - 3; w > 0; w-- {
		if t := "…" + tailWidth(shortest, w); width(MarkdownCode(t)) <= room {
			return t, true
		}
	}
	return "", false
}

// writeFullNames writes after a Markdown table the whole names of those
// it shortened, folded in a <details> block that GitHub shows closed.
func writeFullNames(ew *errWriter, names [][2]string) {
	if len(names) == 0 {
		return
	}
	ew.printf("\n<details><summary>Full names</summary>\n\n")
	for _, n := range names {
		ew.printf("- %s\n", line(proseCode(report.Line{report.Code(n[0]), report.Text(": "), report.Code(n[1])}), report.Markdown))
	}
	ew.printf("\n</details>\n")
}

// newTable returns a table for the terminal (box drawing) or Markdown
// (pipes) with columns of the given widths (padding included), headers
// kept as written and cells as profdiff fitted them: no formatting,
// wrapping or trimming of its own. tablewriter pads cells by its own
// measure of a rune's columns (twwidth), which agrees with width's for
// wide, fullwidth and zero-width runes; its East Asian setting, which
// twwidth otherwise picks from the locale and which would count
// ambiguous runes ("…", "·") two, is off as it is for width. Every
// profdiff table is made here, so all of them look alike.
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
