package jfr_test

import (
	"compress/gzip"
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/jfr"
)

// load reads a file as profdiff's commands do.
func load(t *testing.T, path string) *profile.Loaded {
	t.Helper()
	l, err := profile.Load(context.Background(), path, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// typeTotals sums every sample type of a loaded profile.
func typeTotals(l *profile.Loaded) map[string]int64 {
	out := map[string]int64{}
	for _, s := range l.Profile.Sample {
		for i, st := range l.Profile.SampleType {
			out[st.Type+"/"+st.Unit] += s.Value[i]
		}
	}
	return out
}

// TestGzipped: a gzipped recording (.jfr.gz, as Pyroscope and
// jfr-parser's test data keep them) loads through profile.Load with the
// same sample types and totals as the plain file.
func TestGzipped(t *testing.T) {
	t.Parallel()
	path := jfr.ShapesRecording(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(t.TempDir(), "shapes.jfr.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	w := gzip.NewWriter(f)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	plain, zipped := load(t, path), load(t, gz)
	if zipped.Format != profile.FormatJFR || strings.Join(zipped.Containers, ",") != "gzip" {
		t.Errorf("format %s, containers %v; want jfr in gzip", zipped.Format, zipped.Containers)
	}
	a, b := typeTotals(plain), typeTotals(zipped)
	if !maps.Equal(a, b) || len(a) < 5 {
		t.Errorf("gzipped totals %v, plain %v", b, a)
	}
}

// TestWallClassified: classified by profdiff's rules, the wall-clock
// samples of the thread that sleeps are not cpu (their frames, the
// program's own, decide nothing; the fallback label makes them wait), and
// those of the thread that computes are.
func TestWallClassified(t *testing.T) {
	t.Parallel()
	l := load(t, jfr.ShapesRecording(t))
	a := diff.NewAnalyzer(diff.Options{SampleIndex: "wall-samples"})
	got := map[string]map[rules.Bucket]float64{}
	a.OnSample(func(s *diff.Sample) {
		for _, id := range s.Stack {
			for _, fn := range []string{"Shapes.sleeper", "Shapes.runner"} {
				if a.MethodName(id) == fn {
					if got[fn] == nil {
						got[fn] = map[rules.Bucket]float64{}
					}
					got[fn][s.Bucket] += s.Value
				}
			}
		}
	})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	sleeper, runner := got["Shapes.sleeper"], got["Shapes.runner"]
	if sleeper[rules.Wait] == 0 || sleeper[rules.CPU] != 0 || runner[rules.CPU] == 0 || len(runner) != 1 {
		t.Errorf("wall samples by bucket: sleeper %v, runner %v; want the sleeper's all wait, the runner's all cpu", sleeper, runner)
	}
}

// bucketSums classifies the sample type of a loaded profile by profdiff's
// rules and sums its values by bucket.
func bucketSums(t *testing.T, l *profile.Loaded, typ string) map[rules.Bucket]float64 {
	t.Helper()
	a := diff.NewAnalyzer(diff.Options{SampleIndex: typ})
	out := map[rules.Bucket]float64{}
	a.OnSample(func(s *diff.Sample) { out[s.Bucket] += s.Value })
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestThreadTimeSocketRead: a thread blocked reading a loopback socket
// is in native code, so the JDK's native sampler samples it during the
// reads its jdk.SocketRead events time; thread-time counts that time once:
// its io is the socket events' durations plus 20 ms for each io native
// sample outside them (in a read under the 10 ms threshold, which has no
// event and which a loaded machine makes more of), not the durations plus
// every native sample's 20 ms. Which samples lie inside an event is the
// JDK's reader's say (jfr print's timestamps and thread ids).
func TestThreadTimeSocketRead(t *testing.T) {
	t.Parallel()
	path := jfr.Record(t, "socket")
	l := load(t, path)
	tot := typeTotals(l)
	reads := float64(tot["socket-read/nanoseconds"])
	io := bucketSums(t, l, "thread-time")[rules.IO]
	const nativePeriod, javaPeriod = 20e6, 10e6 // profile.jfc's
	native := bucketSums(t, l, "native-samples")
	nativeIO := native[rules.IO] * nativePeriod
	// About 750 ms of reads; a loaded machine starts the JVM late.
	if reads < 0.2e9 || nativeIO < 0.1*reads {
		t.Fatalf("socket reads %.0f ms and io native samples %.0f ms: want reads of 200 ms or more, sampled", reads/1e6, nativeIO/1e6)
	}
	var events float64 // the I/O events' durations in io
	for _, typ := range []string{"socket-read", "socket-write", "file-read", "file-write"} {
		if tot[typ+"/nanoseconds"] > 0 {
			events += bucketSums(t, l, typ)[rules.IO]
		}
	}
	inside := float64(jfr.NativeSamplesInWaits(t, path)) * nativePeriod
	want := events + nativeIO - inside
	// Off by a sample's period where a native sample inside an event is
	// not io, or an execution sample is io (none or a few).
	var slack float64
	for b, n := range native {
		if b != rules.IO {
			slack += n * nativePeriod
		}
	}
	if tot["execution-samples/count"] > 0 {
		slack += bucketSums(t, l, "execution-samples")[rules.IO] * javaPeriod
	}
	t.Logf("thread-time io %.0f ms: I/O events %.0f ms (socket reads %.0f ms), io native samples %.0f ms, %.0f ms of them inside the events", io/1e6, events/1e6, reads/1e6, nativeIO/1e6, inside/1e6)
	if inside <= slack {
		t.Skipf("%.0f ms of native samples inside waits and I/O events, no more than the %.0f ms margin: counting them once or twice looks the same", inside/1e6, slack/1e6)
	}
	if math.Abs(io-want) > slack+1e3 {
		t.Errorf("thread-time io %.0f ms; want the I/O events' %.0f ms plus the %.0f ms of io native samples outside them, %.0f ms (± %.0f ms)", io/1e6, events/1e6, (nativeIO-inside)/1e6, want/1e6, slack/1e6)
	}
}

// TestSleepRegression: a program that computes and, in the new recording,
// also sleeps 120 × 20 ms: on thread-time, diff's verdict is that wait
// grew, not noise; each side's sample count is its thread-time events
// (execution samples, native samples outside waits, waits), and on the
// sleep type the new side's is its 120 sleeps, not execution samples.
func TestSleepRegression(t *testing.T) {
	t.Parallel()
	paths := jfr.RecordAll(t, []string{"compute"}, []string{"compute", "sleeps"})
	base, next := load(t, paths[0]), load(t, paths[1])
	a := diff.NewAnalyzer(diff.Options{SampleIndex: "thread-time"})
	// Samples kept apart (a native sample no rule places is native or
	// blocked, unknown) are not among a side's samples: count them.
	var apart int64
	a.OnSample(func(s *diff.Sample) {
		if s.Side == result.New && s.Apart != diff.InBucket {
			apart += s.Count
		}
	})
	if err := a.Add(result.Base, base); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(result.New, next); err != nil {
		t.Fatal(err)
	}
	r := a.Diff()
	v := r.Verdict
	// Wait grew, led by the sleeps. A thread-time profile is a state
	// profile, whose verdict lets a growth elsewhere lead before wait's
	// (idle threads park in wait): in a run where the sleeping build also
	// did a little more cpu (0.515 -> 0.557 threads, once), wait's growth
	// comes second, in Also.
	var wait *result.VerdictChange
	var leaders []result.VerdictFrame
	if v != nil && v.Principal != nil && v.Principal.Bucket == rules.Wait {
		wait, leaders = v.Principal, v.Leaders
	} else if v != nil {
		for i := range v.Also {
			if v.Also[i].Bucket == rules.Wait {
				wait, leaders = &v.Also[i], v.Also[i].Leaders
			}
		}
	}
	ledBySleep := false
	for _, f := range leaders {
		ledBySleep = ledBySleep || strings.Contains(f.Name, "Thread.sleep")
	}
	if v == nil || v.NoChange || !v.Grew || wait == nil || wait.Change <= 0 || !ledBySleep {
		t.Fatalf("verdict %+v; want wait grew, led by Thread.sleep", v)
	}
	if want := typeTotals(next)[jfr.SamplesType+"/count"]; r.New.Samples+apart != eventsOf(next, "thread-time") || r.New.Samples < 120 || r.New.Samples > want {
		t.Errorf("new side: %d samples and %d kept apart; want its %d thread-time events (at least the 120 sleeps)", r.New.Samples, apart, eventsOf(next, "thread-time"))
	}
	top := diff.NewAnalyzer(diff.Options{SampleIndex: "sleep"})
	if err := top.Add(result.Base, next); err != nil {
		t.Fatal(err)
	}
	if n := top.Top().Samples; n != 120 {
		t.Errorf("--sample-index sleep: %d samples; want the 120 sleeps", n)
	}
	t.Logf("thread-time: base %d samples, new %d; wait %+.3f", r.Base.Samples, r.New.Samples, wait.Change)
}

// eventsOf sums the samples column over the samples with a value of typ.
func eventsOf(l *profile.Loaded, typ string) int64 {
	i, n := -1, -1
	for j, st := range l.Profile.SampleType {
		switch st.Type {
		case typ:
			i = j
		case jfr.SamplesType:
			n = j
		}
	}
	var out int64
	for _, s := range l.Profile.Sample {
		if i >= 0 && n >= 0 && s.Value[i] != 0 {
			out += s.Value[n]
		}
	}
	return out
}

// TestAsyncProfilerMonitorTurns: in async-profiler's wall-clock
// recordings of four threads taking turns on one synchronized block,
// classified by profdiff, the share of those threads' wall time that is
// lock-contention is within 5 points of the share the recording's own
// stacks show blocked entering the monitor (jfr print: sleeping with the
// method holding the block the innermost Java frame). 2.9's stacks have
// no JVM frames (the reader knows the wait from the frame shape), 4.2.1's
// show ObjectMonitor::EnterI (the rules know it).
func TestAsyncProfilerMonitorTurns(t *testing.T) {
	for _, name := range []string{"ap2.9-wall", "ap2.9-wall-10ms", "ap4.2.1-wall", "ap4.2.1-wall-10ms", "ap4.2.1-all", "ap4.2.1-nobatch"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", name+".jfr")
			l := load(t, path)
			jdkWaitsStayWait(t, l)
			// The monitor threads' samples only: some have no stack that
			// says whose they are (a JVM frame async-profiler could not
			// name, .unknown_Java).
			l.Profile.Sample = slices.DeleteFunc(l.Profile.Sample, func(s *pprofile.Sample) bool {
				return len(s.Label[profile.LabelThread]) != 1 || !strings.HasPrefix(s.Label[profile.LabelThread][0], "monitor-")
			})
			a := diff.NewAnalyzer(diff.Options{SampleIndex: "wall"})
			var lock, all float64
			a.OnSample(func(s *diff.Sample) {
				all += s.Value
				if s.Bucket == rules.LockContention {
					lock += s.Value
				}
			})
			if err := a.Add(result.Base, l); err != nil {
				t.Fatal(err)
			}
			blocked, samples := jfr.MonitorTurnsBlocked(t, path)
			want := float64(blocked) / float64(samples)
			got := lock / all
			t.Logf("lock-contention %.1f%% of the monitor threads' wall time; blocked entering the monitor %.1f%% (%d of %d samples)", 100*got, 100*want, blocked, samples)
			if want < 0.3 || math.Abs(got-want) > 0.05 {
				t.Errorf("lock-contention %.1f%% of the monitor threads' time, blocked entering the monitor %.1f%%: want within 5 points (and blocked at least 30%%)", 100*got, 100*want)
			}
		})
	}
}

// jdkWaitsStayWait checks that the wall samples of the JDK's own waiting
// methods, declared native (the Finalizer's and DestroyJavaVM's
// Object.wait, the Reference Handler's waitForReferencePendingList), are
// wait: a futex wait right below them is theirs, not a monitor's.
func jdkWaitsStayWait(t *testing.T, l *profile.Loaded) {
	t.Helper()
	a := diff.NewAnalyzer(diff.Options{SampleIndex: "wall"})
	got := map[rules.Bucket]float64{}
	a.OnSample(func(s *diff.Sample) {
		for _, id := range s.Stack {
			if n := a.MethodName(id); n == "java.lang.Object.wait" || n == "java.lang.ref.Reference.waitForReferencePendingList" {
				got[s.Bucket] += s.Value
				return
			}
		}
	})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	if got[rules.Wait] == 0 || len(got) != 1 {
		t.Errorf("the JDK's waiting methods' wall time by bucket: %v; want all wait", got)
	}
}

// TestAsyncProfilerKinds: loaded as profdiff's commands load them,
// async-profiler's recordings are of their mode's kind (a -e wall -i 10ms
// recording is wall-clock time, not CPU), with none of the JDK sampler's
// warnings.
func TestAsyncProfilerKinds(t *testing.T) {
	for _, v := range []string{"2.9", "4.2.1"} {
		for mode, want := range map[string]profile.Kind{"cpu": profile.KindCPU, "itimer": profile.KindCPU,
			"wall": profile.KindWall, "wall-10ms": profile.KindWall, "alloc": profile.KindHeap,
			"lock": profile.KindBlock, "all": profile.KindCPU, "nobatch": profile.KindCPU} {
			if mode == "nobatch" && v != "4.2.1" {
				continue // 2.9 has no wall clock beside the CPU engine
			}
			l := load(t, filepath.Join("testdata", "ap"+v+"-"+mode+".jfr"))
			idx := slices.IndexFunc(l.Profile.SampleType, func(st *pprofile.ValueType) bool { return st.Type == l.Profile.DefaultSampleType })
			if got := profile.TypeKind(l, idx); got != want {
				t.Errorf("%s %s: kind %s of %s; want %s", v, mode, got, l.Profile.DefaultSampleType, want)
			}
			for _, w := range l.Warnings {
				if strings.Contains(w, "at most 5 threads") || strings.Contains(w, jfr.ThreadTime) {
					t.Errorf("%s %s: the JDK sampler's warning %q", v, mode, w)
				}
			}
		}
	}
}

// TestAsyncProfilerIdleCollector: in async-profiler 4.2.1's wall-clock
// recordings, which show the JVM's own threads with their C++ frames, G1's
// concurrent threads waiting for their next cycle (under a
// G1...Thread::run_service with no collector work below it) are wait, not
// gc: about three threads' time in each recording.
func TestAsyncProfilerIdleCollector(t *testing.T) {
	for _, name := range []string{"ap4.2.1-wall", "ap4.2.1-all"} {
		l := load(t, filepath.Join("testdata", name+".jfr"))
		a := diff.NewAnalyzer(diff.Options{SampleIndex: "wall"})
		got := map[rules.Bucket]float64{}
		a.OnSample(func(s *diff.Sample) {
			for _, id := range s.Stack {
				if n := a.MethodName(id); strings.HasPrefix(n, "G1") && strings.HasSuffix(n, "Thread::run_service") {
					got[s.Bucket] += s.Value
					return
				}
			}
		})
		if err := a.Add(result.Base, l); err != nil {
			t.Fatal(err)
		}
		if got[rules.Wait] < 3e9 || len(got) != 1 {
			t.Errorf("%s: G1's concurrent threads' wall time by bucket %v; want only wait (over 3 s)", name, got)
		}
	}
}
