package present

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
)

// The reports of diff, top and rules laid out in a narrow terminal, in
// colour, and in Markdown, which neither changes.

// widest is the widest line of s in terminal columns (display columns,
// ambiguous runes narrow), escape codes left out.
func widest(s string) (int, string) {
	w, line := 0, ""
	for _, l := range strings.Split(stripANSI(s), "\n") {
		if n := (&runewidth.Condition{StrictEmojiNeutral: true}).StringWidth(l); n > w {
			w, line = n, l
		}
	}
	return w, line
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

// Every line of diff, top and rules fits --width 100 (rules also 120),
// coloured or not; without a width nothing is narrowed.
func TestWidth(t *testing.T) {
	reports := map[string]*report.Report{
		"diff dotnet": Diff(dotnetResult(t, diff.Options{Top: -1})),
		"top dotnet":  Top(dotnetTop(t)),
		"rules":       Rules(rules.Default().Rules),
	}
	for _, s := range synths {
		reports["diff "+s.name] = Diff(s.r())
	}
	for name, r := range reports {
		for _, w := range []int{100, 120} {
			for _, color := range []bool{false, true} {
				if got, line := widest(write(t, r, render.Table, render.Options{Width: w, Color: color})); got > w {
					t.Errorf("%s at width %d (color %v): a line of %d columns:\n%s", name, w, color, got, line)
				}
			}
		}
	}
	if got, _ := widest(write(t, reports["rules"], render.Table, render.Options{})); got < 200 {
		t.Errorf("rules without a width are %d wide: narrowed anyway?", got)
	}
	golden(t, "diff.dotnet.width-100.table.golden", []byte(write(t, reports["diff dotnet"], render.Table, render.Options{Width: 100})))
	golden(t, "diff.mutex-synth.width-100.table.golden", []byte(write(t, reports["diff mutex-synth.normalize-rate"], render.Table, render.Options{Width: 100})))
	golden(t, "rules.width-120.table.golden", []byte(write(t, reports["rules"], render.Table, render.Options{Width: 120})))
}

// Markdown is pasted into issues: never narrowed, never coloured.
func TestMarkdownIgnoresWidthAndColor(t *testing.T) {
	r := Diff(mutexSynth())
	if got, want := write(t, r, render.Markdown, render.Options{Width: 60, Color: true}), write(t, r, render.Markdown, render.Options{}); got != want {
		t.Errorf("markdown changed by width and colour:\n%s", got)
	}
	for _, f := range []render.Format{render.CSV, render.JSON} {
		if out := write(t, r, f, render.Options{Width: 60, Color: true}); strings.Contains(out, "\x1b") {
			t.Errorf("%s has escape codes", f)
		}
	}
}

// Colour marks growth red, decreases green, new rows yellow and leaves
// noise plain; without the escape codes the output is the uncoloured one.
func TestColor(t *testing.T) {
	r := Diff(wallSynth())
	plain, colored := write(t, r, render.Table, render.Options{Width: 100}), write(t, r, render.Table, render.Options{Width: 100, Color: true})
	if strings.Contains(plain, "\x1b") {
		t.Error("escape codes without colour")
	}
	if stripANSI(colored) != plain {
		t.Errorf("coloured output differs from the plain one beyond escape codes:\n%s", colored)
	}
	for _, want := range []string{
		"\x1b[31m+4.6\x1b[0m",
		"\x1b[32m-0.5\x1b[0m",
		"+0.2 ~ │", // noise stays plain
	} {
		if !strings.Contains(colored, want) {
			t.Errorf("no %q in\n%s", want, colored)
		}
	}
	mutex := write(t, Diff(mutexSynth()), render.Table, render.Options{Color: true})
	if want := "\x1b[33mgithub.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).acquire\x1b[0m"; !strings.Contains(mutex, want) {
		t.Errorf("new row not marked: no %q in\n%s", want, mutex)
	}
}
