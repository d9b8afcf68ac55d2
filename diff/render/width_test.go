package render

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/profdiff/profdiff/diff/report"
)

func write(t *testing.T, r *report.Report, f Format, o Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, f, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// Paragraphs wrap at spaces, keeping each character's colour; a word
// wider than the width is cut; no line ends in a space.
func TestWrap(t *testing.T) {
	if got, want := wrap("one two three four", 9), []string{"one two", "three", "four"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	if got := wrap("abcdefghij", 4); strings.Join(got, "|") != "abcd|efgh|ij" {
		t.Errorf("wrap of a long word = %q", got)
	}
	// No line ends in a space, however many stood at the break.
	if got := wrap("new:  /a/long/path", 12); strings.Join(got, "|") != "new:|/a/long/path" {
		t.Errorf("wrap after two spaces = %q", got)
	}
	l := report.Cat("profdiff gate: ", report.Text("FAIL (1 of 2 checks failed)").WithTone(report.ToneFail))
	var lines []string
	for _, s := range wrapStyled(prose(l), 20) {
		lines = append(lines, s.String(true))
	}
	fail := toneCodes[report.ToneFail]
	if want := []string{"profdiff gate: " + fail + "FAIL" + reset, fail + "(1 of 2 checks" + reset, fail + "failed)" + reset}; strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("coloured wrap = %q, want %q", lines, want)
	}
}

// wideNames are function names with wide runes (CJK, fullwidth forms, an
// emoji: two columns each) and combining marks (none).
var wideNames = []string{
	"com.例え.サービス.ユーザー管理.ＦＵＬＬＷＩＤＴＨ.処理する",
	"main.(*計算する関数の名前がとても長い型).計算",
	"github.com/例/パッケージ.(*ｓｅｒｖｅｒ).🔥hot",
	"pkg.cafe\u0301.re\u0301sume\u0301Handler.Ｓｅｒｖｅ",
}

// displayWidth is the columns s takes in a terminal, measured apart from
// the renderer (runewidth's grapheme clusters), ambiguous runes narrow.
func displayWidth(s string) int {
	return (&runewidth.Condition{StrictEmojiNeutral: true}).StringWidth(s)
}

// Wide runes take two columns, combining marks none: a table of such
// names, its cells and a paragraph fit 80 and 40 columns, and 20 as a
// list; the table's lines line up; a name is shown whole, in one of its
// shorter forms or cut after a whole rune, ending in "…"; colour changes
// nothing but the escape codes.
func TestWideNamesFitWidth(t *testing.T) {
	tb := &report.Table{Columns: []report.Column{{Name: "function"}, {Name: "base", Align: report.AlignRight}, {Name: "new", Align: report.AlignRight}, {Name: "note"}}}
	for i, n := range wideNames {
		tb.Rows = append(tb.Rows, []report.Cell{report.Code(n), report.Num(12345), report.Num(float64(678 * (i + 1))), report.Text("割り当て 増えた 📈 after ｔｈｅ change")})
	}
	r := &report.Report{Blocks: []report.Block{tb, report.Para{Lines: []report.Line{{report.Text("計算する関数の名前がとても長い関数 grew: ＦＵＬＬＷＩＤＴＨ forms, re\u0301sume\u0301 and 🔥 too")}}}}}
	for _, w := range []int{80, 40, 20} {
		out := write(t, r, Table, Options{Width: w})
		if colored := write(t, r, Table, Options{Width: w, Color: true}); stripANSI(colored) != out {
			t.Errorf("at %d, colour changes the layout:\n%s", w, colored)
		}
		if !utf8.ValidString(out) || strings.ContainsRune(out, utf8.RuneError) {
			t.Errorf("at %d, half a rune:\n%q", w, out)
		}
		if list := strings.HasPrefix(out, "(the table below"); list != (w == 20) {
			t.Errorf("at %d, written as a list: %v\n%s", w, list, out)
		}
		tableW, para := -1, false
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			para = para || l == ""
			if n := displayWidth(l); n > w || strings.HasSuffix(l, " ") {
				t.Errorf("at %d, a line %d columns wide or ending in a space: %q", w, n, l)
			}
			var name string
			switch {
			case strings.HasPrefix(l, "│"):
				if tableW < 0 {
					tableW = displayWidth(l)
				}
				name = strings.TrimSpace(strings.Split(l, "│")[1])
			case strings.HasPrefix(l, "┌") || strings.HasPrefix(l, "├") || strings.HasPrefix(l, "└"):
				if tableW < 0 {
					tableW = displayWidth(l)
				}
			case w == 20 && !para && !strings.HasPrefix(l, " ") && strings.IndexFunc(l, func(r rune) bool { return r >= 0x80 }) >= 0:
				name = l // a row's head in the list
			}
			if strings.HasPrefix(l, "│") || strings.HasPrefix(l, "┌") || strings.HasPrefix(l, "├") || strings.HasPrefix(l, "└") {
				if n := displayWidth(l); n != tableW {
					t.Errorf("at %d, table lines %d and %d columns wide: %q", w, tableW, n, l)
				}
			}
			if name != "" && name != "function" && !shownName(name) {
				t.Errorf("at %d, %q is no form of any name", w, name)
			}
		}
	}
}

// Markdown, never narrowed, lines its pipes up in display columns too.
func TestWideNamesMarkdown(t *testing.T) {
	tb := &report.Table{Columns: []report.Column{{Name: "function"}, {Name: "base", Align: report.AlignRight}}}
	for i, n := range wideNames {
		tb.Rows = append(tb.Rows, []report.Cell{report.Code(n), report.Num(float64(12345 * i))})
	}
	r := &report.Report{Blocks: []report.Block{tb}}
	out := write(t, r, Markdown, Options{})
	if narrow := write(t, r, Markdown, Options{Width: 40}); narrow != out {
		t.Errorf("--width 40 changed the Markdown:\n%s", narrow)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines {
		if displayWidth(l) != displayWidth(lines[0]) {
			t.Errorf("a line %d columns wide, the header %d: %q", displayWidth(l), displayWidth(lines[0]), l)
		}
	}
	for _, n := range wideNames {
		if !strings.Contains(out, "`"+n+"`") {
			t.Errorf("%q not whole:\n%s", n, out)
		}
	}
}

// shownName reports whether s is one of wideNames' forms (nameForms) or
// the start of one cut to end in "…".
func shownName(s string) bool {
	for _, n := range wideNames {
		for _, f := range nameForms(n, 0) {
			if cut, ok := strings.CutSuffix(s, ellipsis); s == f || ok && cut != "" && strings.HasPrefix(f, cut) {
				return true
			}
		}
	}
	return false
}

// Cutting and wrapping count columns: a wide rune that would stick out
// half a column is left for the next line, a combining mark stays with
// its letter.
func TestWideRunesCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"計算する", 5, "計算…"},
		{"計算する", 4, "計…"},
		{"計算する", 8, "計算する"},
		{"ab計算", 4, "ab…"},
		{"cafe\u0301s", 5, "cafe\u0301s"},
		{"cafe\u0301sX", 5, "cafe\u0301…"},
		{"計算", 1, ""},
	} {
		if got := cutEnd(c.s, c.w); got != c.want {
			t.Errorf("cutEnd(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
	if got, want := wrap("ＡＢＣＤＥ", 5), "ＡＢ|ＣＤ|Ｅ"; strings.Join(got, "|") != want {
		t.Errorf("wrap of fullwidth forms = %q, want %q", got, want)
	}
	if got, want := wrap("計算 する関数", 8), "計算|する関数"; strings.Join(got, "|") != want {
		t.Errorf("wrap at a space = %q, want %q", got, want)
	}
	if got, want := wrap("計算", 1), "計|算"; strings.Join(got, "|") != want {
		t.Errorf("wrap narrower than a rune = %q, want %q", got, want)
	}
	if got, want := WrapIndent("warning: 計算.folded: 計算する関数", 16, "  "), "warning:|  計算.folded:|  計算する関数"; strings.Join(got, "|") != want {
		t.Errorf("WrapIndent = %q, want %q", got, want)
	}
	for _, s := range []string{"ascii", "計算", "ＦＵＬＬ", "🔥", "re\u0301sume\u0301", "…·"} {
		if got, want := width(s), displayWidth(s); got != want {
			t.Errorf("width(%q) = %d, want %d", s, got, want)
		}
	}
}

// stripANSI is s without the escape codes of the tones.
func stripANSI(s string) string {
	for _, code := range toneCodes {
		s = strings.ReplaceAll(s, code, "")
	}
	return strings.ReplaceAll(s, reset, "")
}
