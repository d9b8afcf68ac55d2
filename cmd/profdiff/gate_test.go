package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/render/browser"
)

// gateWorkers is the number of goroutines running the hot path in a
// captured run: more than the 2 CPUs CI has, so with the mutex most of them
// queue on it.
const gateWorkers = 8

// gateProbeHotPath is the test program's hot path: a little arithmetic,
// under mu when mu is non-nil (the regression: a mutex added on the hot
// path). Its name is distinctive so the test can find it in the report.
//
//go:noinline
func gateProbeHotPath(mu *sync.Mutex, state *uint64) {
	if mu != nil {
		mu.Lock()
		defer mu.Unlock()
	}
	x := *state
	for range 2000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	*state = x
}

func gateWorker(mu *sync.Mutex, stop *atomic.Bool, started, wg *sync.WaitGroup) {
	defer wg.Done()
	state := uint64(88172645463325252)
	started.Done()
	for !stop.Load() {
		gateProbeHotPath(mu, &state)
		// Yield between requests, as a server does between reads: with 8
		// CPU-bound goroutines on 2 CPUs a goroutine snapshot would
		// otherwise wait a long time for each running one to stop.
		runtime.Gosched()
	}
}

// startGateWorkers starts gateWorkers goroutines running the test
// program's hot path, with the contended mutex when contended, and
// returns once all run; the function it returns stops them and waits.
func startGateWorkers(contended bool) (stop func()) {
	var mu *sync.Mutex
	if contended {
		mu = new(sync.Mutex)
	}
	var stopped atomic.Bool
	var started, wg sync.WaitGroup
	started.Add(gateWorkers)
	for range gateWorkers {
		wg.Add(1)
		go gateWorker(mu, &stopped, &started, &wg)
	}
	started.Wait()
	return func() {
		stopped.Store(true)
		wg.Wait()
	}
}

// captureGateRun runs the test program once, with or without the contended
// mutex, and writes what it did as a wall-clock-style profile: gateSnapshots
// goroutine-profile snapshots (every goroutine's stack, as fgprof samples
// them) merged into one pprof profile, so a goroutine queued on the mutex
// counts once per snapshot. Goroutine snapshots rather than a CPU profile:
// on 2 CPUs a CPU profile sees contention only as a few spinning samples,
// while every snapshot sees most of the 8 workers parked in Lock.
func captureGateRun(t *testing.T, path string, contended bool) {
	t.Helper()
	const gateSnapshots = 20
	stopWorkers := startGateWorkers(contended)
	var snaps []*pprofile.Profile
	for range gateSnapshots {
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
			t.Fatal(err)
		}
		p, err := pprofile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, p)
		time.Sleep(3 * time.Millisecond) // the scenario: the sampling interval between snapshots, not synchronization
	}
	stopWorkers()
	p, err := pprofile.Merge(snaps)
	if err != nil {
		t.Fatal(err)
	}
	writePprofFile(t, path, p)
}

// TestGateRealRegression captures the test program 5 times without the
// mutex (base), 5 times with it (new) and 5 more times without it (same):
// the gate fails on lock-contention and names the hot path, the caller of
// Lock, in its report; between base and same it passes.
func TestGateRealRegression(t *testing.T) {
	dir := t.TempDir()
	sides := []string{"base", "new", "same"}
	for _, side := range sides {
		if err := os.Mkdir(filepath.Join(dir, side), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Interleaved, so that whatever else the test binary does (goroutines
	// of earlier tests winding down) drifts into every side alike.
	for i := 1; i <= 5; i++ {
		for _, side := range sides {
			captureGateRun(t, filepath.Join(dir, side, fmt.Sprintf("wall-%d.pb.gz", i)), side == "new")
		}
	}
	glob := func(side string) string { return filepath.Join(dir, side, "*.pb.gz") }

	md := filepath.Join(dir, "gate.md")
	summary := filepath.Join(dir, "summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	out, stderr, code := profdiff(t, "", "gate", "--base", glob("base"), "--new", glob("new"), "--markdown", md)
	if code != 1 {
		t.Fatalf("regression: exit %d, want 1\n%s\n%s", code, out, stderr)
	}
	if !regexp.MustCompile(`(?m)^│ lock-contention +│ .*│ FAIL +│$`).MatchString(out) {
		t.Errorf("no failed lock-contention row:\n%s", out)
	}
	if !strings.Contains(stderr, "gate failed: lock-contention grew +") {
		t.Errorf("stderr does not say what failed: %q", stderr)
	}
	report, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	// The hot path must be named as the caller behind the lock-contention
	// failure, not just somewhere in the report.
	behind := string(report)
	if i := strings.Index(behind, "#### Behind `lock-contention`"); i >= 0 {
		behind = behind[i:]
		if j := strings.Index(behind[1:], "#### "); j >= 0 {
			behind = behind[:j+1]
		}
	} else {
		t.Fatalf("markdown has no section behind lock-contention:\n%s", report)
	}
	if !regexp.MustCompile("(?m)^\\| `[^`]*gateProbeHotPath` +\\| +0\\.00% \\|").MatchString(behind) {
		t.Errorf("the lock-contention section does not name gateProbeHotPath as a caller grown from 0%%:\n%s", behind)
	}
	if !strings.Contains(behind, "Mutex") {
		t.Errorf("the lock-contention section names no mutex frame:\n%s", behind)
	}
	if s, err := os.ReadFile(summary); err != nil || !bytes.Equal(bytes.TrimSuffix(s, []byte("\n")), report) {
		t.Errorf("GITHUB_STEP_SUMMARY does not hold the Markdown report (err %v)", err)
	}

	// Identical sides: the same program twice, 5 runs each.
	os.Remove(summary)
	out, stderr, code = profdiff(t, "", "gate", "--base", glob("base"), "--new", glob("same"), "--format", "json")
	if code != 0 {
		t.Fatalf("identical sides: exit %d, want 0\n%s\n%s", code, out, stderr)
	}
	var r struct {
		Verdict string
		Mode    string
		Checks  []struct {
			Check   string
			Verdict string
			P       *float64
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Verdict != "pass" || r.Mode != "u-test" || len(r.Checks) != 2 || r.Checks[0].Check != "lock-contention" || r.Checks[0].P == nil {
		t.Errorf("identical sides: %+v", r)
	}
	if s, err := os.ReadFile(summary); err != nil || !strings.Contains(string(s), "### profdiff gate: pass (2 checks)") {
		t.Errorf("GITHUB_STEP_SUMMARY lacks the passing report: %q, %v", s, err)
	}

	gateHTML(t, glob("base"), glob("new"))
}

// gateHTML checks the failing gate's html page in a real browser: it loads
// clean, and each check's dot plot has a dot per profile of each side (5
// runs a side) and its threshold line.
func gateHTML(t *testing.T, base, new string) {
	out, stderr, code := profdiff(t, "", "gate", "--base", base, "--new", new, "--format", "html")
	if code != 1 || !strings.HasPrefix(out, "<!DOCTYPE html>") {
		t.Fatalf("gate --format html: exit %d, want 1 and a page\n%.300s\n%s", code, out, stderr)
	}
	path := filepath.Join(t.TempDir(), "gate.html")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	p := browser.Open(t, path)
	var charts []struct {
		Title      string
		Dots       int
		Thresholds int
	}
	var flames int
	p.Eval(`document.querySelectorAll('script[type="application/json"][id^="flame"]').length`, &flames)
	if flames != 1 {
		t.Errorf("%d flame graphs on the gate's page; want the merged sides' one", flames)
	}
	p.Eval(`[...document.querySelectorAll("svg.chart")].filter(c => c.querySelector(".chart-title").textContent.match(/: (FAIL|pass)/)).map(c => ({
		Title: c.querySelector(".chart-title").textContent,
		Dots: c.querySelectorAll("g.point").length,
		Thresholds: c.querySelectorAll("g.threshold").length}))`, &charts)
	if len(charts) != 2 {
		t.Fatalf("want a dot plot per check (2), got %+v", charts)
	}
	for _, c := range charts {
		if c.Dots != 10 || c.Thresholds != 1 {
			t.Errorf("chart %q: %d dots, %d threshold lines; want 10 (5 profiles a side) and 1", c.Title, c.Dots, c.Thresholds)
		}
	}
	if !strings.HasPrefix(charts[0].Title, "lock-contention: FAIL") {
		t.Errorf("first chart %q; want the failed lock-contention check", charts[0].Title)
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("the page logged errors: %q", errs)
	}
	for _, u := range p.Requests() {
		if u != p.URL {
			t.Errorf("the page requested %s", u)
		}
	}
}

// writeTinyProfile writes a gzipped pprof profile with one sample type and
// the given stacks (leaf first) and values.
func writeTinyProfile(t *testing.T, path, typ, unit string, stacks map[string]int64) {
	t.Helper()
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: typ, Unit: unit}},
		PeriodType: &pprofile.ValueType{Type: typ, Unit: unit},
		Period:     1,
	}
	fns := map[string]*pprofile.Location{}
	keys := make([]string, 0, len(stacks))
	for k := range stacks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := &pprofile.Sample{Value: []int64{stacks[k]}}
		for _, name := range strings.Split(k, ";") {
			l, ok := fns[name]
			if !ok {
				f := &pprofile.Function{ID: uint64(len(fns) + 1), Name: name}
				p.Function = append(p.Function, f)
				l = &pprofile.Location{ID: f.ID, Line: []pprofile.Line{{Function: f}}}
				p.Location = append(p.Location, l)
				fns[name] = l
			}
			s.Location = append(s.Location, l)
		}
		p.Sample = append(p.Sample, s)
	}
	writePprofFile(t, path, p)
}

// writePprofFile writes p, gzipped, to path.
func writePprofFile(t *testing.T, path string, p *pprofile.Profile) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestGateBadInput(t *testing.T) {
	dir := t.TempDir()
	wall := filepath.Join(dir, "wall.pb.gz")
	writeTinyProfile(t, wall, "samples", "count", map[string]int64{"main.work;main.main": 10})
	delay := filepath.Join(dir, "delay.pb.gz")
	writeTinyProfile(t, delay, "delay", "nanoseconds", map[string]int64{"sync.(*Mutex).Unlock;main.main": 10})
	empty := filepath.Join(dir, "empty.pb.gz")
	os.WriteFile(empty, nil, 0o644)
	badJSON := filepath.Join(dir, "bad.json")
	os.WriteFile(badJSON, []byte(`{"max": {"lock": "+2pp"}}`), 0o644)
	badAlpha := filepath.Join(dir, "alpha.json")
	os.WriteFile(badAlpha, []byte(`{"alpha": 1.5}`), 0o644)

	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"gate", "--base", filepath.Join(dir, "missing.pb.gz"), "--new", wall}, "missing.pb.gz: no such file or directory"},
		{[]string{"gate", "--base", filepath.Join(dir, "none", "*.pb.gz"), "--new", wall}, "matches no files"},
		{[]string{"gate", "--base", empty, "--new", wall}, "empty.pb.gz: empty file"},
		{[]string{"gate", "--base", wall, "--new", delay}, "sample types differ: " + wall + " has samples/count, " + delay + " has delay/nanoseconds (pick a shared one with --sample-index"},
		{[]string{"gate", "--base", wall, "--new", wall, "--max", "lock-contention=2"}, `--max "lock-contention=2": lock-contention: threshold "2" has no unit: write +Npp`},
		{[]string{"gate", "--base", wall, "--new", wall, "--max", "lock=+2pp"}, `unknown bucket "lock" in threshold (want cpu, wait, lock-contention, gc, io, syscall or sync)`},
		{[]string{"gate", "--base", wall, "--new", wall, "--max", "gc+25%"}, "want BUCKET=THRESHOLD, e.g. lock-contention=+2pp"},
		{[]string{"gate", "--base", wall, "--new", wall, "--max", "gc=-5pp"}, "is negative"},
		{[]string{"gate", "--base", wall, "--new", wall, "--max-method", "sync.(*Mutex=+1pp"}, "escape ( ) * . with a backslash"},
		{[]string{"gate", "--base", wall, "--new", wall, "--max", "gc=+1pp", "--max", "gc=+2pp"}, "threshold for gc given twice; keep one"},
		{[]string{"gate", "--base", wall, "--new", wall, "--alpha", "0"}, "--alpha: alpha 0 is not between 0 and 1"},
		{[]string{"gate", "--base", wall, "--new", wall, "--config", badJSON}, `bad.json: "max": unknown bucket "lock"`},
		{[]string{"gate", "--base", wall, "--new", wall, "--config", badAlpha}, `alpha.json: "alpha": alpha 1.5 is not between 0 and 1`},
		{[]string{"gate", "--base", wall, "--new", wall, "--config", filepath.Join(dir, "nope.json")}, "--config: open"},
		{[]string{"gate", "--base", wall}, "both --base and --new need at least one profile"},
		{[]string{"gate", wall}, "want --base and --new profiles (or BASE NEW), got 1"},
		{[]string{"gate", "--base", wall, "--new", wall, wall}, "not both"},
		{[]string{"gate", "--cum", wall, wall}, "--cum does not apply"},
		{[]string{"gate", "--by", "decider", wall, wall}, "--by does not apply"},
		{[]string{"gate", "--format", "xml", wall, wall}, `unknown format "xml"`},
		{[]string{"gate", "--focus", "^nothing$", wall, wall}, "no profile has samples left after the focus/ignore filters; loosen them"},
		{[]string{"gate", "-", "-"}, "standard input (-) can be read only once"},
		{[]string{"gate", "--markdown", filepath.Join(dir, "no", "such", "dir.md"), wall, wall}, "--markdown: " + filepath.Join(dir, "no", "such", "dir.md") + ": folder " + filepath.Join(dir, "no", "such") + " does not exist"},
	}
	for _, c := range cases {
		out, stderr, code := profdiff(t, "", c.args...)
		if code != 2 {
			t.Errorf("profdiff %s: exit %d, want 2 (stdout %q, stderr %q)", strings.Join(c.args, " "), code, out, stderr)
		}
		if !strings.Contains(stderr, c.msg) {
			t.Errorf("profdiff %s: stderr %q lacks %q", strings.Join(c.args, " "), stderr, c.msg)
		}
	}
}

func TestGateConfigAndFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gate.json")
	// .NET 10 → 11 fixture: lock-contention 1.78% → 6.46%, gc 5.52% → 10.91%.
	os.WriteFile(cfg, []byte(`{"max": {"lock-contention": "+2pp", "gc": "+200%"}}`), 0o644)

	out, stderr, code := profdiff(t, "", "gate", "--config", cfg, net10, net11)
	if code != 1 {
		t.Fatalf("config: exit %d, want 1\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"profdiff gate: FAIL (1 of 2 checks failed)",
		"+4.68pp",
		"n/a",
		"no significance test (too few profiles)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "1 base and 1 new profile(s): too few for a significance test") || !strings.Contains(stderr, "capture at least 4 profiles per side") {
		t.Errorf("stderr lacks the few-profiles warning: %s", stderr)
	}
	if !strings.Contains(stderr, "profdiff: gate failed: lock-contention grew +4.68pp (threshold +2pp)") {
		t.Errorf("stderr lacks the failure line: %s", stderr)
	}
	if !regexp.MustCompile(`(?m)^│ gc +│ +5\.52% │ +10\.91% │ +\+5\.39pp \(\+97\.\d%\) │ +\+200% │ +n/a │ pass +│$`).MatchString(out) {
		t.Errorf("no passing relative gc row:\n%s", out)
	}

	// A flag overrides the config entry of the same name.
	out, stderr, code = profdiff(t, "", "gate", "--config", cfg, "--max", "lock-contention=+5pp", "--format", "markdown", net10, net11)
	if code != 0 {
		t.Fatalf("override: exit %d, want 0\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "### profdiff gate: pass (2 checks)") || !strings.Contains(out, "|      +5pp |") || strings.Contains(out, "+2pp") {
		t.Errorf("override not applied:\n%s", out)
	}

	// Without any threshold the defaults apply: lock-contention=+1pp, sync=+5pp.
	out, _, code = profdiff(t, "", "gate", "--format", "csv", net10, net11)
	if code != 1 || !strings.Contains(out, "check,lock-contention,lock-contention,+1pp,") || !strings.Contains(out, "check,sync,sync,+5pp,") {
		t.Errorf("defaults: exit %d\n%s", code, out)
	}

	// Identical sides pass, and a step summary that cannot be written is
	// a warning, not a failed job.
	t.Setenv("GITHUB_STEP_SUMMARY", dir) // a directory: cannot be opened for appending
	out, stderr, code = profdiff(t, "", "gate", net10, net10)
	if code != 0 {
		t.Errorf("identical sides: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "warning: GITHUB_STEP_SUMMARY: ") {
		t.Errorf("no warning about the step summary: %q", stderr)
	}
}
