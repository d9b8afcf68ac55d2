package render

import (
	"bytes"
	"strings"
	"testing"

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
