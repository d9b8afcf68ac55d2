package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/report"
)

func rendered(t *testing.T, r *report.Report, f Format) string {
	t.Helper()
	var b bytes.Buffer
	if err := Report(&b, r, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Blocks are separated by a blank line; in the terminal a heading sits on
// the block it heads and a tight paragraph under the block before; blocks
// for one medium are left out of the other.
func TestLayout(t *testing.T) {
	r := &report.Report{
		Blocks: []report.Block{
			report.Heading{Level: 3, Line: report.Cat("title")},
			report.Para{Lines: []report.Line{report.Cat("a"), report.Cat("b")}},
			report.Para{Tight: true, Lines: []report.Line{report.Cat("tight")}},
			report.Para{Only: report.Markdown, Lines: []report.Line{report.Cat("md only")}},
			report.Para{Only: report.Terminal, Lines: []report.Line{report.Cat("terminal only")}},
		},
		Warnings: []string{"never shown"},
	}
	if got, want := rendered(t, r, Table), "title\na\nb\ntight\n\nterminal only\n"; got != want {
		t.Errorf("terminal:\n%q\nwant\n%q", got, want)
	}
	if got, want := rendered(t, r, Markdown), "### title\n\na\nb\n\ntight\n\nmd only\n"; got != want {
		t.Errorf("markdown:\n%q\nwant\n%q", got, want)
	}
}

// Markdown makes a run of bold cells one bold span, writes names as code
// spans (pipes escaped) and uses a cell's Markdown form where it has one.
func TestMarkdownCells(t *testing.T) {
	l := report.Cat(report.Text("Total ").Bold(), report.Share(0.5).Places(1).Bold(), " (", report.Code("a|b"), ") ",
		report.Text("x ~ y").OrInMarkdown(report.Text("x "), report.Code("y")))
	if got, want := line(l, report.Markdown), "**Total 50.0%** (`a\\|b`) x `y`"; got != want {
		t.Errorf("markdown %q, want %q", got, want)
	}
	if got, want := line(l, report.Terminal), "Total 50.0% (a|b) x ~ y"; got != want {
		t.Errorf("terminal %q, want %q", got, want)
	}
}

func TestCellText(t *testing.T) {
	p := 0.0004
	p2 := 0.0081
	cases := []struct {
		cell report.Cell
		want string
	}{
		{report.Delta(0.0459, true, "18x increase"), "+4.59pp ~ (18x increase)"},
		{report.Delta(-0.0015, false, "").WithRelative(-0.029), "-0.15pp (-2.9%)"},
		{report.Delta(0, false, "").WithRelative(0), "0.00pp (+0.0%)"},
		{report.P(&p), "<0.001"},
		{report.P(&p2), "0.008"},
		{report.P(nil), "n/a"},
		{report.Num(1e10).WithUnit("nanoseconds"), "10000000000 nanoseconds"},
		{report.Num(0.123456789), "0.123457"},
		{report.ExactNum(0.123456789), "0.123456789"},
		{report.Fixed(40.125, 2), "40.12"},
		{report.Int(12).WithNote("!"), "12 (!)"},
		{report.Share(0.94).Places(0), "94%"},
		{report.None("–"), "–"},
		{report.Bool(true), "true"},
		{report.Phrase("lock-contention ", report.Share(0.71).Places(0)), "lock-contention 71%"},
		{report.Amount(2.5, "goroutines"), "2.5 goroutines"},
		{report.Amount(2.5, "goroutines").InHeader(), "2.5"},
		{report.Delta(0, false, "").WithUnit("goroutines").InHeader(), "0"},
		{report.Delta(1.5, false, "").WithUnit("s/s").InHeader(), "+1.5"},
	}
	for _, c := range cases {
		if got := String(c.cell); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.cell, got, c.want)
		}
	}
}

// CSV writes raw values: shortest exact numbers, flags, empty fields for
// missing values; and no note, noise mark or unit.
func TestCSVRecords(t *testing.T) {
	r := &report.Report{Records: &report.Table{
		Columns: report.Cols("name", "share", "delta", "p", "noisy"),
		Rows:    [][]report.Cell{{report.Code("a,b"), report.Share(0.0486), report.Delta(0.0459, true, "note"), report.P(nil), report.Bool(true)}},
	}}
	if got, want := rendered(t, r, CSV), "name,share,delta,p,noisy\n\"a,b\",0.0486,0.0459,,true\n"; got != want {
		t.Errorf("csv %q, want %q", got, want)
	}
}

// A report without records or a JSON value says so instead of writing
// nothing.
func TestMissingForms(t *testing.T) {
	r := &report.Report{Blocks: []report.Block{report.Para{Lines: []report.Line{report.Cat("x")}}}}
	for _, f := range []Format{CSV, JSON, "xml"} {
		var b bytes.Buffer
		if err := Report(&b, r, f); err == nil || !strings.Contains(err.Error(), string(f)) || b.Len() != 0 {
			t.Errorf("%s: err %v, output %q", f, err, b.String())
		}
	}
}

// A name too wide for its column loses its final parameter list first,
// where the cell says it starts, then its namespace.
func TestNameParams(t *testing.T) {
	name := "System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)"
	table := func(c report.Cell) string {
		r := &report.Report{Blocks: []report.Block{&report.Table{Columns: []report.Column{report.Col("Method")}, Rows: [][]report.Cell{{c}}}}}
		return write(t, r, Table, Options{Width: 57})
	}
	if got := table(report.Code(name).WithParams(strings.Index(name, "("))); !strings.Contains(got, "│ System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(…) │") {
		t.Errorf("with its parameter list marked:\n%s", got)
	}
	if got := table(report.Code(name)); !strings.Contains(got, "│ WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)    │") {
		t.Errorf("without a parameter list marked, the namespace goes and the parameters stay:\n%s", got)
	}
}

// summarized is a JSON value that carries its report's verdict.
type summarized struct {
	Summary string `json:"summary"`
}

func (s summarized) WithSummary(sentences string) any { s.Summary = sentences; return s }

// The json format gives a Summarized value the verdict's sentences as the
// terminal shows them, plain and one after the other.
func TestJSONSummary(t *testing.T) {
	r := &report.Report{JSON: summarized{}, Verdict: &report.Verdict{Tone: report.ToneGrowth, Lines: []report.Line{
		report.Cat(report.Code("lock-contention"), " grew from ", report.Share(0.0178), " to ", report.Share(0.0646), "."),
		report.Cat("Led by ", report.Code("a|b"), " (", report.Delta(0.0459, false, ""), ")."),
	}}}
	if got, want := rendered(t, r, JSON), "{\n  \"summary\": \"lock-contention grew from 1.78% to 6.46%. Led by a|b (+4.59pp).\"\n}\n"; got != want {
		t.Errorf("json %q, want %q", got, want)
	}
	r.Verdict = nil
	if got, want := rendered(t, r, JSON), "{\n  \"summary\": \"\"\n}\n"; got != want {
		t.Errorf("without a verdict: json %q, want %q", got, want)
	}
}

// A Markdown table whose other columns leave its names no room still
// shortens each name to its shortest form and lists the
// whole one, rather than keeping it whole.
func TestMarkdownNamesShortestWhenNoRoom(t *testing.T) {
	wide := strings.Repeat("x", 120)
	r := &report.Report{Blocks: []report.Block{&report.Table{
		Columns: []report.Column{{Name: "Method"}, {Name: "Note"}},
		Rows: [][]report.Cell{
			{report.Code("github.com/example/service/internal/registry.(*waitRegistry).acquire"), report.Text(wide)},
		},
	}}}
	out := rendered(t, r, Markdown)
	if !strings.Contains(out, "| `acquire` |") || !strings.Contains(out, "<summary>Full names</summary>") {
		t.Errorf("the name is not at its shortest form with its whole one listed:\n%s", out)
	}
}

// A name whose shortest form is still too wide for the room the other
// columns leave is cut to its end after "…" (the whole name listed under
// the table), so the table's lines fit 120 columns; a name that fits is
// not cut, and a cut name's end is its own.
func TestMarkdownNamesCutToFit(t *testing.T) {
	note := strings.Repeat("n", 95) // leaves 120 - 1 - 3 - (95 + 3) = 18 for the name
	r := &report.Report{Blocks: []report.Block{&report.Table{
		Columns: []report.Column{{Name: "Method"}, {Name: "Note"}},
		Rows: [][]report.Cell{
			{report.Code("runtime_notifyListNotifyAll"), report.Text(note)},
			{report.Code("(*T).short"), report.Text(note)},
		},
	}}}
	out := rendered(t, r, Markdown)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "|") && width(l) > markdownWidth {
			t.Errorf("a line of %d columns: %s", width(l), l)
		}
	}
	if !strings.Contains(out, "| `…fyListNotifyAll` ") || !strings.Contains(out, "| `(*T).short` ") || !strings.Contains(out, "- `…fyListNotifyAll`: `runtime_notifyListNotifyAll`") {
		t.Errorf("the long name is not cut to its end, listed whole, beside the short one whole:\n%s", out)
	}
}

// tailWidth keeps whole runes from the end within the columns, wide
// runes two, a combining mark with its letter.
func TestTailWidth(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"abcdef", 3, "def"},
		{"abcdef", 10, "abcdef"},
		{"ab計算", 3, "算"},
		{"ab計算", 4, "計算"},
		{"xe\u0301", 1, "e\u0301"},
		{"abc", 0, ""},
	} {
		if got := tailWidth(c.s, c.w); got != c.want {
			t.Errorf("tailWidth(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
}
