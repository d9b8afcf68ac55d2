package gate

import (
	"bytes"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
)

func verdictText(t *testing.T, r *Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := render.Report(&buf, &report.Report{Verdict: r.verdict()}, render.Table); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A failing gate: a sentence per failed check with the frames behind it,
// then what passed; in the tone of failure.
func TestVerdictFailingGate(t *testing.T) {
	r := scenario(t, 5)
	if r.Verdict != Fail || r.verdict().Tone != report.ToneFail {
		t.Fatalf("gate %s, verdict tone %v", r.Verdict, r.verdict().Tone)
	}
	got := verdictText(t, r)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != r.Failed+1 {
		t.Fatalf("verdict\n%s\nwant a line per failed check (%d) and one for the rest", got, r.Failed)
	}
	if !strings.HasPrefix(lines[0], "Verdict: lock-contention failed: ") || !strings.Contains(lines[0], "threshold +1pp, p ") ||
		!strings.Contains(lines[0], "led by internal/sync.runtime_SemacquireMutex (+") || !strings.Contains(lines[0], "called from main.(*cache).get (+") {
		t.Errorf("first line %q", lines[0])
	}
	passed := len(r.Checks) - r.Failed
	if want := "The other " + strconv.Itoa(passed) + " checks passed."; lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
}

// A passing gate: one sentence, naming the checks that grew past their
// threshold within noise.
func TestVerdictPassingGate(t *testing.T) {
	base := defaultSynth()
	r, err := runSynth(rand.New(rand.NewSource(3)), Options{Checks: DefaultChecks()}, 5, base, base)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Pass {
		t.Fatalf("gate %s", r.Verdict)
	}
	n := len(r.Checks)
	if got := verdictText(t, r); got != "Verdict: All "+strconv.Itoa(n)+" checks passed.\n" {
		t.Errorf("got %q", got)
	}
	r.Checks[0].Verdict = Noise
	got := verdictText(t, r)
	if !strings.Contains(got, "passed; "+r.Checks[0].Check+" grew past its threshold but not significantly.") || r.verdict().Tone != report.ToneNone {
		t.Errorf("with a check within noise: %q", got)
	}
	if (&Report{}).verdict() != nil {
		t.Error("a gate without checks has a verdict")
	}
}

// A deciding frame that is its own caller (a leaf of the program's own
// code) is not named again as the caller of the deciders.
func TestVerdictCallerIsNoDecider(t *testing.T) {
	a, b := Frame{Name: "main.leafA", Delta: 0.03}, Frame{Name: "main.leafB", Delta: 0.02}
	c := CheckResult{Check: "cpu", Base: 0.1, New: 0.15, Delta: 0.05,
		Behind: &Behind{Deciders: []Frame{a, b}, Callers: []Frame{a, b, {Name: "main.serve", Delta: 0.01}}}}
	var buf bytes.Buffer
	if err := render.Report(&buf, &report.Report{Verdict: &report.Verdict{Lines: []report.Line{failedLine(c)}}}, render.Table); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	if !strings.Contains(got, "led by main.leafA (+3.00pp) and main.leafB (+2.00pp) called from main.serve (+1.00pp).") {
		t.Errorf("verdict %q: want the deciders, then only the caller that is not one", got)
	}
}
