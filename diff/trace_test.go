package diff

import (
	"math"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/gotrace"
)

// TraceLikeProfile builds what gotrace.Parse writes: wall time per stack
// with the bucket in a label. sched is the runnable time, lock the
// lock-contention time; the rest is fixed.
func traceLike(t *testing.T, name string, sched, lock int64) *profile.Loaded {
	t.Helper()
	p := &pprofile.Profile{
		SampleType:        []*pprofile.ValueType{{Type: "intervals", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}},
		DefaultSampleType: "wall",
		PeriodType:        &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            1,
		Comments:          []string{gotrace.CommentPrefix + " (go 1.26)"},
	}
	fns := map[string]*pprofile.Location{}
	loc := func(name string) *pprofile.Location {
		if l := fns[name]; l != nil {
			return l
		}
		f := &pprofile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		p.Function = append(p.Function, f)
		l := &pprofile.Location{ID: uint64(len(p.Location) + 1), Line: []pprofile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		fns[name] = l
		return l
	}
	add := func(ns int64, labels map[string][]string, frames ...string) {
		s := &pprofile.Sample{Value: []int64{1000, ns}, Label: labels}
		for _, f := range frames {
			s.Location = append(s.Location, loc(f))
		}
		p.Sample = append(p.Sample, s)
	}
	lb := func(bucket, state, reason string) map[string][]string {
		m := map[string][]string{profile.LabelBucket: {bucket}, profile.LabelState: {state}}
		if reason != "" {
			m[profile.LabelReason] = []string{reason}
		}
		return m
	}
	add(600, lb("cpu", "running", ""), gotrace.FrameRunning, "main.work", "main.main")
	add(lock, lb("lock-contention", "waiting", "sync"), "sync.(*Mutex).Lock", "main.work", "main.main")
	add(100, lb("wait", "waiting", "chan receive"), "runtime.chanrecv1", "main.consume")
	add(20, lb("io", "waiting", "network"), "internal/poll.(*FD).Read", "net.(*conn).Read", "main.serve")
	add(sched, lb(profile.SchedLatency, "runnable", "preempted"), gotrace.FrameRunnable, "main.work", "main.main")
	// Waiting since before the trace: no bucket label, the frame rules
	// decide (and in a trace what they do not claim is wait).
	add(30, map[string][]string{profile.LabelState: {"waiting"}, profile.LabelReason: {"unknown"}}, "main.idle")
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if k := profile.DetectKind(p); k != profile.KindTrace {
		t.Fatalf("DetectKind = %s", k)
	}
	return &profile.Loaded{Source: name, Format: "go-trace", Kind: profile.KindTrace, Profile: p}
}

// The label decides the bucket (a mutex wait whose frames alone would be
// read otherwise), runnable time is scheduler latency outside the buckets
// and the method table, and --by caller reaches the program's own code
// behind the synthetic [running] leaf.
func TestTraceLabels(t *testing.T) {
	a := NewAnalyzer(Options{Top: -1})
	if err := a.Add(result.Base, traceLike(t, "x.trace", 250, 300)); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	const total = 600 + 300 + 100 + 20 + 30
	want := map[rules.Bucket]float64{rules.CPU: 600, rules.LockContention: 300, rules.Wait: 130, rules.IO: 20}
	for _, b := range top.Buckets {
		if !near(b.Value, want[b.Bucket]) || !near(b.Share, want[b.Bucket]/total) {
			t.Errorf("%s: %v (%v), want %v", b.Bucket, b.Value, b.Share, want[b.Bucket])
		}
	}
	if top.Sched == nil || !near(top.Sched.Value, 250) || !near(top.Sched.Share, 250.0/(total+250)) {
		t.Errorf("sched = %+v", top.Sched)
	}
	if top.Total != total {
		t.Errorf("total %v, want %v (runnable time outside)", top.Total, total)
	}
	for _, m := range top.Methods {
		if m.Name == gotrace.FrameRunnable {
			t.Errorf("runnable time in the method table: %+v", m)
		}
		if m.Name == gotrace.FrameRunning && (m.Bucket != rules.CPU || m.Value != 600) {
			t.Errorf("[running] = %+v", m)
		}
		if m.Name == "sync.(*Mutex).Lock" && m.Bucket != rules.LockContention {
			t.Errorf("Lock = %+v", m)
		}
	}

	a = NewAnalyzer(Options{Top: -1, By: result.ByCaller})
	if err := a.Add(result.Base, traceLike(t, "x.trace", 250, 300)); err != nil {
		t.Fatal(err)
	}
	for _, m := range a.Top().Methods {
		if m.Name == gotrace.FrameRunning {
			t.Errorf("--by caller stops at the synthetic frame: %+v", m)
		}
		if m.Name == "main.work" && m.Value != 900 {
			t.Errorf("--by caller: main.work = %v, want its running and lock time, 900", m.Value)
		}
	}
}

func TestTraceDiffSched(t *testing.T) {
	r := diffOf(t, Options{}, traceLike(t, "a.trace", 50, 300), traceLike(t, "b.trace", 500, 900))
	if r.Sched == nil {
		t.Fatal("no scheduler latency")
	}
	tb, tn := 1050.0, 1650.0
	if !near(r.Sched.Base, 50/(tb+50)) || !near(r.Sched.New, 500/(tn+500)) || !near(r.Sched.Delta, r.Sched.New-r.Sched.Base) || r.Sched.NewValue != 500 {
		t.Errorf("sched = %+v", r.Sched)
	}
	if r.Kind != profile.KindTrace {
		t.Errorf("kind %s", r.Kind)
	}
	// Profiles without runnable time have no scheduler latency line.
	r = diffOf(t, Options{}, folded(t, "a", "main.f 1\n"), folded(t, "b", "main.f 1\n"))
	if r.Sched != nil {
		t.Errorf("sched on folded stacks: %+v", r.Sched)
	}
}

// In wall-clock and goroutine profiles a stack of runtime.goexit alone is
// a goroutine created but not yet run (runtime.GoroutineProfile records it
// so): scheduler latency, outside the buckets; in a CPU profile it stays
// a frame like any other.
func TestBareGoexitIsSchedulerLatency(t *testing.T) {
	for _, kind := range []profile.Kind{profile.KindWall, profile.KindGoroutine, profile.KindCPU} {
		a := NewAnalyzer(Options{Top: -1})
		l := folded(t, "w.folded", "runtime.goexit 3\nruntime.goexit;main.main;runtime.gopark 1\nruntime.goexit;main.work 1\n")
		l.Kind = kind
		if err := a.Add(result.Base, l); err != nil {
			t.Fatal(err)
		}
		top := a.Top()
		var cpu float64
		for _, b := range top.Buckets {
			if b.Bucket == rules.CPU {
				cpu = b.Share
			}
		}
		if kind == profile.KindCPU {
			if top.Sched != nil || math.Abs(cpu-0.8) > 1e-9 {
				t.Errorf("cpu: sched %+v, cpu share %v; want no sched and 4 of 5 on cpu", top.Sched, cpu)
			}
			continue
		}
		if top.Sched == nil || math.Abs(top.Sched.Share-0.6) > 1e-9 || math.Abs(cpu-0.5) > 1e-9 {
			t.Errorf("%s: sched %+v, cpu share %v; want sched 3 of 5 and cpu 1 of the other 2", kind, top.Sched, cpu)
		}
		for _, m := range top.Methods {
			if m.Name == "runtime.goexit" {
				t.Errorf("%s: bare goexit in the method table: %+v", kind, m)
			}
		}
	}
}
