package render

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// widest is the widest line of s in terminal columns, escape codes left
// out.
func widest(s string) (int, string) {
	w, line := 0, ""
	for _, l := range strings.Split(stripANSI(s), "\n") {
		if width(l) > w {
			w, line = width(l), l
		}
	}
	return w, line
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

func write(t *testing.T, r *report.Report, f Format, o Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, f, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// Every line of diff, top and rules fits --width 100 (rules also 120),
// coloured or not; without a width nothing is narrowed.
func TestWidth(t *testing.T) {
	reports := map[string]*report.Report{
		"diff dotnet": DiffReport(dotnetResult(t, diff.Options{Top: -1})),
		"top dotnet":  TopReport(dotnetTop(t)),
		"rules":       RulesReport(diff.DefaultRules().Rules),
	}
	for _, s := range synths {
		reports["diff "+s.name] = DiffReport(s.r())
	}
	for name, r := range reports {
		for _, w := range []int{100, 120} {
			for _, color := range []bool{false, true} {
				if got, line := widest(write(t, r, Table, Options{Width: w, Color: color})); got > w {
					t.Errorf("%s at width %d (color %v): a line of %d columns:\n%s", name, w, color, got, line)
				}
			}
		}
	}
	if got, _ := widest(write(t, reports["rules"], Table, Options{})); got < 200 {
		t.Errorf("rules without a width are %d wide: narrowed anyway?", got)
	}
	golden(t, "diff.dotnet.width-100.table.golden", []byte(write(t, reports["diff dotnet"], Table, Options{Width: 100})))
	golden(t, "diff.mutex-synth.width-100.table.golden", []byte(write(t, reports["diff mutex-synth.normalize-rate"], Table, Options{Width: 100})))
	golden(t, "rules.width-120.table.golden", []byte(write(t, reports["rules"], Table, Options{Width: 120})))
}

// Markdown is pasted into issues: never narrowed, never coloured.
func TestMarkdownIgnoresWidthAndColor(t *testing.T) {
	r := DiffReport(mutexSynth())
	if got, want := write(t, r, Markdown, Options{Width: 60, Color: true}), write(t, r, Markdown, Options{}); got != want {
		t.Errorf("markdown changed by width and colour:\n%s", got)
	}
	for _, f := range []Format{CSV, JSON} {
		if out := write(t, r, f, Options{Width: 60, Color: true}); strings.Contains(out, "\x1b") {
			t.Errorf("%s has escape codes", f)
		}
	}
}

// Colour marks growth red, decreases green, new rows yellow and leaves
// noise plain; without the escape codes the output is the uncoloured one.
func TestColor(t *testing.T) {
	r := DiffReport(wallSynth())
	plain, colored := write(t, r, Table, Options{Width: 100}), write(t, r, Table, Options{Width: 100, Color: true})
	if strings.Contains(plain, "\x1b") {
		t.Error("escape codes without colour")
	}
	if stripANSI(colored) != plain {
		t.Errorf("coloured output differs from the plain one beyond escape codes:\n%s", colored)
	}
	for _, want := range []string{
		toneCodes[report.ToneGrowth] + "+4.6" + reset,
		toneCodes[report.ToneShrink] + "-0.5" + reset,
		"+0.2 ~ │", // noise stays plain
	} {
		if !strings.Contains(colored, want) {
			t.Errorf("no %q in\n%s", want, colored)
		}
	}
	mutex := write(t, DiffReport(mutexSynth()), Table, Options{Color: true})
	if want := toneCodes[report.ToneNew] + "github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).acquire" + reset; !strings.Contains(mutex, want) {
		t.Errorf("new row not marked: no %q in\n%s", want, mutex)
	}
}

// Paragraphs wrap at spaces, keeping each character's colour; a word
// wider than the width is cut.
func TestWrap(t *testing.T) {
	if got, want := wrap("one two three four", 9), []string{"one two", "three", "four"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	if got := wrap("abcdefghij", 4); strings.Join(got, "|") != "abcd|efgh|ij" {
		t.Errorf("wrap of a long word = %q", got)
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
