package diff

// Issue 41's substitution check on wall-clock (fgprof) profiles recorded
// at test time: four workers that wait by sleeping (wait) against four
// that wait for a mutex whose holder sleeps (lock-contention), with the
// same time spinning on each side, so the total wait holds while its
// character changes.

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
)

// substSleep is the base side's wait: a plain sleep.
func substSleep() { time.Sleep(6 * time.Millisecond) }

// substLocked is the new side's wait: the lock, held across a sleep, so
// three of four workers wait for it while the fourth sleeps.
func substLocked(mu *sync.Mutex) {
	mu.Lock()
	time.Sleep(2 * time.Millisecond)
	mu.Unlock()
}

// substWorkers runs four workers for d, each waiting in substSleep (mu
// nil) or substLocked over and over.
func substWorkers(mu *sync.Mutex, d time.Duration) {
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if mu == nil {
					substSleep()
				} else {
					substLocked(mu)
				}
			}
		})
	}
	wg.Wait()
}

func TestSubstitutionOfWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("records two 600ms wall-clock profiles")
	}
	base := recordWall(t, "sleep.wall", func() { substWorkers(nil, 600*time.Millisecond) })
	var mu sync.Mutex
	nw := recordWall(t, "lock.wall", func() { substWorkers(&mu, 600*time.Millisecond) })
	r := diffOf(t, Options{}, base, nw)
	s := r.Verdict.Substitution
	if s == nil {
		t.Fatalf("no substitution found; buckets %+v\nmethods %+v", r.Buckets, r.Methods)
	}
	t.Logf("in %v %.3f, out %v %.3f, sync %.3f → %.3f, buckets %+v", s.In, s.InShare, s.Out, s.OutShare, s.SyncBase, s.SyncNew, s.Buckets)
	if !strings.HasSuffix(s.In[0], "substLocked") || !strings.HasSuffix(s.Out[0], "substSleep") {
		t.Errorf("in %v, out %v; want substLocked replacing substSleep", s.In, s.Out)
	}
	// The workers wait all their time on both sides.
	for _, v := range []float64{s.InShare, s.OutShare} {
		if v < 0.2 {
			t.Errorf("moved share %.3f, want the workers' waiting (most of their time)", v)
		}
	}
	if s.Bucket != nil || len(s.Buckets) == 0 || s.Buckets[0].Bucket != rules.LockContention && s.Buckets[0].Bucket != rules.Wait {
		t.Errorf("bucket %v, moves %+v; want lock-contention and wait across buckets", s.Bucket, s.Buckets)
	}
	// The diff's verdict says it, with both numbers.
	var said report.Line
	for _, l := range present.Diff(r).Verdict.Lines {
		if len(l) > 0 && strings.HasPrefix(l[0].Text, "New waits in ") {
			said = l
		}
	}
	shares := map[float64]bool{}
	for _, c := range said {
		if c.Kind == report.KindShare {
			shares[c.Value] = true
		}
	}
	if !shares[s.InShare] || !shares[s.OutShare] {
		t.Errorf("the diff's verdict does not name the substitution with both numbers: %+v", said)
	}
}
