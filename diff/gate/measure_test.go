package gate

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/gate/gatetest"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

// lockRuns records the lock test program 5 times without (base) and with
// (new) the mutex held across its work, its main joining the workers as
// join says, and loads the profiles of kind ("mutex" or "block") of each
// side.
func lockRuns(t *testing.T, join string) map[string][2][]*profile.Loaded {
	dir := t.TempDir()
	gatetest.Record(t, dir, 5, gatetest.Variant{Name: "base", Join: join}, gatetest.Variant{Name: "new", Lock: "hold", Join: join})
	out := map[string][2][]*profile.Loaded{}
	for _, kind := range []string{"mutex", "block"} {
		var sides [2][]*profile.Loaded
		for side, name := range []string{"base", "new"} {
			for i := 1; i <= 5; i++ {
				// A run without contention writes a profile without
				// samples: a run of zero delay, as the command loads it.
				l, err := profile.Load(t.Context(), filepath.Join(dir, kind, name, fmt.Sprintf("run-%d.pb.gz", i)), profile.Options{AllowEmpty: true})
				if err != nil {
					t.Fatal(err)
				}
				sides[side] = append(sides[side], l)
			}
		}
		out[kind] = sides
	}
	return out
}

func gateOn(t *testing.T, sides [2][]*profile.Loaded, checks ...string) (*Report, error) {
	t.Helper()
	var opts Options
	for _, s := range checks {
		c, err := ParseMax(s)
		if err != nil {
			t.Fatal(err)
		}
		opts.Checks = append(opts.Checks, c)
	}
	g := New(opts)
	for side, list := range sides {
		for _, l := range list {
			if err := g.Add(result.Side(side), l); err != nil {
				t.Fatal(err)
			}
		}
	}
	return g.Report()
}

// TestSharesCannotMove gates real mutex and block profiles of the lock
// test program, where every sample is the one mutex, so lock-contention
// and sync are 100% of every profile: the default checks compare the
// delay per run (Go's runtime/pprof records no duration) or, where each
// profile has a duration, per second; explicit checks that cannot be
// evaluated are ErrCannotEvaluate.
func TestSharesCannotMove(t *testing.T) {
	runs := lockRuns(t, "poll")
	for _, kind := range []string{"mutex", "block"} {
		sides := runs[kind]
		r, err := gateOn(t, sides)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != Fail || len(r.Checks) != 1 || len(r.Notes) != 1 {
			t.Fatalf("%s: verdict %s, checks %+v, notes %q; want lock-contention alone, failed", kind, r.Verdict, r.Checks, r.Notes)
		}
		c := r.Checks[0]
		if c.Name != "lock-contention" || c.Measure != MeasurePerRun || c.Unit != "nanoseconds" || c.Threshold != DefaultAbsolute() || c.Behind == nil {
			t.Errorf("%s: %+v", kind, c)
		}
		// The merged values are the mean delay per run.
		var sum float64
		for _, v := range c.NewProfiles {
			sum += v
		}
		if mean := sum / 5; c.New < mean*(1-1e-9) || c.New > mean*(1+1e-9) {
			t.Errorf("%s: merged new %v, mean of the runs %v", kind, c.New, mean)
		}
		// The frames behind it are in the same measure: the mutex's
		// unlock (mutex profiles) or lock (block profiles) and main.item.
		if len(c.Behind.Callers) == 0 || c.Behind.Callers[0].Name != "main.item" || c.Behind.Callers[0].New > c.New {
			t.Errorf("%s: callers %+v", kind, c.Behind.Callers)
		}

		// Percentage points of a share that cannot move.
		_, err = gateOn(t, sides, "lock-contention=+1pp")
		if !errors.Is(err, ErrCannotEvaluate) || !strings.Contains(err.Error(), "lock-contention=+1pp: ") || !strings.Contains(err.Error(), "or capture ") {
			t.Errorf("%s, lock-contention=+1pp: %v", kind, err)
		}
		// Relative thresholds compare the delay.
		if r, err := gateOn(t, sides, "lock-contention=+50%"); err != nil || r.Checks[0].Measure != MeasurePerRun || r.Verdict != Fail {
			t.Errorf("%s, lock-contention=+50%%: %v", kind, err)
		}
	}
	if _, err := gateOn(t, runs["mutex"], "wait=+1pp"); !errors.Is(err, ErrCannotEvaluate) || !strings.Contains(err.Error(), "mutex profiles record only lock contention") {
		t.Errorf("mutex, wait=+1pp: %v", err)
	}

	// With durations (as /debug/pprof/mutex?seconds=N writes them), the
	// delay per second is compared: with 1 s runs, each run's delay over
	// 1 s, and the regression fails as before.
	sides := runs["mutex"]
	during := func(base, new int64) *Report {
		t.Helper()
		for side, list := range sides {
			for _, l := range list {
				l.Profile.DurationNanos = [2]int64{base, new}[side]
			}
		}
		r, err := gateOn(t, sides)
		if err != nil {
			t.Fatal(err)
		}
		c := r.Checks[0]
		if len(r.Checks) != 1 || c.Measure != MeasureRate || c.Unit != "s/s" || !strings.Contains(r.Notes[0], "the delay per second (s/s) is compared for lock-contention: ") {
			t.Fatalf("durations known: %+v, notes %q", c, r.Notes)
		}
		return r
	}
	r := during(1e9, 1e9)
	c := r.Checks[0]
	if r.Verdict != Fail || len(c.BaseProfiles) != 5 || c.New <= 0 || c.New > 10 {
		t.Errorf("1 s runs: %s, new %v s/s, base profiles %v", r.Verdict, c.New, c.BaseProfiles)
	}
	// New runs that lasted ten times longer than the growth of their
	// delay waited less per second than base runs: the gate passes.
	if c.Base > 0 {
		r := during(1e9, int64(1e9*10*c.New/c.Base))
		if c := r.Checks[0]; r.Verdict != Pass || c.New >= c.Base {
			t.Errorf("longer new runs: %s, %v → %v s/s", r.Verdict, c.Base, c.New)
		}
	}
}

// TestBlockSharesMove gates block profiles of the lock test program whose
// main waits on a sync.WaitGroup: blocked time is lock contention and
// wait, so the share of lock-contention moves and is compared as a share
// (with +1pp), while sync, always 100% of a block profile, compares the
// blocked delay per run (with 2x): both fail on the regression.
func TestBlockSharesMove(t *testing.T) {
	r, err := gateOn(t, lockRuns(t, "wg")["block"])
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 2 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "is compared for sync: every profile is 100% sync") {
		t.Fatalf("checks %+v, notes %q", r.Checks, r.Notes)
	}
	lc, sy := r.Checks[0], r.Checks[1]
	if lc.Name != "lock-contention" || lc.Measure != MeasureShare || lc.Threshold.String() != "+1pp" || lc.Verdict != Fail || lc.New <= lc.Base || lc.New >= 1 {
		t.Errorf("lock-contention: %+v", lc)
	}
	if sy.Name != "sync" || sy.Measure != MeasurePerRun || sy.Threshold != DefaultAbsolute() || sy.Verdict != Fail {
		t.Errorf("sync: %+v", sy)
	}
}
