package present

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// The seed's verdict leads the text and Markdown diff: lock contention
// in shares, led by WaitAndAcquire and its caller, gc also growing, the
// caveat that there are no rates; in the tone of growth.
func TestDiffVerdictSeed(t *testing.T) {
	r := dotnetResult(t, diff.Options{})
	v := diffVerdict(r)
	if v == nil || v.Tone != report.ToneGrowth {
		t.Fatalf("verdict %+v, want one of growth", v)
	}
	text := renderDiff(t, r, render.Table, render.Options{Width: 400})
	want := []string{
		"Verdict: lock-contention grew from 1.78% to 6.46% (4x share).",
		"Led by System.Threading.LowLevelLock.WaitAndAcquire (+4.59pp), called from System.Threading.LowLevelLock.Acquire (+4.59pp).",
		"Also grew: gc 5.52% → 10.91% (doubled share), led by System.Threading.Thread.<PollGC>g__PollGCWorker|74_0, called from Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpProtocol.ProcessRequests.",
		"Caveat: the profiles do not say what they measure; durations unknown, so shares only (no rates).",
		"",
		"base: ",
	}
	if !strings.HasPrefix(text, strings.Join(want, "\n")) {
		t.Errorf("text starts\n%s\nwant\n%s", text[:min(len(text), 600)], strings.Join(want, "\n"))
	}
	md := renderDiff(t, r, render.Markdown, render.Options{})
	if !strings.HasPrefix(md, "**Verdict:** `lock-contention` grew from 1.78% to 6.46% (4x share).\nLed by `System.Threading.LowLevelLock.WaitAndAcquire` (+4.59pp)") {
		t.Errorf("markdown starts\n%s", md[:min(len(md), 400)])
	}
	for _, f := range []render.Format{render.CSV, render.JSON} {
		if out := renderDiff(t, r, f, render.Options{}); strings.Contains(out, "Verdict:") {
			t.Errorf("%s carries the verdict paragraph", f)
		}
	}
}

// With rates, the principal change says them and the measure's ratio;
// leaders' changes are in the rate; a fall of cpu has no tone of growth.
func TestDiffVerdictRates(t *testing.T) {
	v := vals(0.12e9, 3.1e9, "nanoseconds", "s/s")
	v.BaseRate, v.NewRate = ptr(0.012), ptr(0.31)
	fv := vals(0.1e9, 3e9, "nanoseconds", "s/s")
	fv.BaseRate, fv.NewRate = ptr(0.01), ptr(0.3)
	r := &result.Result{Verdict: &result.Verdict{Measure: result.NormalizeRate, Grew: true,
		Principal: &result.VerdictChange{Bucket: rules.LockContention, VerdictSize: result.VerdictSize{Base: 0.0027, New: 0.0486, Delta: 0.0459, Change: 0.298, Note: "26x", Values: v}},
		Leaders:   []result.VerdictFrame{{Name: "main.(*registry).acquire", Role: "caller", VerdictSize: result.VerdictSize{Base: 0.002, New: 0.04, Delta: 0.038, Change: 0.29, Values: fv}}},
	}}
	got := write(t, &report.Report{Verdict: diffVerdict(r)}, render.Table, render.Options{})
	want := "Verdict: lock-contention grew from 0.27% to 4.86% (12 ms/s → 310 ms/s, 26x rate).\nLed by callers main.(*registry).acquire (+290 ms/s).\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	r.Verdict.Principal.Bucket, r.Verdict.Grew = rules.CPU, false
	r.Verdict.Leaders = nil
	if v := diffVerdict(r); v.Tone != report.ToneNone || !strings.Contains(write(t, &report.Report{Verdict: v}, render.Table, render.Options{}), "cpu fell from") {
		t.Errorf("a cpu fall: %+v", v)
	}
}

// Nothing changed: one short sentence (and the caveats).
func TestDiffVerdictNoChange(t *testing.T) {
	r := &result.Result{Verdict: &result.Verdict{NoChange: true}}
	if got := write(t, &report.Report{Verdict: diffVerdict(r)}, render.Table, render.Options{}); got != "Verdict: No change beyond noise.\n" {
		t.Errorf("got %q", got)
	}
	if diffVerdict(&result.Result{}) != nil {
		t.Error("a result without a verdict has a verdict paragraph")
	}
}

// A delay profile's shares stay near 100% whatever happens: its verdict
// says the change in rate, or in value without durations.
func TestDiffVerdictDelay(t *testing.T) {
	v := vals(1.56e6, 228e6, "nanoseconds", "s/s")
	v.BaseRate, v.NewRate = ptr(0.00135), ptr(0.224)
	r := &result.Result{Analysis: result.Analysis{Meaning: result.MeaningDelay}, Verdict: &result.Verdict{Measure: result.NormalizeRate, Grew: true,
		Principal: &result.VerdictChange{Bucket: rules.LockContention, VerdictSize: result.VerdictSize{Base: 1, New: 1, Change: 0.222, Note: "166x", Values: v}}}}
	if got, want := write(t, &report.Report{Verdict: diffVerdict(r)}, render.Table, render.Options{}), "Verdict: lock-contention grew from 1.35 ms/s to 224 ms/s (166x rate).\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r.Verdict.Measure = result.NormalizeValue
	r.Verdict.Principal.BaseRate, r.Verdict.Principal.NewRate = nil, nil
	if got, want := write(t, &report.Report{Verdict: diffVerdict(r)}, render.Table, render.Options{}), "Verdict: lock-contention grew from 1.56 ms to 228 ms (166x value).\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The JSON's verdict summary is the paragraph the text formats open with,
// word for word: the terminal's verdict sentences without "Verdict:" and
// line breaks. The result itself is left as it is.
func TestVerdictSummaryIsTheParagraph(t *testing.T) {
	results := map[string]*result.Result{
		"seed": dotnetResult(t, diff.Options{}),
		"no change": {Verdict: &result.Verdict{NoChange: true, Measure: result.NormalizeShare,
			Caveats: []result.Caveat{{Code: result.CaveatFewSamples, Text: "few samples (base 12, new 14)"}}}},
	}
	for name, r := range results {
		text := write(t, &report.Report{Verdict: diffVerdict(r)}, render.Table, render.Options{})
		want := strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(text, "Verdict: "), "\n"), "\n", " ")
		for _, p := range []report.Parts{report.PartJSON, report.PartBlocks} {
			var doc struct {
				Verdict struct{ Summary string }
			}
			if err := json.Unmarshal([]byte(write(t, DiffFor(r, p), render.JSON, render.Options{})), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Verdict.Summary != want {
				t.Errorf("%s: summary %q, want %q", name, doc.Verdict.Summary, want)
			}
		}
		if r.Verdict.Summary != "" {
			t.Errorf("%s: writing the JSON changed the result's verdict: %q", name, r.Verdict.Summary)
		}
	}
	if got := results["no change"]; !strings.Contains(write(t, DiffFor(got, report.PartJSON), render.JSON, render.Options{}),
		`"summary": "No change beyond noise. Caveat: few samples (base 12, new 14)."`) {
		t.Error("no change: the summary is not the sentence and its caveat")
	}
}
