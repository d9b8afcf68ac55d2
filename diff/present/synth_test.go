package present

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// Results built by hand with the fields the engine fills (values, rates,
// meaning, measure, bucket split, peek), so that their display is tested
// whatever the engine's numbers are.

func ptr(v float64) *float64 { return &v }

// vals are a row's values over 10 s per side in unit, with rates.
func vals(base, new float64, unit, rateUnit string) result.Values {
	v := result.Values{BaseValue: base, NewValue: new, Unit: unit, RateUnit: rateUnit}
	if rateUnit != "" {
		scale := 1e-10 // per second of 10 s, in seconds for nanoseconds
		if unit != "nanoseconds" {
			scale = 0.1
		}
		v.BaseRate, v.NewRate = ptr(base*scale), ptr(new*scale)
	}
	return v
}

func summary(src string, total float64, unit string, records int64, rate *float64) result.SideSummary {
	s := result.SideSummary{Sources: []string{src}, Total: total, Unit: unit, Samples: records, Records: records, Profiles: 1, TotalRate: rate}
	if rate != nil {
		s.DurationNanos = 10e9
	}
	return s
}

// bucketRows are the six buckets with values in unit: per bucket base
// and new value; shares are of the sides' totals.
func bucketRows(base, new [rules.NumBuckets]float64, unit, rateUnit string) []result.BucketRow {
	var tb, tn float64
	for i := range base {
		tb, tn = tb+base[i], tn+new[i]
	}
	rows := make([]result.BucketRow, rules.NumBuckets)
	for i, b := range rules.Buckets {
		rows[i] = result.BucketRow{Bucket: b, Base: base[i] / tb, New: new[i] / tn, Delta: new[i]/tn - base[i]/tb, Values: vals(base[i], new[i], unit, rateUnit)}
	}
	return rows
}

// mutexSynth is a mutex diff whose contention grew from 23 ms to 34.2 s
// over 10 s per side: shares stay 100%, the rates tell.
func mutexSynth() *result.Result {
	const long = "github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).acquire"
	return &result.Result{
		Analysis: result.Analysis{SampleType: "delay/nanoseconds", Kind: profile.KindMutex, Meaning: result.MeaningDelay, By: result.ByCaller, ByDefault: true,
			Normalize: result.NormalizeRate, Unit: "nanoseconds", RateUnit: "s/s"},
		Base:    summary("base/mutex.pb.gz", 23e6, "nanoseconds", 40, ptr(0.0023)),
		New:     summary("new/mutex.pb.gz", 34.2e9, "nanoseconds", 9000, ptr(3.42)),
		Buckets: bucketRows([6]float64{0, 0, 23e6, 0, 0, 0}, [6]float64{0, 0, 34.2e9, 0, 0, 0}, "nanoseconds", "s/s"),
		Methods: []result.MethodRow{
			{Name: long, Bucket: rules.LockContention, BucketShare: 1, Base: 0, New: 0.97, Delta: 0.97, Note: "new", Values: vals(0, 33.2e9, "nanoseconds", "s/s")},
			{Name: "main.main.func1", Bucket: rules.LockContention, BucketShare: 1, Base: 1, New: 0.03, Delta: -0.97, Note: "43x rate", Values: vals(23e6, 1e9, "nanoseconds", "s/s")},
		},
		Detail: result.Detail{Peek: []result.PeekRow{{Name: "sync.(*Mutex).Unlock", Values: vals(23e6, 34.2e9, "nanoseconds", "s/s"),
			Callers: []result.PeekEdge{{Name: long, Values: vals(0, 33.2e9, "nanoseconds", "s/s")}, {Name: "main.main.func1", Values: vals(23e6, 1e9, "nanoseconds", "s/s")}},
			Callees: []result.PeekEdge{{Name: "internal/sync.(*Mutex).unlockSlow", Values: vals(1e6, 2e9, "nanoseconds", "s/s")}}}}},
	}
}

// wallSynth is a wall-clock diff in threads, methods by caller, one of
// which spans two buckets.
func wallSynth() *result.Result {
	b, n := [6]float64{600, 2500, 20, 30, 800, 50}, [6]float64{550, 2400, 480, 40, 820, 60}
	m := result.MethodRow{Name: "main.(*server).handle", Bucket: rules.LockContention, BucketShare: 0.71, Base: 0.01, New: 0.11, Delta: 0.10, Note: "11x rate",
		Values: vals(40, 500, "nanoseconds", "threads"), Buckets: map[rules.Bucket]result.BucketSplit{rules.LockContention: {BaseValue: 10, NewValue: 380}, rules.Wait: {BaseValue: 30, NewValue: 120}}}
	m.BaseRate, m.NewRate = ptr(0.4), ptr(5)
	rows := bucketRows(b, n, "nanoseconds", "threads")
	for i := range rows {
		rows[i].BaseRate, rows[i].NewRate = ptr(b[i]/100), ptr(n[i]/100)
	}
	rows[4].Noisy = true
	return &result.Result{
		Analysis: result.Analysis{SampleType: "wall/nanoseconds", Kind: profile.KindWall, Meaning: result.MeaningState, By: result.ByCaller, ByDefault: true,
			Normalize: result.NormalizeRate, Unit: "nanoseconds", RateUnit: "threads"},
		Base: summary("base.wall.pb.gz", 4000, "nanoseconds", 4000, ptr(40)), New: summary("new.wall.pb.gz", 4350, "nanoseconds", 4350, ptr(43.5)),
		Buckets: rows, Methods: []result.MethodRow{m},
		// Time apart from the buckets, as shares of all thread time.
		Sched:   apartSynth(0.02, 0.05, 80, 230),
		Unknown: apartSynth(0.10, 0.08, 450, 380),
	}
}

// apartSynth is a row of time kept apart from the buckets, in threads
// over wallSynth's 100 s.
func apartSynth(base, new, bv, nv float64) *result.SchedRow {
	v := vals(bv, nv, "nanoseconds", "threads")
	v.BaseRate, v.NewRate = ptr(bv/100), ptr(nv/100)
	return &result.SchedRow{Base: base, New: new, Delta: new - base, Values: v}
}

// cpuSynth is a CPU diff in cores, noted by share.
func cpuSynth() *result.Result {
	return &result.Result{
		Analysis: result.Analysis{SampleType: "cpu/nanoseconds", Kind: profile.KindCPU, Meaning: result.MeaningCPU, By: result.ByFrame, ByDefault: true,
			Normalize: result.NormalizeShare, Unit: "nanoseconds", RateUnit: "cores"},
		Base: summary("base.cpu.pb.gz", 10e9, "nanoseconds", 1000, ptr(1)), New: summary("new.cpu.pb.gz", 12e9, "nanoseconds", 1200, ptr(1.2)),
		Buckets: bucketRows([6]float64{6e9, 0, 1e9, 1e9, 1e9, 1e9}, [6]float64{6e9, 0, 3e9, 1e9, 1e9, 1e9}, "nanoseconds", "cores"),
		Methods: []result.MethodRow{{Name: "runtime.lock2", Bucket: rules.LockContention, BucketShare: 1, Base: 0.1, New: 0.25, Delta: 0.15, Note: "3x rate",
			Values: vals(1e9, 3e9, "nanoseconds", "cores")}},
	}
}

// heapSynth is a heap diff in bytes, without durations.
func heapSynth() *result.Result {
	return &result.Result{
		Analysis: result.Analysis{SampleType: "inuse_space/bytes", Kind: profile.KindHeap, Meaning: result.MeaningMemory, By: result.ByFrame, ByDefault: true,
			Normalize: result.NormalizeValue, Unit: "bytes"},
		Base: summary("base.heap.pb.gz", 12<<20, "bytes", 300, nil), New: summary("new.heap.pb.gz", 15<<20, "bytes", 320, nil),
		Buckets: bucketRows([6]float64{12 << 20, 0, 0, 0, 0, 0}, [6]float64{14 << 20, 0, 1 << 20, 0, 0, 0}, "bytes", ""),
		Methods: []result.MethodRow{{Name: "encoding/json.(*decodeState).literalStore", Bucket: rules.CPU, BucketShare: 1, Base: 0.25, New: 0.4, Delta: 0.15, Note: "doubled",
			Values: vals(3<<20, 6<<20, "bytes", "")}},
	}
}

var synths = []struct {
	name string
	r    func() *result.Result
}{
	{"mutex-synth.normalize-rate", mutexSynth},
	{"wall-synth.by-caller.normalize-rate", wallSynth},
	{"cpu-synth.normalize-share", cpuSynth},
	{"heap-synth.normalize-value", heapSynth},
}

// The new columns, headlines, bucket split and peek sections, in every
// text format and CSV.
func TestGoldenSynth(t *testing.T) {
	for _, s := range synths {
		for _, f := range []render.Format{render.Table, render.Markdown, render.CSV} {
			var buf bytes.Buffer
			if err := diffTo(&buf, s.r(), f); err != nil {
				t.Fatal(err)
			}
			golden(t, "diff."+s.name+"."+string(f)+".golden", buf.Bytes())
		}
	}
}

func renderDiff(t *testing.T, r *result.Result, f render.Format, o render.Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := render.Write(&buf, Diff(r), f, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// Headlines say what the buckets mean: wait/synchronization for states
// only, CPU machinery for CPU, the absolute total for delay and heap.
func TestHeadlines(t *testing.T) {
	cases := []struct {
		r       *result.Result
		want    []string
		notWant []string
	}{
		{mutexSynth(), []string{"Contention delay: 23 ms → 34.2 s (+34.2 s) · 2.3 ms/s → 3.42 s/s (+3.42 s/s)",
			"methods by caller (the default for mutex profiles), self rates", "+3.32 s/s (new)", "2.3 ms/s"}, []string{"wait/synchronization", "100.00% → 100.00%"}},
		{wallSynth(), []string{"Total wait/synchronization: 85.0% → 87.4% (+2.36pp) · 34 threads → 38 threads (+4 threads)", "lock-contention 71%", "+4.6 (11x rate)", "Δ (threads)"}, nil},
		{cpuSynth(), []string{"CPU in locking, GC, I/O and syscall machinery: 40.0% → 50.0% (+10.00pp) · 0.4 cores → 0.6 cores (+0.2 cores)", "+15.00pp (3x rate)"},
			[]string{"wait/synchronization"}},
		{heapSynth(), []string{"Total inuse_space: 12 MiB → 15 MiB (+3 MiB)", "+3 MiB (doubled)", "25.00% · 3 MiB"}, []string{"wait/synchronization", " s/s", "threads"}},
	}
	for _, c := range cases {
		out := renderDiff(t, c.r, render.Table, render.Options{})
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", c.r.Kind, w, out)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", c.r.Kind, w, out)
			}
		}
	}
}

// A peek section lists the frame's callers and callees in the same units,
// as rows of the table and as CSV records naming the peeked frame.
func TestPeek(t *testing.T) {
	out := renderDiff(t, mutexSynth(), render.Table, render.Options{})
	for _, w := range []string{"peek sync.(*Mutex).Unlock: 23 ms · 2.3 ms/s → 34.2 s · 3.42 s/s (+3.42 s/s) inclusive",
		"│ caller │ main.main.func1", "│ callee │ internal/sync.(*Mutex).unlockSlow"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
	csv := renderDiff(t, mutexSynth(), render.CSV, render.Options{})
	for _, w := range []string{"\npeek,sync.(*Mutex).Unlock,,,,,23000000,34200000000,0.0023,3.42,nanoseconds,s/s,,false,\n",
		"\npeek-callee,internal/sync.(*Mutex).unlockSlow,,,,,1000000,2000000000,0.0001,0.2,nanoseconds,s/s,,false,sync.(*Mutex).Unlock\n"} {
		if !strings.Contains(csv, w) {
			t.Errorf("no %q in\n%s", w, csv)
		}
	}
}

// topSynth is the new side of mutexSynth as `profdiff top` sees it:
// shares beside rates, values in seconds, a peek section.
func topSynth() *result.TopResult {
	d := mutexSynth()
	t := &result.TopResult{Analysis: d.Analysis, Sources: d.New.Sources, Total: d.New.Total, Unit: d.New.Unit, Samples: d.New.Samples, Records: d.New.Records,
		DurationNanos: d.New.DurationNanos, TotalRate: d.New.TotalRate}
	for _, b := range d.Buckets {
		t.Buckets = append(t.Buckets, result.TopBucket{Bucket: b.Bucket, Share: b.New, Value: b.NewValue, Rate: b.NewRate})
	}
	for _, m := range d.Methods {
		t.Methods = append(t.Methods, result.TopMethod{Name: m.Name, Bucket: m.Bucket, BucketShare: m.BucketShare, Share: m.New, Value: m.NewValue, Rate: m.NewRate})
	}
	for _, p := range d.Peek {
		// top's peek rows are the base side's: make the new side the base.
		p.BaseValue, p.BaseRate = p.NewValue, p.NewRate
		for i := range p.Callers {
			p.Callers[i].BaseValue, p.Callers[i].BaseRate = p.Callers[i].NewValue, p.Callers[i].NewRate
		}
		p.Callees = nil
		t.Peek = append(t.Peek, p)
	}
	return t
}

func TestGoldenTopSynth(t *testing.T) {
	for _, f := range []render.Format{render.Table, render.Markdown, render.CSV} {
		var buf bytes.Buffer
		if err := topTo(&buf, topSynth(), f); err != nil {
			t.Fatal(err)
		}
		golden(t, "top.mutex-synth.normalize-rate."+string(f)+".golden", buf.Bytes())
	}
	var buf bytes.Buffer
	if err := topTo(&buf, topSynth(), render.Table); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Contention delay: 34.2 s · 3.42 s/s", "97.00% · 3.32 s/s", "│ caller │ main.main.func1", "1 s · 100 ms/s"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("no %q in\n%s", w, buf.String())
		}
	}
}
