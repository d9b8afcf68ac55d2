package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/workloads"
	"github.com/profdiff/profdiff/workloads/loadgen"
)

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"demo/baseline", "profdiff-out/20261201-203000-demo/global-lock", "my runs/base", "it's", `jsonserver\.\(\*waitRegistry\)\.acquire`, ""} {
		q := shellQuote(s)
		words, err := shellWords("x " + q)
		if err != nil || len(words) != 2 || words[1] != s {
			t.Errorf("shellQuote(%q) = %s, read back as %q (%v)", s, q, words, err)
		}
	}
	if q := shellQuote("demo/baseline"); q != "demo/baseline" {
		t.Errorf("a plain path is quoted: %s", q)
	}
}

func TestPeekPattern(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).acquire", `jsonserver\.\(\*waitRegistry\)\.acquire`},
		{"main.main", `main\.main`},
		{"System.Threading.Monitor.Enter", `System\.Threading\.Monitor\.Enter`},
	} {
		if got := peekPattern(c.name); got != c.want {
			t.Errorf("peekPattern(%q) = %s, want %s", c.name, got, c.want)
		}
	}
}

// demoFixture is the demo run that the demo's tests read (sharedDemo).
var demoFixture struct {
	once           sync.Once
	dir, out, fail string
}

// sharedDemo runs the demo once per test binary (1 s a variant after a
// 100 ms warm-up, 2 cores, 16 connections, no perf, no repeated pairs)
// into a folder under fixtureRoot, and returns the folder and the demo's
// stdout. Tests only read the folder. It skips with -short.
func sharedDemo(t *testing.T) (dir, out string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the JSON server twice")
	}
	demoFixture.once.Do(func() {
		dir, err := fixtureDir("demo")
		if err != nil {
			demoFixture.fail = err.Error()
			return
		}
		out, stderr, code := profdiff(t, "", "demo", "--duration", "1s", "--warmup", "100ms", "--cores", "2", "--connections", "16", "--perf=false", "--pairs", "1", "--out", dir)
		if code != 0 {
			demoFixture.fail = fmt.Sprintf("demo: exit %d: %s", code, stderr)
			return
		}
		demoFixture.dir, demoFixture.out = dir, out
	})
	if demoFixture.fail != "" {
		t.Fatal(demoFixture.fail)
	}
	return demoFixture.dir, demoFixture.out
}

// The demo prints the exact follow-up commands for the folders it just
// wrote, and each of them runs: parsed from the demo's output as a shell
// would, then run through run().
func TestDemoFollowUpsRun(t *testing.T) {
	t.Parallel() // a few seconds of wall time, overlapping the other slow tests
	dir, out := sharedDemo(t)
	// The verdict leads the output and says the lock-contention growth,
	// as shares and as goroutines waiting, led by the registry's acquire:
	// as the principal change, or after a larger one (gc grows too at
	// some core counts); said once.
	para, _, _ := strings.Cut(out, "\n\n")
	principal := regexp.MustCompile(`^Verdict: lock-contention grew from [0-9.]+% to [0-9.]+% \([0-9.]+ goroutines → [0-9.]+ goroutines`)
	also := regexp.MustCompile(`(?m)^Also grew: .*lock-contention [0-9.]+% → [0-9.]+% \([0-9.]+ goroutines → [0-9.]+ goroutines\), (led by [^;]*, )?called from [^;]*jsonserver\.\(\*waitRegistry\)\.acquire`)
	switch {
	case principal.MatchString(para):
		if !regexp.MustCompile(`(?m)^Led by .*called from .*jsonserver\.\(\*waitRegistry\)\.acquire \(\+`).MatchString(para) {
			t.Errorf("the verdict is not led by the registry's acquire:\n%s", para)
		}
	case also.MatchString(para):
		t.Logf("lock contention is not the principal change:\n%s", para)
	default:
		// On a loaded machine a 1 s run may contend too little to tell
		// from noise: then the JSON verdict of the same diff must not
		// name it either (the text and the data agree).
		if named := demoVerdictNames(t, dir, "lock-contention"); named {
			t.Errorf("the JSON verdict names lock-contention, the text does not say its growth in shares and goroutines:\n%s", out)
		} else {
			t.Logf("lock contention too small to name in this run:\n%s", para)
		}
	}
	// (On a busy machine the demo may also say that throughput rose
	// "although lock-contention grew": a sentence on the throughput, not
	// the growth said again.)
	said := strings.Count(out, "lock-contention grew") - strings.Count(out, "although lock-contention grew")
	if n := said + strings.Count(out, "Lock contention: "); n > 1 {
		t.Errorf("the lock-contention growth is said %d times:\n%s", n, out)
	}
	// The commands start the way this process was started: here the test
	// binary by its path, which runs tests, not commands, so the rest of
	// each line goes through run().
	exe, _ := os.Executable()
	cwd, _ := os.Getwd()
	prog := invokedAs(exe, os.Args[0], cwd)
	var cmds [][]string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "  "+prog+" ") {
			continue
		}
		words, err := shellWords(strings.TrimPrefix(line, "  "+prog+" "))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		cmds = append(cmds, words)
	}
	var kinds, peeks int
	for _, args := range cmds {
		if !strings.Contains(strings.Join(args, " "), dir) {
			t.Errorf("follow-up %q does not name the demo's folders under %s", args, dir)
		}
		o, stderr, code := profdiff(t, "", args...)
		if code != 0 || !strings.Contains(o, "Bucket") {
			t.Errorf("follow-up %q: exit %d, stderr %s\n%s", args, code, stderr, o)
		}
		switch args[1] {
		case "--kind":
			kinds++
		case "--peek":
			peeks++
			// The drill-down lists the leading method's callers and
			// callees (the lock it takes).
			if !strings.Contains(o, "\npeek ") || !strings.Contains(o, "caller") || !strings.Contains(o, "callee") {
				t.Errorf("follow-up %q shows no peek rows:\n%s", args, o)
			}
		}
	}
	if kinds == 0 || peeks != 1 {
		t.Errorf("want a --kind and one --peek follow-up, got %q in:\n%s", cmds, out)
	}
	if !strings.Contains(out, prog+" diff --kind mutex "+dir+"/baseline "+dir+"/global-lock\n") {
		t.Errorf("no mutex follow-up on %s:\n%s", dir, out)
	}
}

// A demo run whose capture came back empty fails with the capture's own
// causes, not with what reading its folder would say ("is a directory").
func TestDemoRunWithoutProfiles(t *testing.T) {
	cfg := workloads.RunConfig{Out: "demo/baseline"}
	for _, c := range []struct {
		m    *capture.Manifest
		want string
	}{
		{nil, "no capture written to demo/baseline"},
		{&capture.Manifest{Errors: []string{"cpu: connection refused", "trace: connection refused"}}, "no profile captured in demo/baseline: cpu: connection refused; trace: connection refused"},
		{&capture.Manifest{}, "no profile captured in demo/baseline: the server exposed none"},
		{&capture.Manifest{Interrupted: true, Files: []capture.File{{Kind: "cpu", Path: "cpu.pb.gz"}}, Errors: []string{"load: interrupted"}}, "the capture in demo/baseline is incomplete: load: interrupted"},
	} {
		err := capturedSomething(&workloads.Result{Config: cfg, Manifest: c.m})
		if err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v; want %q", c.m, err, c.want)
		}
	}
	ok := &workloads.Result{Config: cfg, Manifest: &capture.Manifest{Files: []capture.File{{Kind: "wall", Path: "wall.pb.gz"}}}}
	if err := capturedSomething(ok); err != nil {
		t.Errorf("a capture with a profile: %v", err)
	}
}

// demoVerdictNames reports whether the JSON verdict of the demo's diff in
// dir names bucket as its principal or a further change.
func demoVerdictNames(t *testing.T, dir, bucket string) bool {
	t.Helper()
	out, stderr, code := profdiff(t, "", "diff", "--format", "json", filepath.Join(dir, "baseline"), filepath.Join(dir, "global-lock"))
	if code != 0 {
		t.Fatalf("diff --format json: exit %d: %s", code, stderr)
	}
	var r struct {
		Verdict struct {
			Principal *struct{ Bucket string }  `json:"principal"`
			Also      []struct{ Bucket string } `json:"also"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if p := r.Verdict.Principal; p != nil && p.Bucket == bucket {
		return true
	}
	for _, c := range r.Verdict.Also {
		if c.Bucket == bucket {
			return true
		}
	}
	return false
}

// The demo's page charts both runs' requests/s and p99 latency, a bar a
// run, and names the run whose requests failed.
func TestDemoCharts(t *testing.T) {
	run := func(rps, p99 float64, failed int64) *workloads.Result {
		return &workloads.Result{Config: workloads.RunConfig{Cores: 2},
			Load: &loadgen.Report{RPSOK: rps, LatencyMS: loadgen.Latency{P99: p99}, Non2xx: map[string]int64{"503": failed}}}
	}
	cs := demoCharts([2]*workloads.Result{run(12000, 3.5, 0), run(6100, 9.25, 7)})
	if len(cs) != 2 {
		t.Fatalf("%d charts, want requests/s and p99", len(cs))
	}
	rps, p99 := cs[0].(*report.Chart), cs[1].(*report.Chart)
	if rps.Title != "Throughput at 2 cores" || rps.Kind != report.ChartBars || len(rps.Series) != 1 {
		t.Fatalf("requests/s chart %+v", rps)
	}
	pts := rps.Series[0].Points
	if len(pts) != 2 || pts[0].Label != "baseline" || pts[0].Y != 12000 || pts[1].Label != "global-lock" || pts[1].Y != 6100 {
		t.Errorf("requests/s bars %+v", pts)
	}
	if rps.Note != "Requests/s counts only 2xx responses. global-lock: 7 failed requests." {
		t.Errorf("note %q; want the run with failed requests named", rps.Note)
	}
	if q := p99.Series[0].Points; len(q) != 2 || q[0].Y != 3.5 || q[1].Y != 9.25 {
		t.Errorf("p99 bars %+v", q)
	}
}

// The follow-up commands start as the demo was started: `go run` (whose
// binary's real location a tiny program built with go run reports), a
// profdiff the shell found in the PATH, or a binary by its path.
func TestInvokedAs(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to ask where go run puts its binary")
	}
	mod := t.TempDir()
	main := "package main\n\nimport (\"fmt\"; \"os\")\n\nfunc main() { e, _ := os.Executable(); fmt.Print(e, \"\\n\", os.Args[0]) }\n"
	writeDemoFile(t, filepath.Join(mod, "go.mod"), "module example.com/probe\n\ngo 1.22\n")
	writeDemoFile(t, filepath.Join(mod, "cmd", "profdiff", "main.go"), main)
	cmd := exec.Command(goBin, "run", "./cmd/profdiff")
	cmd.Dir = mod
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run: %v", err)
	}
	goRunExe, goRunArg0, _ := strings.Cut(string(b), "\n")
	// go run may also keep the binary in the build cache (as it does
	// profdiff's own with Go 1.26), as GOCACHE/XX/HASH-d/NAME: that is one
	// too, and a binary elsewhere is not.
	cached := filepath.Join(goCache(), "29", "29af0b820ea6f976d2ec862a4376c7963b7fd323f65c5f01fdcc2ab3c0601ba9-d", "profdiff")
	if goCache() != "" && !isGoRunBinary(cached) {
		t.Errorf("%s is not taken for go run's binary", cached)
	}
	if isGoRunBinary("/opt/tools/bin/profdiff") || isGoRunBinary(filepath.Join(t.TempDir(), "x-d", "profdiff")) {
		t.Error("an installed binary is taken for go run's")
	}
	root, _ := filepath.Abs("../..") // this module's root (the test runs in cmd/profdiff)
	for _, c := range []struct{ cwd, want string }{
		{root, "go run ./cmd/profdiff"},
		{filepath.Join(root, "cmd", "profdiff"), "go run ."},
		{filepath.Join(root, "workloads", "child"), "go run ../../cmd/profdiff"},
		{t.TempDir(), "go run github.com/profdiff/profdiff/cmd/profdiff@latest"},
	} {
		if got := invokedAs(goRunExe, goRunArg0, c.cwd); got != c.want {
			t.Errorf("go run binary %s from %s: %q, want %q", goRunExe, c.cwd, got, c.want)
		}
	}
	bin := "/opt/tools/bin/profdiff"
	for _, c := range []struct{ args0, cwd, want string }{
		{"profdiff", root, "profdiff"},                 // found in the PATH
		{"./profdiff", "/opt/tools/bin", "./profdiff"}, // as typed
		{bin, "/opt/tools/bin", "./profdiff"},          // shorter relative
		{bin, root, bin},
		{"/opt/my tools/profdiff", root, "'/opt/my tools/profdiff'"},
	} {
		if got := invokedAs(bin, c.args0, c.cwd); got != c.want {
			t.Errorf("args0 %s in %s: %q, want %q", c.args0, c.cwd, got, c.want)
		}
	}
}

// writeDemoFile writes text to path, making its folder.
func writeDemoFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The demo's verdict says when the machine was too busy, what the extra
// pairs showed, and when throughput rose against a waiting bucket's
// growth; a quiet run whose throughput fell gets none of it.
func TestDemoCautions(t *testing.T) {
	grew := &result.Result{Verdict: &result.Verdict{Grew: true, Principal: &result.VerdictChange{Bucket: rules.LockContention}}}
	runs := func(base, nw float64) [2]*workloads.Result {
		return [2]*workloads.Result{{Load: &loadgen.Report{RPSOK: base}}, {Load: &loadgen.Report{RPSOK: nw}}}
	}
	busy := workloads.Conditions{Busy: true, Sentence: "The machine was too busy.", Pairs: "5 interleaved pairs disagree."}
	got := demoCautions(grew, runs(6596, 7261), busy)
	want := []string{"The machine was too busy.", "5 interleaved pairs disagree.",
		"Throughput rose (6596 → 7261 requests/s) although lock-contention grew: the throughput change goes against the verdict."}
	if !slices.Equal(got, want) {
		t.Errorf("busy, throughput up: %q", got)
	}
	if got := demoCautions(grew, runs(17418, 12966), workloads.Conditions{}); len(got) != 0 {
		t.Errorf("quiet, throughput down: %q", got)
	}
	if got := demoCautions(&result.Result{}, runs(100, 200), workloads.Conditions{}); len(got) != 0 {
		t.Errorf("no verdict: %q", got)
	}
}

// --pairs takes 1 to 5.
func TestDemoPairsFlag(t *testing.T) {
	for _, v := range []string{"0", "6"} {
		_, stderr, code := profdiff(t, "", "demo", "--pairs", v)
		if code != 2 || !strings.Contains(stderr, "profdiff: --pairs must be 1 to 5, not "+v) {
			t.Errorf("--pairs %s: exit %d, %s", v, code, stderr)
		}
	}
}
