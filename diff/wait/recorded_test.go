package wait_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/wait"
	"github.com/profdiff/profdiff/diff/wait/waittest"
	"github.com/profdiff/profdiff/profile"
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
