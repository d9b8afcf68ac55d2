package diff

// Issue 12's done-when checks, on profiles the real tools make at test
// time: runtime/pprof mutex and block profiles of sections that contend
// more on the new side, fgprof wall-clock profiles of a program that adds
// a contended mutex, and `perf record` where perf can record.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixge/fgprof"
	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/producertest"
)

// windowProfile returns the runtime profile name ("mutex", "block") of
// what happened while section ran, in a window of at least d: the profile
// after it minus the one before, with the window as its duration, as
// net/http/pprof's ?seconds=N does.
func windowProfile(t *testing.T, source, name string, d time.Duration, section func()) *profile.Loaded {
	t.Helper()
	read := func() *pprofile.Profile {
		var buf bytes.Buffer
		if err := pprof.Lookup(name).WriteTo(&buf, 0); err != nil {
			t.Fatal(err)
		}
		p, err := pprofile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := read()
	start := time.Now()
	section()
	if rest := d - time.Since(start); rest > 0 {
		time.Sleep(rest) // the scenario: the window lasts at least d (as ?seconds=N does), not synchronization
	}
	window := time.Since(start)
	after := read()
	before.Scale(-1)
	p, err := pprofile.Merge([]*pprofile.Profile{before, after})
	if err != nil {
		t.Fatal(err)
	}
	p.TimeNanos, p.DurationNanos = after.TimeNanos, int64(window)
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	l, err := profile.Parse(source, buf.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func spinFor(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// mutexStep is a critical section held for hold.
func mutexStep(mu *sync.Mutex, hold time.Duration) {
	mu.Lock()
	spinFor(hold)
	mu.Unlock()
}

// mutexContend runs workers goroutines through one mutex for d.
func mutexContend(workers int, hold, d time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				mutexStep(&mu, hold)
			}
		}()
	}
	wg.Wait()
}

// A mutex diff where contention grew: every sample is lock contention, so
// shares stay 100%, and the rows and the JSON carry the growth as seconds
// of delay per second.
func TestMutexGrowthIsAbsolute(t *testing.T) {
	prev := runtime.SetMutexProfileFraction(1)
	defer runtime.SetMutexProfileFraction(prev)
	const window = 300 * time.Millisecond
	base := windowProfile(t, "base.mutex", "mutex", window, func() { mutexContend(2, 20*time.Microsecond, 150*time.Millisecond) })
	nw := windowProfile(t, "new.mutex", "mutex", window, func() { mutexContend(6, 300*time.Microsecond, 150*time.Millisecond) })
	r := diffOf(t, Options{}, base, nw)
	if r.Kind != profile.KindMutex || r.Meaning != result.MeaningDelay || r.RateUnit != "s/s" || r.Normalize != result.NormalizeRate {
		t.Fatalf("kind %s meaning %s rate unit %q normalize %s; want mutex, delay, s/s, rate", r.Kind, r.Meaning, r.RateUnit, r.Normalize)
	}
	if r.By != result.ByCaller || !r.ByDefault {
		t.Errorf("by %s (default %v), want caller chosen for the kind", r.By, r.ByDefault)
	}
	lc := r.Buckets[rules.LockContention]
	if lc.New != 1 || lc.Base != 0 && lc.Base != 1 {
		t.Errorf("lock-contention shares %.4f → %.4f, want 100%% (every mutex sample is lock contention)", lc.Base, lc.New)
	}
	if lc.BaseRate == nil || lc.NewRate == nil {
		t.Fatalf("lock-contention has no rates: %+v", lc.Values)
	}
	// Both windows are ~0.3 s; six workers holding for 300µs make far more
	// delay than two holding for 20µs.
	wantRate := lc.NewValue / 1e9 / (float64(r.New.DurationNanos) / 1e9)
	if math.Abs(*lc.NewRate-wantRate) > 1e-9*wantRate || *lc.NewRate < 2**lc.BaseRate {
		t.Errorf("lock-contention rate %.4g → %.4g s/s, want the new %.4g and a clear growth", *lc.BaseRate, *lc.NewRate, wantRate)
	}
	t.Logf("lock-contention %.3g → %.3g s/s (shares %.2f → %.2f)", *lc.BaseRate, *lc.NewRate, lc.Base, lc.New)
	js, err := json.Marshal(r.Buckets[rules.LockContention])
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"base_rate":`, `"new_rate":`, `"rate_unit":"s/s"`, `"base_value":`, `"new_value":`} {
		if !bytes.Contains(js, []byte(f)) {
			t.Errorf("bucket JSON %s lacks %s", js, f)
		}
	}
	top := r.Methods[0]
	if !strings.HasSuffix(top.Name, "mutexStep") || noteDirection(top.Note) <= 0 {
		t.Errorf("top row %s %q, want mutexStep grown", top.Name, top.Note)
	}
}

// blockRecv waits on a channel; blockLock on a mutex.
func blockRecv(ch chan struct{}) { <-ch }
func blockLock(mu *sync.Mutex)   { mu.Lock(); mu.Unlock() }

// blockSection parks chans goroutines on a channel and locks goroutines on
// a mutex for hold each, counted from when all are parked.
func blockSection(t *testing.T, chans, locks int, hold time.Duration) {
	ch := make(chan struct{})
	var mu sync.Mutex
	var wg sync.WaitGroup
	mu.Lock()
	for range chans {
		wg.Add(1)
		go func() { defer wg.Done(); blockRecv(ch) }()
	}
	for range locks {
		wg.Add(1)
		go func() { defer wg.Done(); blockLock(&mu) }()
	}
	waitParkedIn(t, "blockRecv", "chan receive", chans)
	waitParkedIn(t, "blockLock", "sync.Mutex.Lock", locks)
	time.Sleep(hold) // the scenario: how long the profiled goroutines stay blocked, not synchronization
	close(ch)
	mu.Unlock()
	wg.Wait()
}

// waitParkedIn waits, between yields (waitFor), until n goroutines are
// parked in fn in state (as runtime.Stack's header names it).
func waitParkedIn(t *testing.T, fn, state string, n int) {
	t.Helper()
	var buf []byte
	waitFor(t, fmt.Sprintf("%d goroutines of %s in %q", n, fn, state), func() bool {
		got := 0
		for _, s := range goroutineStates(allStacks(&buf), fn) {
			if s == state {
				got++
			}
		}
		return got >= n
	})
}

func fmtRate(r *float64) string {
	if r == nil {
		return "unknown"
	}
	return strconv.FormatFloat(*r, 'g', 4, 64)
}

// noteDirection is the direction a note claims: 1 up, -1 down, 0 none.
func noteDirection(note string) int {
	switch {
	case note == "new" || strings.HasPrefix(note, "doubled") || strings.Contains(note, "x "):
		return 1
	case note == "gone" || strings.HasPrefix(note, "halved") || strings.HasPrefix(note, "1/") || strings.HasPrefix(note, "<1/"):
		return -1
	}
	return 0
}

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// inclusiveByName sums, per function name, the values of the samples
// whose stacks contain it (once per sample): pprof's cum column.
func inclusiveByName(p *pprofile.Profile, idx int) map[string]float64 {
	out := map[string]float64{}
	for _, s := range p.Sample {
		seen := map[string]bool{}
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if n := ln.Function.Name; !seen[n] {
					seen[n] = true
					out[n] += float64(s.Value[idx])
				}
			}
		}
	}
	return out
}

// A block diff where channel waits doubled while far more lock waits came:
// the channel row's share falls, yet its note and direction follow its
// time, which rose, as pprof -diff_base shows; every row agrees in sign
// with pprof's own arithmetic on the same profiles.
func TestBlockRowsFollowTime(t *testing.T) {
	runtime.SetBlockProfileRate(1)
	defer runtime.SetBlockProfileRate(0)
	const window = 250 * time.Millisecond
	base := windowProfile(t, "base.block", "block", window, func() { blockSection(t, 2, 0, 40*time.Millisecond) })
	nw := windowProfile(t, "new.block", "block", window, func() { blockSection(t, 4, 8, 40*time.Millisecond) })
	r := diffOf(t, Options{Top: -1}, base, nw)
	if r.Kind != profile.KindBlock || r.By != result.ByCaller || r.Normalize != result.NormalizeRate {
		t.Fatalf("kind %s by %s normalize %s; want block, caller, rate", r.Kind, r.By, r.Normalize)
	}
	recv := findMethod(r, "blockRecv")
	if recv == nil {
		t.Fatalf("no blockRecv row in %+v", r.Methods)
	}
	if recv.Delta >= 0 || *recv.NewRate <= *recv.BaseRate || noteDirection(recv.Note) < 0 {
		t.Errorf("blockRecv: share Δ %.3f, rate %.3g → %.3g, note %q; want a falling share, a rising rate and no decrease in the note",
			recv.Delta, *recv.BaseRate, *recv.NewRate, recv.Note)
	}
	t.Logf("blockRecv: share %.3f → %.3f, %.3g → %.3g s/s, note %q", recv.Base, recv.New, *recv.BaseRate, *recv.NewRate, recv.Note)
	for _, m := range r.Methods {
		if d := noteDirection(m.Note); d != 0 && d != sign(*m.NewRate-*m.BaseRate) {
			t.Errorf("%s: note %q contradicts its rate %.3g → %.3g", m.Name, m.Note, *m.BaseRate, *m.NewRate)
		}
	}
	// Inclusive rows are pprof's cum column: the same values, so the same
	// sign as -diff_base, and rates in the same direction per second.
	cum := diffOf(t, Options{Cum: true, Top: -1, Normalize: result.NormalizeValue}, base, nw)
	idx := len(base.Profile.SampleType) - 1 // delay/nanoseconds
	pb, pn := inclusiveByName(base.Profile, idx), inclusiveByName(nw.Profile, idx)
	checked := 0
	for _, m := range cum.Methods {
		vb, okb := pb[m.Name]
		vn, okn := pn[m.Name]
		if !okb && !okn {
			continue
		}
		checked++
		if math.Abs(m.BaseValue-vb) > 0.5 || math.Abs(m.NewValue-vn) > 0.5 {
			t.Errorf("%s: values %.0f → %.0f, pprof's cum %.0f → %.0f", m.Name, m.BaseValue, m.NewValue, vb, vn)
		}
		if d := noteDirection(m.Note); d != 0 && d != sign(vn-vb) {
			t.Errorf("%s: note %q, but pprof -diff_base says %+.0f", m.Name, m.Note, vn-vb)
		}
	}
	t.Logf("%d inclusive rows agree with pprof's cum values", checked)
	if checked < 3 {
		t.Errorf("only %d rows matched pprof's names", checked)
	}
	checkPprofDiffSigns(t, base, nw, cum)
}

// checkPprofDiffSigns runs the peer itself, `go tool pprof -top -cum
// -diff_base`, on the two profiles and checks that every row it shows
// has the sign of r's inclusive value change for that function.
func checkPprofDiffSigns(t *testing.T, base, nw *profile.Loaded, r *result.Result) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Log("skipping the go tool pprof comparison: no go command on PATH")
		return
	}
	dir := t.TempDir()
	files := [2]string{filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "new.pb.gz")}
	for i, l := range []*profile.Loaded{base, nw} {
		var buf bytes.Buffer
		if err := l.Profile.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(files[i], buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(goBin, "tool", "pprof", "-top", "-cum", "-nodecount=1000", "-diff_base", files[0], files[1]).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	ours := map[string]float64{}
	for _, m := range r.Methods {
		ours[m.Name] = m.NewValue - m.BaseValue
	}
	compared := 0
	header := false
	for _, ln := range strings.Split(string(out), "\n") {
		f := strings.Fields(ln)
		if len(f) == 5 && f[0] == "flat" && f[3] == "cum" {
			header = true
			continue
		}
		if !header || len(f) < 6 {
			continue
		}
		name := strings.TrimSuffix(strings.Join(f[5:], " "), " (inline)")
		d, ok := ours[name]
		if !ok {
			continue
		}
		pprofSign := 1
		switch {
		case strings.HasPrefix(f[3], "-"):
			pprofSign = -1
		case strings.Trim(f[3], "0.") == "" || f[3] == "0":
			pprofSign = 0
		}
		if sign(d) != pprofSign && pprofSign != 0 {
			t.Errorf("%s: pprof -diff_base cum %s, profdiff %+.0f", name, f[3], d)
		}
		compared++
	}
	t.Logf("%d rows have pprof -diff_base's sign", compared)
	if compared < 3 {
		t.Errorf("only %d of pprof's rows matched profdiff's names:\n%s", compared, out)
	}
}

func wallSpin(d time.Duration) { spinFor(d) }

// wallLockedStep and wallFreeStep are the program's own functions: one
// works under a shared mutex, one without.
func wallLockedStep(mu *sync.Mutex) {
	mu.Lock()
	wallSpin(2 * time.Millisecond)
	mu.Unlock()
}

func wallFreeStep() { wallSpin(2 * time.Millisecond) }

func wallWorkers(n int, mu *sync.Mutex, d time.Duration) {
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if mu != nil {
					wallLockedStep(mu)
				} else {
					wallFreeStep()
				}
			}
		}()
	}
	wg.Wait()
}

func recordWall(t *testing.T, name string, section func()) *profile.Loaded {
	t.Helper()
	var buf bytes.Buffer
	stop := fgprof.Start(&buf, fgprof.FormatPprof)
	section()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	l, err := profile.Parse(name, buf.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A wall-clock diff of a program that added a contended mutex: by
// default the grown row is the program's function that waits for the
// lock, not the scheduler's runtime.gopark.
func TestWallDiffDefaultsToCaller(t *testing.T) {
	base := recordWall(t, "base.wall", func() { wallWorkers(4, nil, 400*time.Millisecond) })
	var mu sync.Mutex
	nw := recordWall(t, "new.wall", func() { wallWorkers(4, &mu, 400*time.Millisecond) })
	r := diffOf(t, Options{}, base, nw)
	if r.Kind != profile.KindWall || r.By != result.ByCaller || !r.ByDefault || r.RateUnit != "goroutines" || r.Meaning != result.MeaningState {
		t.Fatalf("kind %s by %s (default %v) rate unit %q meaning %s; want wall, caller by default, goroutines, state", r.Kind, r.By, r.ByDefault, r.RateUnit, r.Meaning)
	}
	var grown *result.MethodRow
	for i := range r.Methods {
		if m := &r.Methods[i]; *m.NewRate > *m.BaseRate {
			grown = m
			break
		}
	}
	if grown == nil || !strings.HasSuffix(grown.Name, "wallLockedStep") {
		t.Fatalf("top grown row %+v, want wallLockedStep; rows %+v", grown, r.Methods)
	}
	if byFrame := diffOf(t, Options{By: result.ByFrame}, base, nw); len(byFrame.Methods) > 0 {
		t.Logf("by frame the top row would be %s %+.3f", byFrame.Methods[0].Name, byFrame.Methods[0].Delta)
	}
	t.Logf("top grown row %s: %.2f → %.2f goroutines, %s %.2f, note %q", grown.Name, *grown.BaseRate, *grown.NewRate, grown.Bucket, grown.BucketShare, grown.Note)
	// Three of four workers wait for the lock: on average about three
	// goroutines are in wallLockedStep.
	if *grown.NewRate < 1 || *grown.NewRate > 4.5 || grown.Bucket != rules.LockContention {
		t.Errorf("wallLockedStep: %.2f goroutines in %s, want about 3 in lock-contention", *grown.NewRate, grown.Bucket)
	}
	if grown.Buckets != nil {
		// The lock holder's own spinning is attributed to wallSpin, so
		// what is here beside lock contention is small.
		if grown.BucketShare < 0.5 {
			t.Errorf("wallLockedStep: dominant bucket share %.2f", grown.BucketShare)
		}
	}
}

// Ten perf samples of a 1 ms cpu-clock period: 10 million nanoseconds,
// but ten sampled events, so the low-sample warning and ~ marks apply.
func TestPerfScriptTenSamplesAreNoisy(t *testing.T) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not installed")
	}
	data := filepath.Join(t.TempDir(), "perf.data")
	rec := exec.Command(perf, producertest.PerfRecord(perf, "-q", "-e", "cpu-clock", "-c", "1000000", "-g", "-o", data, "--",
		"sh", "-c", `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`)...)
	if out, err := rec.CombinedOutput(); err != nil {
		t.Skipf("perf cannot record here: %v: %s", err, bytes.TrimSpace(out))
	}
	script, err := exec.Command(perf, "script", "-i", data).Output()
	if err != nil {
		t.Skipf("perf script failed: %v", err)
	}
	var samples []string
	for _, b := range strings.Split(string(script), "\n\n") {
		if strings.TrimSpace(b) != "" {
			samples = append(samples, strings.Trim(b, "\n"))
		}
	}
	if len(samples) < 20 {
		t.Fatalf("perf recorded %d samples of a ~0.3 s loop, want at least 20", len(samples))
	}
	side := func(name string, s []string) *profile.Loaded {
		l, err := profile.Parse(name, []byte(strings.Join(s, "\n\n")+"\n\n"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	r := diffOf(t, Options{Top: -1}, side("base.perf", samples[:10]), side("new.perf", samples[10:20]))
	if r.Base.Records != 10 || r.New.Records != 10 || r.Base.Total != 1e7 {
		t.Errorf("records %d and %d, base total %.0f; want 10, 10 and 1e7 ns", r.Base.Records, r.New.Records, r.Base.Total)
	}
	for _, want := range []string{"base: only 10 samples", "new: only 10 samples"} {
		if !strings.Contains(strings.Join(r.Warnings, "\n"), want) {
			t.Errorf("warnings %q lack %q", r.Warnings, want)
		}
	}
	marked := 0
	for _, m := range r.Methods {
		if m.Noisy {
			marked++
		}
		if m.Delta != 0 && math.Abs(m.Delta) < 0.2 && !m.Noisy {
			t.Errorf("%s: %+.2f of ten samples is not marked noisy", m.Name, m.Delta)
		}
	}
	if marked == 0 {
		t.Errorf("no row of a 10-sample diff is marked noisy: %+v", r.Methods)
	}
	// One shell thread sampled every 1 ms of its CPU: ten samples cover
	// ten periods (the stamps' span plus one), so at most one core,
	// not 10/9 of one (less when the machine is busy and the shell waits
	// for a CPU between samples). The timer fires on CPU time, and its
	// stamps jitter by microseconds: 1.001 cores was seen, so allow 2%,
	// well below the 11% of a span without its last period.
	if tr := r.Base.TotalRate; tr == nil || *tr > 1.02 || *tr <= 0 {
		t.Errorf("base rate %.4f cores for one thread's ten 1 ms samples; want at most 1 (2%% for timer jitter)", derefRate(tr))
	}
}

// derefRate is a rate or 0 when there is none.
func derefRate(r *float64) float64 {
	if r == nil {
		return 0
	}
	return *r
}
