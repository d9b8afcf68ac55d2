package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/profdiff/profdiff/profile/synth"
)

// A diff of 200 methods in the github format fits a pull-request comment
// (65,536 characters) and is GitHub Markdown that a GFM parser reads back
// whole: every table a table of its column count with every row, the
// <details> blocks balanced. Cut to a small limit, it still ends on whole
// rows, says what it left out and stays valid.
func TestGitHubFormatDiff200Methods(t *testing.T) {
	dir := t.TempDir()
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions, cfg.MinDepth, cfg.MaxDepth = 4000, 400, 4, 12
	base, nw := filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "new.pb.gz")
	writePprofFile(t, base, synth.Generate(cfg))
	cfg.Side = synth.New
	writePprofFile(t, nw, synth.Generate(cfg))

	out, stderr, code := profdiff(t, "", "diff", "--format", "github", "--top", "200", base, nw)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("github output of the 200-method diff: %d bytes", len(out))
	if len(out) >= 65536 {
		t.Errorf("github output is %d bytes, want under 65,536", len(out))
	}
	if !strings.HasPrefix(out, "**Verdict:**") {
		t.Errorf("github output does not open with the verdict:\n%.300s", out)
	}
	tables := checkGitHubMarkdown(t, out)
	methods := 0
	for _, tb := range tables {
		if tb.header[0] == "Method" {
			methods += tb.rows
		}
	}
	cut := regexp.MustCompile(`_Cut to fit GitHub's limit of 65,536 bytes: left out (\d+) rows of the Method table`).FindStringSubmatch(out)
	switch {
	case cut == nil && methods != 200:
		t.Errorf("%d method rows and no line saying what was left out; want 200", methods)
	case cut != nil && methods+atoi(t, cut[1]) != 200:
		t.Errorf("%d method rows shown and %s left out; want 200 in all", methods, cut[1])
	}
	if !strings.Contains(out, "<details><summary>190 more rows of the Method table</summary>") {
		t.Errorf("the rows past the first ten are not in a <details> block")
	}

	// Cut small: whole rows, the cut said, the Markdown still valid.
	out, stderr, code = profdiff(t, "", "diff", "--format", "github", "--github-limit", "4096", "--top", "200", base, nw)
	if code != 0 {
		t.Fatalf("--github-limit 4096: exit %d: %s", code, stderr)
	}
	if len(out) > 4096 {
		t.Errorf("--github-limit 4096: %d bytes", len(out))
	}
	cut = regexp.MustCompile(`(?m)^_Cut to fit GitHub's limit of 4,096 bytes: left out (\d+) rows of the Method table.*_$`).FindStringSubmatch(out)
	if cut == nil {
		t.Fatalf("--github-limit 4096: no line saying what was left out:\n%s", out)
	}
	methods = 0
	for _, tb := range checkGitHubMarkdown(t, out) {
		if tb.header[0] == "Method" {
			methods += tb.rows
		}
	}
	if methods == 0 || methods+atoi(t, cut[1]) != 200 {
		t.Errorf("--github-limit 4096: %d method rows shown and %s left out; want some shown, 200 in all", methods, cut[1])
	}

	for _, args := range [][]string{
		{"diff", "--format", "github", "--github-limit", "100", base, nw},
		{"diff", "--format", "markdown", "--github-limit", "summary", base, nw},
	} {
		if _, stderr, code := profdiff(t, "", args...); code != 2 || !strings.Contains(stderr, "--github-limit") {
			t.Errorf("profdiff %s: exit %d, stderr %q; want 2 naming --github-limit", strings.Join(args, " "), code, stderr)
		}
	}
}

// ghTable is a table as a GFM parser read it.
type ghTable struct {
	header []string
	rows   int // body rows
}

// checkGitHubMarkdown parses md with goldmark's GFM tables and fails
// unless every run of table lines in the text is one parsed table with
// all its rows, each line with as many cells as its header, and the
// <details> blocks open and close in order. It returns the tables.
func checkGitHubMarkdown(t *testing.T, md string) []ghTable {
	t.Helper()
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser().Parse(text.NewReader(src))
	var tables []ghTable
	depth := 0
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *east.Table:
			var tb ghTable
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				switch c.(type) {
				case *east.TableHeader:
					for cell := c.FirstChild(); cell != nil; cell = cell.NextSibling() {
						tb.header = append(tb.header, strings.TrimSpace(string(cell.(*east.TableCell).Text(src)))) //nolint:staticcheck // the cell's plain text
					}
				case *east.TableRow:
					tb.rows++
				}
			}
			tables = append(tables, tb)
			return ast.WalkSkipChildren, nil
		case *ast.HTMLBlock:
			var b strings.Builder
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				b.Write(seg.Value(src))
			}
			for _, tag := range regexp.MustCompile(`</?details>`).FindAllString(b.String(), -1) {
				if tag == "<details>" {
					depth++
				} else if depth--; depth < 0 {
					t.Errorf("</details> closes no <details> block")
				}
			}
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if depth != 0 {
		t.Errorf("%d <details> blocks left open", depth)
	}
	if n, m := strings.Count(md, "<details>"), strings.Count(md, "</details>"); n != m {
		t.Errorf("%d <details> and %d </details> in the text", n, m)
	}

	// The table lines of the text, in runs: each run must be the next
	// parsed table, its lines the header, the delimiter and every row.
	pipes := regexp.MustCompile(`(^|[^\\])\|`)
	runs := [][]string{}
	prev := false
	for _, l := range strings.Split(md, "\n") {
		is := strings.HasPrefix(l, "|")
		if is && !prev {
			runs = append(runs, nil)
		}
		if is {
			runs[len(runs)-1] = append(runs[len(runs)-1], l)
		}
		prev = is
	}
	if len(runs) != len(tables) {
		t.Fatalf("%d runs of table lines but %d tables parsed", len(runs), len(tables))
	}
	for i, run := range runs {
		tb := tables[i]
		if len(run) != tb.rows+2 {
			t.Errorf("table %d (%v): %d lines, parsed as a header and %d rows", i+1, tb.header, len(run), tb.rows)
		}
		for _, l := range run {
			// A line "| a | b |" has one more unescaped pipe than cells.
			if cells := len(pipes.FindAllString(l, -1)) - 1; cells != len(tb.header) {
				t.Errorf("table %d (%v): a line of %d cells, want %d: %s", i+1, tb.header, cells, len(tb.header), l)
			}
		}
	}
	return tables
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
