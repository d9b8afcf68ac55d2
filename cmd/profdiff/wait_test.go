package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/wait/waittest"
	"github.com/profdiff/profdiff/profile/capture"
)

// waitCapture writes into dir a capture folder of a run of package wait's
// test program (waittest; holdSlow holding its lock for hold each time
// while four goroutines wait in waitHere): its mutex and block profiles
// and execution trace, as profdiff capture would.
func waitCapture(t *testing.T, dir, hold string, more ...string) string {
	t.Helper()
	run := waittest.Program(t, append([]string{"-mode", "holdslow", "-hold", hold}, more...)...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &capture.Manifest{Format: capture.ManifestFormat, GoVersion: runtime.Version(), Complete: true,
		Params: map[string]any{"program": "waitprog -hold " + hold}}
	for _, f := range []capture.File{{Kind: "mutex", Path: "mutex.pb.gz"}, {Kind: "block", Path: "block.pb.gz"}, {Kind: "trace", Path: "trace.out"}} {
		data, err := os.ReadFile(run.Path(f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Path), data, 0o644); err != nil {
			t.Fatal(err)
		}
		f.Bytes = int64(len(data))
		m.Files = append(m.Files, f)
	}
	if err := capture.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestWaitCapture: 'profdiff wait' on a capture folder reads its mutex and
// block profiles and its trace together, and its verdict names holdSlow,
// the holder of the lock waitHere waits for.
func TestWaitCapture(t *testing.T) {
	dir := waitCapture(t, filepath.Join(t.TempDir(), "run"), "8ms")
	out, stderr, code := profdiff(t, "", "wait", "--format", "markdown", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"holds the lock `main.waitHere` waits for",
		"### Lock `main.waitHere ← main.holdSlow` (mutex+block)",
		"### Lock `main.waitHere ← main.holdSlow` (trace)",
		"matched by delay totals: main.holdSlow released",
		"## Wake-ups: who ended each wait",
		"## Critical path of `",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if !strings.HasPrefix(out, "**Verdict:** `main.holdSlow`") && !strings.Contains(out, "`main.holdSlow` holds the lock") {
		t.Errorf("the verdict does not name holdSlow:\n%s", out)
	}
}

// TestWaitDiffVerdict: the diff of the program against a version holding
// the lock twice as long (4 ms, then 8 ms, each followed by 8 ms of work
// outside it: held a third of the time, then half) names holdSlow in its
// verdict, as the principal holder of the growth; the JSON carries the
// same verdict.
func TestWaitDiffVerdict(t *testing.T) {
	tmp := t.TempDir()
	base := waitCapture(t, filepath.Join(tmp, "base"), "4ms", "-outside", "8ms")
	next := waitCapture(t, filepath.Join(tmp, "new"), "8ms", "-outside", "8ms")
	out, stderr, code := profdiff(t, "", "wait", "--format", "json", "--paths", "0", "--base", base, "--new", next)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r result.Wait
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Sides != 2 || r.Verdict.Holder != "main.holdSlow" || r.Verdict.Share < 0.5 {
		t.Errorf("verdict %+v, want main.holdSlow explaining most of the growth", r.Verdict)
	}
	if len(r.Paths) != 0 {
		t.Errorf("--paths 0 gave %d critical paths", len(r.Paths))
	}
	text, _, _ := profdiff(t, "", "wait", "--paths", "0", "--base", base, "--new", next)
	if !strings.Contains(text, "main.holdSlow, holding the lock main.waitHere waits for, explains") {
		t.Errorf("the table's verdict does not name holdSlow:\n%s", text)
	}
}

// TestWaitBadInput: a file that is no profile fails with exit 2 naming it;
// a capture folder without the profiles wait reads is a usage error.
func TestWaitBadInput(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad.pb.gz")
	if err := os.WriteFile(bad, []byte("not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"wait", bad}, bad},
		{[]string{"wait", fakeCaptureDir(t, filepath.Join(tmp, "cpu"), "cpu")}, "has no mutex, block, trace or perf profile"},
		{[]string{"wait"}, "want at least one profile"},
		{[]string{"wait", "--depth", "0", bad}, "--depth"},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestWaitPerfPaths: 'profdiff wait' on a perf recording with wake-ups
// (chain.c, C waiting on B, which waits on the mutex A holds in a_work)
// shows the critical path --focus picks, with a_work on it, and its JSON
// holds it; the same text on standard input has none, and a warning,
// once, says so.
func TestWaitPerfPaths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.txt")
	waittest.PerfChain(t, path)
	stdout, stderr, code := profdiff(t, "", "wait", "--format", "json", "--focus", "c_wait", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r result.Wait
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Paths) != 1 {
		t.Fatalf("paths %+v, want C's", r.Paths)
	}
	var aWork bool
	for _, f := range r.Paths[0].Functions {
		aWork = aWork || f.Name == "a_work"
	}
	if !aWork {
		t.Errorf("C's path charges %+v, want a_work among them", r.Paths[0].Functions)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = profdiff(t, string(text), "wait", "--format", "json", "--focus", "c_wait", "-")
	const warning = "a perf recording not read from a file has no critical path"
	var in result.Wait
	if err := json.Unmarshal([]byte(stdout), &in); err != nil {
		t.Fatal(err)
	}
	if code != 0 || strings.Count(stderr, warning) != 1 || len(in.Paths) != 0 {
		t.Errorf("from standard input: exit %d, %d paths, stderr %q; want 0, none, and the warning once", code, len(in.Paths), stderr)
	}
}
