package render

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/report"
)

// GitHub's limits on the Markdown it shows.
const (
	// GitHubCommentLimit is the most characters an issue or pull-request
	// comment holds: the github format's default limit.
	GitHubCommentLimit = 65536
	// GitHubSummaryLimit is the most bytes a step's job summary
	// ($GITHUB_STEP_SUMMARY) holds.
	GitHubSummaryLimit = 1 << 20
	// GitHubMinLimit is the smallest limit the github format accepts: room
	// for a verdict and the line saying what was left out.
	GitHubMinLimit = 1024
)

// githubTopRows is how many rows of a table the github format shows
// open; the rest of the table sits in a <details> block under it. Ten
// rows are what a reader scans in a comment without scrolling.
const githubTopRows = 10

// githubCutRoom is the bytes kept free for the line that says what was
// left out.
const githubCutRoom = 256

// writeGitHub writes r as the Markdown format lays it out, shaped for
// GitHub (see GitHub): the verdict and each table's first rows open,
// the rest of a table in a <details> block, and at most limit bytes
// (GitHubCommentLimit when limit is 0), cut between blocks or between
// whole rows of a table, never inside a row, with a last line saying
// what was left out. Bytes are counted: a character is at least one, so
// the output fits both GitHub limits it is given.
func writeGitHub(w io.Writer, r *report.Report, limit int) error {
	if limit <= 0 {
		limit = GitHubCommentLimit
	}
	if limit < GitHubMinLimit {
		return fmt.Errorf("github format: limit %d is below the smallest, %d bytes", limit, GitHubMinLimit)
	}
	pieces, err := githubPieces(r)
	if err != nil {
		return err
	}
	var out strings.Builder
	budget := limit - githubCutRoom
	var cut githubCut
	for i, p := range pieces {
		sep := ""
		if out.Len() > 0 {
			sep = "\n"
		}
		s, err := p.render(len(p.rows()))
		if err != nil {
			return err
		}
		if out.Len()+len(sep)+len(s) <= budget || i == len(pieces)-1 && out.Len()+len(sep)+len(s) <= limit {
			out.WriteString(sep + s)
			continue
		}
		// The first piece that does not fit: as many of its whole rows
		// as fit, then nothing more.
		if n, s, err := p.fit(budget - out.Len() - len(sep)); err != nil {
			return err
		} else if n > 0 {
			out.WriteString(sep + s)
			cut.add(p, len(p.rows())-n)
		} else {
			cut.add(p, -1)
		}
		for _, rest := range pieces[i+1:] {
			cut.add(rest, -1)
		}
		break
	}
	if !cut.empty() {
		if out.Len() > 0 {
			out.WriteString("\n")
		}
		out.WriteString(cut.line(limit))
	}
	_, err = io.WriteString(w, out.String())
	return err
}

// githubPiece is one block of the github format as written: a verdict,
// heading or paragraph (whole), or part of a table (whole rows), open or
// in a <details> block.
type githubPiece struct {
	block   report.Block
	table   *report.Table // when the piece is rows of a table
	from    int           // the table's first row in the piece
	to      int           // one past its last
	details bool          // the rows sit in a <details> block
}

func (p githubPiece) rows() [][]report.Cell {
	if p.table == nil {
		return nil
	}
	return p.table.Rows[p.from:p.to]
}

// githubPieces cuts r into the pieces the github format writes, in order.
func githubPieces(r *report.Report) ([]githubPiece, error) {
	var ps []githubPiece
	if r.Verdict != nil && len(r.Verdict.Lines) > 0 {
		ps = append(ps, githubPiece{block: verdictBlock{r.Verdict}})
	}
	for _, b := range r.Blocks {
		if !b.In(report.Markdown) {
			continue
		}
		t, ok := b.(*report.Table)
		if !ok {
			ps = append(ps, githubPiece{block: b})
			continue
		}
		open := min(len(t.Rows), githubTopRows)
		ps = append(ps, githubPiece{table: t, to: open})
		if open < len(t.Rows) {
			ps = append(ps, githubPiece{table: t, from: open, to: len(t.Rows), details: true})
		}
	}
	return ps, nil
}

// verdictBlock stands for the report's verdict among the pieces.
type verdictBlock struct{ v *report.Verdict }

func (verdictBlock) In(report.Medium) bool { return true }

// render is the piece as Markdown with its first n rows (all of a
// piece that is not a table), ending in a newline.
func (p githubPiece) render(n int) (string, error) {
	var b strings.Builder
	r := &report.Report{}
	switch {
	case p.table != nil:
		t := *p.table
		t.Rows = p.table.Rows[p.from : p.from+n]
		r.Blocks = []report.Block{&t}
	default:
		if v, ok := p.block.(verdictBlock); ok {
			r.Verdict = v.v
		} else {
			r.Blocks = []report.Block{p.block}
		}
	}
	if p.details {
		fmt.Fprintf(&b, "<details><summary>%s more %s of the %s table</summary>\n\n", ghThousands(n), ghPlural(n, "row", "rows"), githubTableName(p.table))
	}
	if err := writeText(&b, r, layout{m: report.Markdown}); err != nil {
		return "", err
	}
	if p.details {
		b.WriteString("\n</details>\n")
	}
	return b.String(), nil
}

// fit is the most rows of the piece, and their Markdown, that fit in
// room bytes (0 and "" for a piece that is not a table or where no row
// fits). A table's Markdown grows with its rows, so a binary search
// finds the count in a few renderings.
func (p githubPiece) fit(room int) (int, string, error) {
	if p.table == nil {
		return 0, "", nil
	}
	var err error
	n := sort.Search(len(p.rows())+1, func(k int) bool {
		if k == 0 || err != nil {
			return false
		}
		var s string
		s, err = p.render(k)
		return len(s) > room
	}) - 1
	if err != nil || n <= 0 {
		return 0, "", err
	}
	s, err := p.render(n)
	return n, s, err
}

// githubTableName names a table by its first column's header.
func githubTableName(t *report.Table) string {
	if len(t.Columns) == 0 || t.Columns[0].Name == "" {
		return "last"
	}
	return Plain(report.Line{report.Text(t.Columns[0].Name)})
}

// githubCut counts what the github format left out.
type githubCut struct {
	rows   int            // table rows
	tables map[string]int // rows left out, by table name
	names  []string       // the tables, in order
	blocks int            // headings, paragraphs and verdicts
}

// add counts piece p as left out: rows of its rows (all of them when
// rows < 0).
func (c *githubCut) add(p githubPiece, rows int) {
	if p.table == nil {
		c.blocks++
		return
	}
	if rows < 0 {
		rows = len(p.rows())
	}
	if rows == 0 {
		return
	}
	if c.tables == nil {
		c.tables = map[string]int{}
	}
	name := githubTableName(p.table)
	if _, ok := c.tables[name]; !ok {
		c.names = append(c.names, name)
	}
	c.tables[name] += rows
	c.rows += rows
}

func (c *githubCut) empty() bool { return c.rows == 0 && c.blocks == 0 }

// line is the last line of a cut report: what was left out, and why.
func (c *githubCut) line(limit int) string {
	var parts []string
	for _, n := range c.names {
		k := c.tables[n]
		parts = append(parts, fmt.Sprintf("%s %s of the %s table", ghThousands(k), ghPlural(k, "row", "rows"), n))
	}
	if c.blocks > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", c.blocks, ghPlural(c.blocks, "heading or paragraph", "headings or paragraphs")))
	}
	return fmt.Sprintf("_Cut to fit GitHub's limit of %s bytes: left out %s. The markdown format has the whole report._\n",
		ghThousands(limit), ghJoinAnd(parts))
}

func ghPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ghThousands writes n with comma separators: 65,536.
func ghThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ghJoinAnd joins words as "a, b and c".
func ghJoinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
