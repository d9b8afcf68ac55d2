package wait_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/wait"
	"github.com/profdiff/profdiff/diff/wait/waittest"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/perfscript"
)

// analyzeFile loads one recording and analyzes it as one side.
func analyzeFile(t *testing.T, path string) *result.Wait {
	t.Helper()
	l, err := profile.Load(context.Background(), path, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return wait.Analyze([][]wait.Input{{{Source: path, Kind: l.Kind, Profile: l.Profile}}}, wait.Options{})
}

// TestSitesPerfRecorded reads a perf recording (sched_switch,
// sched_waking, DWARF call graphs) of waker.c made at test time: the
// waiters' site is their own frame, wait_here, not the kernel's
// __schedule on top of glibc's lock code, and the waker's site is
// hold_work, not glibc's lll_mutex_unlock_optimized under its
// pthread_mutex_unlock; the verdict names hold_work.
func TestSitesPerfRecorded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "waker.txt")
	waittest.PerfWaker(t, path)
	r := analyzeFile(t, path)
	l := lockOf(t, r, wait.EvidenceWaker, "wait_here")
	if s := holderShare(l, "hold_work"); s < 0.9 {
		t.Errorf("hold_work is charged %.2f of wait_here's waiting, want at least 0.9; holders %+v", s, l.Holders)
	}
	var edge bool
	for _, e := range r.Wakeups {
		if e.Waiter == "wait_here" && e.Waker == "hold_work" && e.Bucket == "lock-contention" {
			edge = true
		}
		for _, site := range []string{e.Waiter, e.Waker} {
			if site == "__schedule" || site == "lll_mutex_unlock_optimized" {
				t.Errorf("wake-up %+v has a kernel or glibc frame as a site", e)
			}
		}
	}
	if !edge {
		t.Errorf("no wake-up of wait_here by hold_work among %+v", r.Wakeups)
	}
	if r.Verdict.Holder != "hold_work" {
		t.Errorf("verdict %+v, want hold_work", r.Verdict)
	}
}

// TestVerdictAcrossMonitorsJFR reads a JFR recording of Holders.java made
// at test time: its thread "holder" holds the three monitors its waiters
// block on, each a lock of its own (JFR names the monitor), so it is
// charged about a third of the waiting on each, all of it over the three,
// and the verdict names it, counting the locks.
func TestVerdictAcrossMonitorsJFR(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "holders.jfr")
	waittest.JFRHolders(t, path)
	r := analyzeFile(t, path)
	var locks int
	for _, l := range r.Locks {
		if l.Evidence == wait.EvidenceOwner && len(l.Waiters) > 0 && l.Waiters[0].Site == "Holders.waitHere" {
			locks++
			if l.Waited[0] >= r.Verdict.Waited[0]*0.5 {
				t.Errorf("monitor %s has %.0f of the %.0f ns of waiting: one monitor alone explains most", l.Name, l.Waited[0], r.Verdict.Waited[0])
			}
		}
	}
	if locks != 3 {
		t.Fatalf("%d monitors waited for in Holders.waitHere, want 3: %+v", locks, r.Locks)
	}
	if v := r.Verdict; v.Holder != "holder" || v.Locks != 3 || v.Share < 0.9 {
		t.Errorf("verdict %+v, want holder, charged at least 0.9 of the waiting over 3 locks", v)
	}
}

// TestPathPerfRecorded reads a perf recording of chain.c made at test
// time (C waits on B, which waits on the mutex A holds in a_work) with
// its critical paths: the result has C's path alone, which charges time
// to a_work, far more than to b_pass, which only passed it on (how much
// is profile/perfscript's TestCriticalPathChain's to check).
func TestPathPerfRecorded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "chain.txt")
	waittest.PerfChain(t, path)
	l, err := profile.Load(context.Background(), path, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := perfscript.CriticalPaths(string(text), perfscript.PathOptions{Focus: func(f string) bool { return f == "c_wait" }})
	if err != nil || paths == nil {
		t.Fatalf("critical paths: %v, %v", paths, err)
	}
	r := wait.Analyze([][]wait.Input{{{Source: path, Kind: l.Kind, Profile: l.Profile, Paths: paths}}}, wait.Options{})
	if len(r.Paths) != 1 {
		t.Fatalf("paths %+v, want C's alone", r.Paths)
	}
	fn := map[string]float64{}
	for _, f := range r.Paths[0].Functions {
		fn[f.Name] = f.Value[0]
	}
	if fn["a_work"] == 0 || fn["b_pass"]*4 > fn["a_work"] {
		t.Errorf("C's path charges %v, want a_work, and b_pass far behind", fn)
	}
}
