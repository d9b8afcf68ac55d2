package present

import (
	"bytes"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/gotrace"
)

// traceLoaded is a small profile of the shape gotrace.Parse writes: wall
// time per stack, the bucket in a label, runnable time as scheduler
// latency.
func traceLoaded(t *testing.T, name string, sched, lock int64) *profile.Loaded {
	t.Helper()
	p := &pprofile.Profile{
		SampleType:        []*pprofile.ValueType{{Type: "intervals", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}},
		DefaultSampleType: "wall",
		PeriodType:        &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            1,
	}
	locs := map[string]*pprofile.Location{}
	add := func(ns int64, bucket string, frames ...string) {
		s := &pprofile.Sample{Value: []int64{1000, ns}, Label: map[string][]string{profile.LabelBucket: {bucket}}}
		for _, f := range frames {
			l := locs[f]
			if l == nil {
				fn := &pprofile.Function{ID: uint64(len(p.Function) + 1), Name: f}
				p.Function = append(p.Function, fn)
				l = &pprofile.Location{ID: uint64(len(p.Location) + 1), Line: []pprofile.Line{{Function: fn}}}
				p.Location = append(p.Location, l)
				locs[f] = l
			}
			s.Location = append(s.Location, l)
		}
		p.Sample = append(p.Sample, s)
	}
	add(600e6, "cpu", gotrace.FrameRunning, "main.work")
	add(lock*1e6, "lock-contention", "sync.(*Mutex).Lock", "main.work")
	add(100e6, "wait", "runtime.chanrecv1", "main.consume")
	add(20e6, "io", "internal/poll.(*FD).Read", "main.serve")
	add(sched*1e6, profile.SchedLatency, gotrace.FrameRunnable, "main.work")
	return &profile.Loaded{Source: name, Format: "go-trace", Kind: profile.KindTrace, Profile: p}
}

// Scheduler latency is a line of its own under the bucket table (a "sched"
// row in CSV, "sched_latency" in JSON), never a bucket.
func TestGoldenTrace(t *testing.T) {
	a := diff.NewAnalyzer(diff.Options{Top: 5})
	if err := a.Add(result.Base, traceLoaded(t, "base.trace", 50, 300)); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(result.New, traceLoaded(t, "new.trace", 500, 900)); err != nil {
		t.Fatal(err)
	}
	r := a.Diff()
	for _, f := range render.Tables {
		var buf bytes.Buffer
		if err := diffTo(&buf, r, f); err != nil {
			t.Fatal(err)
		}
		golden(t, "diff.trace-synth."+string(f)+".golden", buf.Bytes())
	}
	a = diff.NewAnalyzer(diff.Options{Top: 5})
	if err := a.Add(result.Base, traceLoaded(t, "new.trace", 500, 900)); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	for _, f := range render.Tables {
		var buf bytes.Buffer
		if err := topTo(&buf, top, f); err != nil {
			t.Fatal(err)
		}
		golden(t, "top.trace-synth."+string(f)+".golden", buf.Bytes())
	}
}
