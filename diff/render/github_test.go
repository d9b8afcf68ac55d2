package render

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/report"
)

// githubReport is a verdict, a heading and tables of rows rows each.
func githubReport(tables, rows int) *report.Report {
	r := &report.Report{Verdict: &report.Verdict{Lines: []report.Line{report.Cat("Something grew.")}}}
	for i := range tables {
		r.Blocks = append(r.Blocks, report.Heading{Level: 3, Line: report.Cat(fmt.Sprintf("Table %d", i+1))})
		t := &report.Table{Columns: []report.Column{report.Col(fmt.Sprintf("Name%d", i+1)), report.RCol("share")}}
		for j := range rows {
			t.Rows = append(t.Rows, []report.Cell{report.Code(fmt.Sprintf("main.f%d_%d", i, j)), report.Share(float64(j) / 1000)})
		}
		r.Blocks = append(r.Blocks, t)
	}
	return r
}

// At every limit the github format stays within it, and the rows shown
// plus the rows its last line says were left out are every row: a cut
// falls between whole rows, each table line whole.
func TestGitHubLimitEveryCut(t *testing.T) {
	const tables, rows = 3, 300
	r := githubReport(tables, rows)
	row := regexp.MustCompile("^\\| `main\\.f\\d+_\\d+` +\\| +[0-9.]+% \\|$")
	left := regexp.MustCompile(`(\d+) rows? of the Name\d table`)
	for limit := GitHubMinLimit; limit < 40000; limit += 997 {
		var buf bytes.Buffer
		if err := Write(&buf, r, GitHub, Options{GitHubLimit: limit}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if len(out) > limit {
			t.Errorf("limit %d: %d bytes", limit, len(out))
		}
		shown := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "| `") {
				if !row.MatchString(l) {
					t.Errorf("limit %d: a broken row %q", limit, l)
				}
				shown++
			}
		}
		cut := 0
		if i := strings.LastIndex(out, "_Cut to fit"); i >= 0 {
			for _, m := range left.FindAllStringSubmatch(out[i:], -1) {
				n, _ := strconv.Atoi(m[1])
				cut += n
			}
		}
		if shown+cut != tables*rows {
			t.Errorf("limit %d: %d rows shown, %d left out; want %d in all", limit, shown, cut, tables*rows)
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, GitHub, Options{GitHubLimit: GitHubMinLimit - 1}); err == nil {
		t.Errorf("a limit under %d was taken", GitHubMinLimit)
	}
	// The whole report, when it fits, has no cut line.
	buf.Reset()
	if err := Write(&buf, githubReport(1, 5), GitHub, Options{}); err != nil || strings.Contains(buf.String(), "Cut to fit") || strings.Contains(buf.String(), "<details>") {
		t.Errorf("a small report: %v\n%s", err, buf.String())
	}
}
