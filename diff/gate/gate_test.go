package gate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	goldenfile "github.com/profdiff/profdiff/diff/internal/golden"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, "./diff/gate", name, got)
}

func TestSynthStacksClassify(t *testing.T) {
	rs := rules.Default()
	for b, st := range synthStacks {
		if got, _ := diff.ClassifyStack(rs, st, profile.KindWall); got != rules.Bucket(b) {
			t.Errorf("stack %d classified %s, want %s", b, got, rules.Bucket(b))
		}
	}
	// The gate's bucket shares are the engine's.
	rng := rand.New(rand.NewSource(1))
	l := defaultSynth().draw(rng, "x")
	a := diff.NewAnalyzer(diff.Options{})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	g := New(Options{Checks: mustChecks("cpu=+0pp", "wait=+0pp", "lock-contention=+0pp", "gc=+0pp", "io=+0pp", "syscall=+0pp", "sync=+0pp")})
	if err := g.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(result.New, l); err != nil {
		t.Fatal(err)
	}
	r, err := g.Report()
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range rules.Buckets {
		if c := r.Checks[i]; c.Name != b.String() || c.Base != top.Buckets[b].Share || c.Delta != 0 {
			t.Errorf("check %d = %+v, want %s at %v", i, c, b, top.Buckets[b].Share)
		}
	}
	if c := r.Checks[6]; c.Name != "sync" || c.Base != top.SyncShare() {
		t.Errorf("sync check = %+v, want %v", c, top.SyncShare())
	}
}

// TestGateAgreesWithDiff: for the same inputs and options, the gate's
// merged bucket and sync shares equal `profdiff diff --format json`'s to
// the last digit, and each per-profile observation is that profile's own
// diff share: the gate reads the diff's sample stream, so they agree by
// construction.
func TestGateAgreesWithDiff(t *testing.T) {
	var ls []*profile.Loaded
	for _, name := range []string{"net10.folded", "net11.folded"} {
		ls = append(ls, fixture.Load(t, fixture.Path("testdata/dotnet/"+name)))
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 3; i++ {
		ls = append(ls, defaultSynth().draw(rng, fmt.Sprintf("synth-%d", i)))
	}
	all := mustChecks("cpu=+0pp", "wait=+0pp", "lock-contention=+0pp", "gc=+0pp", "io=+0pp", "syscall=+0pp", "sync=+0pp")
	for _, opts := range []diff.Options{
		{},
		{Focus: regexp.MustCompile(`Threading|main\.worker`)},
		{Ignore: regexp.MustCompile(`Socket|net\.`)},
		{Focus: regexp.MustCompile(`Thread|main`), Ignore: regexp.MustCompile(`Lock`)},
		{Kind: profile.KindBlock},
		{Kind: profile.KindCPU, SampleIndex: "0"},
	} {
		// base: the two .NET profiles; new: the three synthetic ones.
		sides := [2][]*profile.Loaded{ls[:2], ls[2:]}
		checks := all
		if opts.Kind == profile.KindBlock {
			// Off-CPU profiles are 100% sync: a +pp check of it cannot
			// be evaluated (TestCannotEvaluate).
			checks = all[:6]
		}
		g := New(Options{Checks: checks, Analysis: opts})
		a := diff.NewAnalyzer(opts)
		for side, srcs := range sides {
			for _, l := range srcs {
				if err := g.Add(result.Side(side), l); err != nil {
					t.Fatal(err)
				}
				if err := a.Add(result.Side(side), l); err != nil {
					t.Fatal(err)
				}
			}
		}
		r, err := g.Report()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := render.Report(&buf, present.Diff(a.Diff()), render.JSON); err != nil {
			t.Fatal(err)
		}
		var dj struct {
			Buckets []struct {
				Bucket    string
				Base, New float64
			}
		}
		if err := json.Unmarshal(buf.Bytes(), &dj); err != nil {
			t.Fatal(err)
		}
		var syncB, syncN float64
		for i, b := range dj.Buckets {
			c := r.Checks[i]
			if c.Name != b.Bucket || c.Base != b.Base || c.New != b.New {
				t.Errorf("%+v: gate %s %v → %v, diff json %s %v → %v", opts, c.Name, c.Base, c.New, b.Bucket, b.Base, b.New)
			}
			if b.Bucket != "cpu" {
				syncB, syncN = syncB+b.Base, syncN+b.New
			}
		}
		if c := r.Checks[len(r.Checks)-1]; c.Name == "sync" && (c.Base != syncB || c.New != syncN) {
			t.Errorf("%+v: gate sync %v → %v, diff json %v → %v", opts, c.Base, c.New, syncB, syncN)
		}
		// Each observation is the profile's share when diffed alone.
		for side, srcs := range sides {
			for j, l := range srcs {
				one := diff.NewAnalyzer(opts)
				if err := one.Add(result.Base, l); err != nil {
					t.Fatal(err)
				}
				top := one.Top()
				if top.Total == 0 {
					continue // left out of the test, with a warning
				}
				obs := r.Checks[2].BaseProfiles
				if side == 1 {
					obs = r.Checks[2].NewProfiles
				}
				if j < len(obs) && obs[j] != top.Buckets[rules.LockContention].Share {
					t.Errorf("%+v: %s lock-contention observation %v, its own diff %v", opts, l.Source, obs[j], top.Buckets[rules.LockContention].Share)
				}
			}
		}
	}
}

// TestFalseFailureRate is the noise proof: 200 trials of 5 base
// and 5 new profiles drawn from one distribution. With thresholds of +0pp
// on all six buckets and sync (so only the statistics stand between noise
// and a failure), the gate fails in at most about alpha of the trials; with
// the default thresholds in none.
func TestFalseFailureRate(t *testing.T) {
	const trials = 200
	cfg := defaultSynth()
	for _, tc := range []struct {
		name   string
		checks []Check
		max    int // failures allowed out of 200
	}{
		{"all buckets and sync at +0pp", mustChecks("cpu=+0pp", "wait=+0pp", "lock-contention=+0pp", "gc=+0pp", "io=+0pp", "syscall=+0pp", "sync=+0pp"), 15},
		{"lock-contention at +0pp", mustChecks("lock-contention=+0pp"), 15},
		{"defaults", nil, 15},
	} {
		rng := rand.New(rand.NewSource(7))
		fails := 0
		for range trials {
			r, err := runSynth(rng, Options{Checks: tc.checks}, 5, cfg, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Mode != ModeUTest {
				t.Fatalf("mode %s, want u-test: %v", r.Mode, r.Warnings)
			}
			if r.Verdict == Fail {
				fails++
			}
		}
		t.Logf("%s: the gate failed in %d of %d trials (%.1f%%; alpha 5%%)", tc.name, fails, trials, 100*float64(fails)/trials)
		if fails > tc.max {
			t.Errorf("%s: failed in %d of %d trials on pure noise, want at most %d (alpha 0.05 is 10 of 200; 15 allows for the sampling error of 200 trials)", tc.name, fails, trials, tc.max)
		}
	}
}

// TestPowerProfiles measures how often the default gate fails when the
// lock-contention share really grew, 5 vs 5 profiles of 2,000 samples with
// a 2% base share and 10% run-to-run jitter (per-profile σ of the share ≈
// 0.37pp). The +1pp threshold is the binding limit here: growth below it
// passes, growth well above it fails.
func TestPowerProfiles(t *testing.T) {
	const trials = 200
	base := defaultSynth()
	want := map[float64][2]float64{ // shift → [min, max] failure rate
		0.005: {0, 0.10},
		0.010: {0.2, 0.8},
		0.015: {0.9, 1},
		0.020: {0.98, 1},
	}
	for _, d := range []float64{0.005, 0.010, 0.015, 0.020} {
		rng := rand.New(rand.NewSource(11))
		fails := 0
		for range trials {
			r, err := runSynth(rng, Options{}, 5, base, base.shift(rules.LockContention, d))
			if err != nil {
				t.Fatal(err)
			}
			if r.Checks[0].Verdict == Fail {
				fails++
			}
		}
		rate := float64(fails) / trials
		t.Logf("lock-contention +%.1fpp: the default gate failed in %d of %d trials (%.0f%%)", d*100, fails, trials, rate*100)
		if w := want[d]; rate < w[0] || rate > w[1] {
			t.Errorf("+%.1fpp: failure rate %.2f outside [%.2f, %.2f]", d*100, rate, w[0], w[1])
		}
	}
}

// scenario is the fixed report the golden files show: 5 vs 5 synthetic
// profiles, lock contention +3pp in new, default checks plus a relative gc
// check and a method check.
func scenario(t *testing.T, n int) *Report {
	t.Helper()
	rng := rand.New(rand.NewSource(3))
	checks := Merge(DefaultChecks(), mustChecks("gc=+25%", `sync\.\(\*Mutex\)\.Lock=+1pp`, "main\\.logLine=+50%"))
	base := defaultSynth()
	r, err := runSynth(rng, Options{Checks: checks}, n, base, base.shift(rules.LockContention, 0.03))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGoldenReports(t *testing.T) {
	for _, n := range []int{5, 2} {
		r := scenario(t, n)
		for _, f := range render.Tables {
			var buf bytes.Buffer
			if err := Render(&buf, r, f); err != nil {
				t.Fatal(err)
			}
			golden(t, fmt.Sprintf("gate.synth-lock+3pp.%dv%d.%s.golden", n, n, f), buf.Bytes())
		}
	}
}

func TestScenarioVerdicts(t *testing.T) {
	r := scenario(t, 5)
	if r.Verdict != Fail || r.Mode != ModeUTest || len(r.Checks) != 5 {
		t.Fatalf("report = %+v", r)
	}
	verdicts := map[string]Verdict{}
	for _, c := range r.Checks {
		verdicts[c.Check] = c.Verdict
	}
	want := map[string]Verdict{
		"lock-contention":                  Fail,
		"gc":                               Pass,
		"sync":                             Pass,
		`method ~ sync\.\(\*Mutex\)\.Lock`: Fail,
		`method ~ main\.logLine`:           Pass,
	}
	for k, v := range want {
		if verdicts[k] != v {
			t.Errorf("%s: verdict %s, want %s (all: %v)", k, verdicts[k], v, verdicts)
		}
	}
	lc := r.Checks[0]
	if lc.Behind == nil || len(lc.Behind.Callers) == 0 || lc.Behind.Callers[0].Name != "main.(*cache).get" {
		t.Errorf("lock-contention callers = %+v, want main.(*cache).get first", lc.Behind)
	}
	if len(lc.Behind.Deciders) == 0 || lc.Behind.Deciders[0].Name != "internal/sync.runtime_SemacquireMutex" {
		t.Errorf("lock-contention deciders = %+v", lc.Behind.Deciders)
	}
	// The method check is inclusive: sync.(*Mutex).Lock is never a leaf.
	for _, c := range r.Checks {
		if c.Target == TargetMethod && strings.Contains(c.Name, "Mutex") && (c.New < 0.04 || c.New > 0.06) {
			t.Errorf("method check share %v, want about 5%% (the lock-contention stack)", c.New)
		}
	}
}

func TestFewProfilesComparesMerged(t *testing.T) {
	r := scenario(t, 2)
	if r.Mode != ModeMerged {
		t.Fatalf("mode %s, want merged", r.Mode)
	}
	for _, c := range r.Checks {
		if c.P != nil {
			t.Errorf("%s has a p-value in merged mode", c.Check)
		}
	}
	if r.Checks[0].Verdict != Fail {
		t.Errorf("lock-contention +3pp passes in merged mode: %+v", r.Checks[0])
	}
	w := strings.Join(r.Warnings, "\n")
	if !strings.Contains(w, "2 base and 2 new profile(s): too few for a significance test") || !strings.Contains(w, "capture at least 5 profiles per side") {
		t.Errorf("warning does not say what to do: %s", w)
	}
}

func TestThreeProfilesTooFewForManyChecks(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	// 3 v 3 reaches p = 0.05 at best; with two checks Holm needs 0.025.
	r, err := runSynth(rng, Options{}, 3, defaultSynth(), defaultSynth())
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != ModeMerged || !strings.Contains(strings.Join(r.Warnings, "\n"), "smallest achievable p-value is 0.05, above 0.025") {
		t.Errorf("mode %s, warnings %q", r.Mode, r.Warnings)
	}
	// With one check, 3 v 3 can reach 0.05: the test runs.
	r, err = runSynth(rng, Options{Checks: mustChecks("lock-contention=+1pp")}, 3, defaultSynth(), defaultSynth())
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != ModeUTest {
		t.Errorf("one check, 3 v 3: mode %s (%q)", r.Mode, r.Warnings)
	}
}

func TestMixedSampleTypes(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	g := New(Options{})
	if err := g.Add(result.Base, defaultSynth().draw(rng, "wall.pb.gz")); err != nil {
		t.Fatal(err)
	}
	l := defaultSynth().draw(rng, "cpu.pb.gz")
	l.Profile.SampleType[1] = &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	err := g.Add(result.New, l)
	var st *diff.SampleTypeError
	if err == nil || !strings.Contains(err.Error(), "sample types differ") || !errors.As(err, &st) || st.Has != "samples/count, cpu/nanoseconds" {
		t.Errorf("mixed sample types: %v", err)
	}
}

func TestFocusRemovingEverything(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	g := New(Options{Analysis: diff.Options{Focus: regexp.MustCompile(`^nothing$`)}})
	for side := range 2 {
		if err := g.Add(result.Side(side), defaultSynth().draw(rng, "a.pb.gz")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Report(); err == nil || !strings.Contains(err.Error(), "loosen them") {
		t.Errorf("err = %v", err)
	}
}

// Profiles with no values and no filter given: the error says they are
// empty, not that a filter removed everything; one empty profile among
// others is left out with a warning that says so.
func TestEmptyProfilesWithoutFilters(t *testing.T) {
	empty := func(name string) *profile.Loaded {
		return &profile.Loaded{Source: name, Format: "pprof", Kind: profile.KindWall, Profile: synthProfile([rules.NumBuckets]int64{})}
	}
	g := New(Options{})
	for side := range 2 {
		if err := g.Add(result.Side(side), empty("e.pb.gz")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Report(); err == nil || err.Error() != "base: every profile is empty (no sample has a value); nothing to test" {
		t.Errorf("err = %v", err)
	}
	rng := rand.New(rand.NewSource(1))
	g = New(Options{})
	for side := range 2 {
		for i := range 3 {
			if err := g.Add(result.Side(side), defaultSynth().draw(rng, fmt.Sprintf("%d.pb.gz", i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	g.Add(result.New, empty("e.pb.gz"))
	r, err := g.Report()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Warnings, "new: e.pb.gz is empty (no sample has a value); left out of the test") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

func TestJSONSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, scenario(t, 5), render.JSON); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Verdict string `json:"verdict"`
		Failed  int    `json:"failed"`
		Mode    string `json:"mode"`
		Alpha   float64
		Base    struct{ Profiles int }
		Checks  []struct {
			Check, Name, Target, Threshold, Verdict string
			P                                       *float64
			BaseProfiles                            []float64 `json:"base_profiles"`
			Behind                                  *struct {
				Callers []struct{ Name string }
			}
		}
		Warnings any `json:"warnings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Verdict != "fail" || doc.Failed != 2 || doc.Mode != "u-test" || doc.Alpha != 0.05 || doc.Base.Profiles != 5 {
		t.Errorf("header = %+v", doc)
	}
	c := doc.Checks[0]
	if c.Check != "lock-contention" || c.Target != "bucket" || c.Threshold != "+1pp" || c.Verdict != "fail" || c.P == nil || len(c.BaseProfiles) != 5 || c.Behind == nil {
		t.Errorf("first check = %+v", c)
	}
	if doc.Warnings != nil {
		t.Error("JSON carries warnings")
	}
}

func TestCSVIsRectangular(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, scenario(t, 5), render.CSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 1+5+2 || recs[1][0] != "check" {
		t.Errorf("records: %v", recs)
	}
}

// A method check matches each sample's frames as its profile spelled them
// (`Foo(int)` from one writer and `Foo` from another are one method in
// diff's rows but two names to a regexp), whichever was loaded first.
func TestMethodCheckMatchesTheSamplesSpelling(t *testing.T) {
	load := func(name, text string) *profile.Loaded {
		l, err := profile.Parse(name, []byte(text), 0)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tc := range []struct {
		base, new         string
		wantBase, wantNew float64
		wantVerdict       Verdict
	}{
		{"main;Foo 10\nmain;Bar 90\n", "main;Foo(int) 50\nmain;Bar 50\n", 0, 0.5, Fail},
		{"main;Foo(int) 10\nmain;Bar 90\n", "main;Foo 50\nmain;Bar 50\n", 0.1, 0, Pass},
	} {
		g := New(Options{Checks: mustChecks(`^Foo\(int\)$=+1pp`)})
		if err := g.Add(result.Base, load("base.folded", tc.base)); err != nil {
			t.Fatal(err)
		}
		if err := g.Add(result.New, load("new.folded", tc.new)); err != nil {
			t.Fatal(err)
		}
		r, err := g.Report()
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Checks[0]; c.Base != tc.wantBase || c.New != tc.wantNew || c.Verdict != tc.wantVerdict {
			t.Errorf("base %q, new %q: %v → %v, %s; want %v → %v, %s", tc.base, tc.new, c.Base, c.New, c.Verdict, tc.wantBase, tc.wantNew, tc.wantVerdict)
		}
	}
}

// At --width 100 every line of the gate report fits, coloured or not;
// colour marks FAIL (the headline and the verdicts) and nothing in
// Markdown.
func TestWidthAndColor(t *testing.T) {
	r := scenario(t, 5)
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*m")
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := Write(&buf, r, render.Table, render.Options{Width: 100, Color: color}); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(ansi.ReplaceAllString(buf.String(), ""), "\n") {
			if n := utf8.RuneCountInString(l); n > 100 {
				t.Errorf("color %v: a line of %d columns:\n%s", color, n, l)
			}
		}
		if fails := strings.Count(buf.String(), "\x1b[1;31mFAIL"); color && fails != 1+r.Failed {
			t.Errorf("%d red FAILs, want the headline and %d verdicts:\n%s", fails, r.Failed, buf.String())
		}
		if !color && strings.Contains(buf.String(), "\x1b") {
			t.Error("escape codes without colour")
		}
		if !color {
			golden(t, "gate.synth-lock+3pp.5v5.width-100.table.golden", buf.Bytes())
		}
	}
	var md bytes.Buffer
	if err := Write(&md, r, render.Markdown, render.Options{Width: 100, Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "\x1b") {
		t.Error("escape codes in Markdown")
	}
}
