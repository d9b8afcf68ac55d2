package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/gate/gatetest"
)

// TestGateSharesCannotMove records the lock test program (built from
// diff/gate/testdata/lockprog) 5 times a side: base folds its result into
// a shared total under a mutex, new holds the mutex across all its work,
// and same is base again. Its mutex profiles are all lock contention, and
// its block profiles too (every blocked sample is the one mutex), so no
// share can move: the default gate compares the delay per run instead,
// fails on the regression and passes on the unchanged program; an
// explicit 2x threshold does the same, and an explicit +pp threshold,
// which cannot be evaluated, exits 2 saying what to capture instead. A
// version without the mutex (none) writes profiles without samples: runs
// of zero delay, from which the regression fails too.
func TestGateSharesCannotMove(t *testing.T) {
	dir := t.TempDir()
	gatetest.Record(t, dir, 5, gatetest.Variant{Name: "base"}, gatetest.Variant{Name: "new", Lock: "hold"}, gatetest.Variant{Name: "same"},
		gatetest.Variant{Name: "none", Lock: "none"})
	glob := func(kind, side string) string { return filepath.Join(dir, kind, side, "*.pb.gz") }
	type result struct {
		Verdict string
		Mode    string
		Kind    string
		Notes   []string
		Checks  []struct {
			Check, Measure, Unit, Verdict string
			Threshold                     string
			Base, New                     float64
			P                             *float64
			NewProfiles                   []float64 `json:"new_profiles"`
		}
	}
	gateJSON := func(t *testing.T, want int, args ...string) result {
		t.Helper()
		out, stderr, code := profdiff(t, "", append([]string{"gate", "--format", "json"}, args...)...)
		if code != want {
			t.Fatalf("profdiff gate %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, out, stderr)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return r
	}
	for _, kind := range []string{"mutex", "block"} {
		t.Run(kind, func(t *testing.T) {
			// The default checks adapt: lock-contention compared as delay
			// per run (Go's profiles record no duration), sync dropped
			// as the same samples.
			r := gateJSON(t, 1, "--base", glob(kind, "base"), "--new", glob(kind, "new"))
			if r.Kind != kind || r.Mode != "u-test" || len(r.Checks) != 1 || len(r.Notes) != 1 {
				t.Fatalf("regression: %+v", r)
			}
			c := r.Checks[0]
			if c.Check != "lock-contention" || c.Measure != "per-run" || c.Unit != "nanoseconds" || c.Threshold != "2x" || c.Verdict != "fail" {
				t.Errorf("regression: %+v", c)
			}
			if c.P == nil || c.New < 2*c.Base || *c.P > 0.05 || len(c.NewProfiles) != 5 {
				t.Errorf("regression: delay %v → %v ns per run, p %v, %d new profiles", c.Base, c.New, *c.P, len(c.NewProfiles))
			}
			if !strings.HasPrefix(r.Notes[0], "the delay per run is compared for lock-contention: ") || !strings.Contains(r.Notes[0], "its share cannot move") {
				t.Errorf("note %q does not say why the delay is compared", r.Notes[0])
			}

			// The unchanged program passes. By design the gate fails on
			// noise in at most alpha (5%) of builds, so a failure here is
			// recorded again once: the test then fails on noise in at most
			// 0.25% of runs, and always when the gate cannot tell the
			// program from itself.
			args := []string{"--base", glob(kind, "base"), "--new", glob(kind, "same")}
			if _, _, code := profdiff(t, "", append([]string{"gate"}, args...)...); code == 1 {
				again := t.TempDir()
				gatetest.Record(t, again, 5, gatetest.Variant{Name: "base"}, gatetest.Variant{Name: "same"})
				args = []string{"--base", filepath.Join(again, kind, "base", "*.pb.gz"), "--new", filepath.Join(again, kind, "same", "*.pb.gz")}
			}
			r = gateJSON(t, 0, args...)
			if r.Verdict != "pass" || len(r.Checks) != 1 || r.Checks[0].Measure != "per-run" {
				t.Errorf("unchanged: %+v", r)
			}

			// An explicit factor threshold, in the table.
			out, stderr, code := profdiff(t, "", "gate", "--max", "lock-contention=2x", "--base", glob(kind, "base"), "--new", glob(kind, "new"))
			if code != 1 || !regexp.MustCompile(`(?m)^│ lock-contention +│ +[0-9.]+ [nµm]?s │ +[0-9.]+ [nµm]?s │ +\+[0-9.]+ [nµm]?s \(([0-9.]+x|new)\) │ +2x │ +[0-9.]+ │ FAIL +│$`).MatchString(out) {
				t.Errorf("--max lock-contention=2x: exit %d\n%s\n%s", code, out, stderr)
			}
			if !strings.Contains(out, "the delay per run is compared for lock-contention") || !strings.Contains(out, "threshold 2x, p ") || !strings.Contains(stderr, "gate failed: lock-contention grew +") {
				t.Errorf("--max lock-contention=2x: the report does not say how it compared:\n%s\n%s", out, stderr)
			}

			// From no mutex at all: every base block profile is empty;
			// the mutex profiles hold only the runtime's own locks.
			r = gateJSON(t, 1, "--base", glob(kind, "none"), "--new", glob(kind, "new"))
			if c := r.Checks[0]; len(r.Checks) != 1 || c.Measure != "per-run" || kind == "block" && c.Base != 0 || c.Base > c.New/10 {
				t.Errorf("from none: %+v", r)
			}

			// The html page plots each run's delay against the 2x line.
			out, _, code = profdiff(t, "", "gate", "--format", "html", "--base", glob(kind, "base"), "--new", glob(kind, "new"))
			if code != 1 || !strings.Contains(out, "value per run") || !regexp.MustCompile(`base [0-9.]+ [nµm]?s 2x = [0-9.]+ [nµm]?s`).MatchString(out) {
				t.Errorf("--format html: exit %d, no dot plot of the delay per run with its 2x line", code)
			}

			// Percentage points of a share that cannot move: exit 2.
			_, stderr, code = profdiff(t, "", "gate", "--max", "lock-contention=+2pp", "--base", glob(kind, "base"), "--new", glob(kind, "new"))
			if code != 2 || !strings.Contains(stderr, "lock-contention=+2pp: ") || !strings.Contains(stderr, "cannot move; write lock-contention=2x") || !strings.Contains(stderr, "or capture ") {
				t.Errorf("--max lock-contention=+2pp: exit %d, stderr %q", code, stderr)
			}
		})
	}
	// A bucket mutex profiles never record.
	_, stderr, code := profdiff(t, "", "gate", "--max", "wait=+1pp", "--base", glob("mutex", "base"), "--new", glob("mutex", "new"))
	if code != 2 || !strings.Contains(stderr, "wait=+1pp: mutex profiles record only lock contention, never wait; capture block profiles") {
		t.Errorf("--max wait=+1pp on mutex profiles: exit %d, stderr %q", code, stderr)
	}
}
