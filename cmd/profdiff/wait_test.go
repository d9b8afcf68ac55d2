package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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

// TestWaitCSV: 'profdiff wait --format csv' on the capture folder of
// TestWaitCapture (one side, with its critical path) and on the two of
// TestWaitDiffVerdict has a record for every lock, site, wake-up edge and
// critical path of the JSON, in its order, whatever --top says, each
// with the header's fields and the JSON's values in nanoseconds.
func TestWaitCSV(t *testing.T) {
	tmp := t.TempDir()
	one := []string{waitCapture(t, filepath.Join(tmp, "run"), "8ms")}
	two := []string{"--paths", "0", "--base", waitCapture(t, filepath.Join(tmp, "base"), "4ms", "-outside", "8ms"),
		"--new", waitCapture(t, filepath.Join(tmp, "new"), "8ms", "-outside", "8ms")}
	for _, args := range [][]string{one, two} {
		js, stderr, code := profdiff(t, "", append([]string{"wait", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		var r result.Wait
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := profdiff(t, "", append([]string{"wait", "--format", "csv", "--top", "1"}, args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll() // fails on a record of another length
		if err != nil || len(recs) == 0 {
			t.Fatalf("%q: %v\n%s", args, err, out)
		}
		header := recs[0]
		value := "value_ns"
		if r.Sides == 2 {
			value = "new_ns" // the new side's, index 1
		}
		for _, c := range []string{"section", "lock", "evidence", "name", "waker", "bucket", value} {
			if !slices.Contains(header, c) {
				t.Fatalf("%q: header %q lacks %s", args, header, c)
			}
		}
		field := func(rec []string, c string) string { return rec[slices.Index(header, c)] }
		// want and got are each record's section, lock, names and value.
		var want, got []string
		row := func(section, lock, name, waker string, v [2]float64) {
			want = append(want, strings.Join([]string{section, lock, name, waker, strconv.FormatFloat(v[r.Sides-1], 'g', -1, 64)}, " | "))
		}
		for _, l := range r.Locks {
			row("lock", l.Name+" "+l.Evidence, l.Name, "", l.Waited)
			for _, w := range l.Waiters {
				row("waiter", l.Name+" "+l.Evidence, w.Site, "", w.Value)
			}
			for _, h := range l.Holders {
				row("holder", l.Name+" "+l.Evidence, h.Site, "", h.Value)
			}
		}
		for _, e := range r.Wakeups {
			row("wakeup", " ", e.Waiter, e.Waker, e.Value)
		}
		for _, p := range r.Paths {
			row("path", " ", p.Site, "", p.Elapsed)
		}
		for _, rec := range recs[1:] {
			switch s := field(rec, "section"); s {
			case "lock", "waiter", "holder", "wakeup", "path":
				v, err := strconv.ParseFloat(field(rec, value), 64)
				if err != nil {
					t.Fatalf("%q: %s record %q: %v", args, s, rec, err)
				}
				got = append(got, strings.Join([]string{s, field(rec, "lock") + " " + field(rec, "evidence"), field(rec, "name"), field(rec, "waker"),
					strconv.FormatFloat(v, 'g', -1, 64)}, " | "))
			}
		}
		if len(r.Locks) == 0 || len(r.Wakeups) < 2 || len(args) == 1 && len(r.Paths) == 0 {
			t.Errorf("%q: %d locks, %d wake-up edges, %d paths in the JSON: want locks, more than --top 1 wake-ups, and a path for one side",
				args, len(r.Locks), len(r.Wakeups), len(r.Paths))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: CSV records\n%s\nwant (the JSON's)\n%s", args, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
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
