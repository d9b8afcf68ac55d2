package diff

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"strings"
	"sync"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/classify"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
	"github.com/profdiff/profdiff/symbolize"
)

// allocHeavy allocates from several goroutines with a tiny GOGC, so the
// collector runs continuously and the allocating goroutines assist it
// (and park in gcMarkDone or gcParkAssist).
func allocHeavy() {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	var wg sync.WaitGroup
	// Each goroutine keeps its last allocations alive in its own slots
	// (shared ones would be a data race), until all are done.
	sinks := make([][8][]byte, 2*runtime.GOMAXPROCS(0))
	for g := range sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40000 {
				sinks[g][i%len(sinks[g])] = make([]byte, 512+i%4096)
			}
		}()
	}
	wg.Wait()
	runtime.KeepAlive(sinks)
}

// A goroutine inside the collector, blocked on any reason (an assist parks
// with "sync"), or a running collector goroutine (gcBgMarkWorker), is GC
// work in a Go execution trace, as the same frames are in an fgprof
// profile; idle collector goroutines stay wait.
// The trace is recorded here, over an allocation-heavy workload.
func TestTraceCollectorFramesAreGC(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("cannot trace (another trace running?): %v", err)
	}
	allocHeavy()
	trace.Stop()
	l, err := profile.Parse("gc.trace", buf.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != profile.KindTrace {
		t.Fatalf("kind %s, want trace", l.Kind)
	}
	// What the trace reader labelled, and what the engine must make of it.
	rs := rules.Default()
	idx := len(l.Profile.SampleType) - 1 // wall nanoseconds
	var wantGC, relabelled, runningWorker float64
	recs := pull.FromProfile(l.Profile)
	for _, smp := range l.Profile.Sample {
		rec, err := recs.Next()
		if err != nil {
			t.Fatal(err)
		}
		lb, sched, ok := LabelledBucket(smp)
		v := float64(smp.Value[idx])
		switch {
		case !ok:
			// A reason the trace does not know (a goroutine blocked
			// before it began): the frames decide, and a collector
			// goroutine parked at its root is idle.
			if unlabelledGC(rs, smp) {
				wantGC += v
			}
		case sched:
		case lb == rules.GC:
			wantGC += v
		case !classify.IdleSystem(rec) && inCollector(rs, smp):
			wantGC += v
			relabelled += v
			if classify.Running(rec) {
				runningWorker += v
			}
		}
	}
	a := NewAnalyzer(Options{})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	if relabelled == 0 {
		t.Fatal("no goroutine was recorded blocked or running inside the collector with a non-gc label")
	}
	if got := top.Buckets[rules.GC].Value; got != wantGC {
		t.Errorf("gc %v ns, want %v (of which %v labelled otherwise by the trace reader)", got, wantGC, relabelled)
	}
	t.Logf("gc %.3g ns of %.3g, %.3g of it relabelled from the goroutine's state (%.3g running collector goroutines)", top.Buckets[rules.GC].Value, top.Total, relabelled, runningWorker)
}

// unlabelledGC is what a sample without a bucket label counts as by its
// frames: GC when a gc rule decides it, unless it is a collector
// goroutine waiting at its root (the frame that decides is the root's).
func unlabelledGC(rs *rules.Set, smp *pprofile.Sample) bool {
	var names []string
	for _, loc := range smp.Location {
		for _, ln := range loc.Line {
			names = append(names, symbolize.Normalize(ln.Function.Name))
		}
	}
	b, at := ClassifyStack(rs, names, profile.KindTrace)
	if b != rules.GC {
		return false
	}
	root := len(names) - 1
	for root > 0 && strings.HasPrefix(names[root], "runtime.goexit") {
		root--
	}
	st := smp.Label[profile.LabelState]
	return !(len(st) == 1 && st[0] == "waiting" && at == root)
}

// inCollector reports whether a sample has a frame a strong gc rule
// claims; for a running interval, whether the goroutine's root (below
// runtime.goexit) is the collector's (gcBgMarkWorker).
func inCollector(rs *rules.Set, smp *pprofile.Sample) bool {
	var names []string
	for _, loc := range smp.Location {
		for _, ln := range loc.Line {
			names = append(names, symbolize.Normalize(ln.Function.Name))
		}
	}
	isGC := func(name string) bool {
		r := rs.Match(name, profile.KindTrace)
		return r != nil && r.Strength == rules.Strong && r.Bucket == rules.GC
	}
	if st := smp.Label[profile.LabelState]; len(st) == 1 && st[0] == "running" {
		for len(names) > 0 && strings.HasPrefix(names[len(names)-1], "runtime.goexit") {
			names = names[:len(names)-1]
		}
		return len(names) > 0 && isGC(names[len(names)-1])
	}
	for _, n := range names {
		if isGC(n) {
			return true
		}
	}
	return false
}
