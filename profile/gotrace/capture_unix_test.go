//go:build unix

package gotrace

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"
	xtrace "golang.org/x/exp/trace"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// blockTime is how long each scenario goroutine blocks.
const blockTime = 40 * time.Millisecond

//go:noinline
func scenarioMutex(mu *sync.Mutex, wg *sync.WaitGroup) {
	defer wg.Done()
	mu.Lock()
	mu.Unlock()
}

//go:noinline
func scenarioChan(ch chan int, wg *sync.WaitGroup) {
	defer wg.Done()
	<-ch
}

//go:noinline
func scenarioNet(c net.Conn, wg *sync.WaitGroup) {
	defer wg.Done()
	var b [1]byte
	_, _ = c.Read(b[:])
}

//go:noinline
func scenarioSleep(wg *sync.WaitGroup) {
	defer wg.Done()
	time.Sleep(blockTime) // the scenario: the traced goroutine sleeps
}

//go:noinline
func scenarioSyscall(fd int, wg *sync.WaitGroup) {
	defer wg.Done()
	var b [1]byte
	_, _ = syscall.Read(fd, b[:]) // a blocking pipe: a plain system call, no netpoll
}

//go:noinline
func scenarioSpin(d time.Duration, wg *sync.WaitGroup) {
	defer wg.Done()
	x := 0
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 1000; i++ {
			x += i
		}
	}
	sink = x
}

var sink int

var capturedOnce struct {
	sync.Once
	data []byte
	err  error
	skip string
}

// captured returns a trace recorded once per test binary (see captureTrace).
func captured(t *testing.T) []byte {
	t.Helper()
	capturedOnce.Do(func() {
		capturedOnce.data, capturedOnce.skip, capturedOnce.err = captureTrace()
	})
	if capturedOnce.skip != "" {
		t.Skip(capturedOnce.skip)
	}
	if capturedOnce.err != nil {
		t.Fatal(capturedOnce.err)
	}
	return capturedOnce.data
}

// captureTrace records a trace while one goroutine of each scenario blocks
// for about blockTime: on a mutex held by this goroutine, on a channel, on
// a read from a TCP connection over 127.0.0.1, in time.Sleep and in a read
// system call on a pipe, each released after blockTime; another spins for
// half of it.
func captureTrace() (data []byte, skip string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Sprintf("no loopback network: %v", err), nil
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, "", err
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		return nil, "", fmt.Errorf("accept failed")
	}
	defer server.Close()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		return nil, "", err
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])

	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		return nil, fmt.Sprintf("tracing unavailable: %v", err), nil
	}
	var mu sync.Mutex
	ch := make(chan int)
	var wg sync.WaitGroup
	mu.Lock()
	wg.Add(6)
	go scenarioMutex(&mu, &wg)
	go scenarioChan(ch, &wg)
	go scenarioNet(server, &wg)
	go scenarioSleep(&wg)
	go scenarioSyscall(fds[0], &wg)
	go scenarioSpin(blockTime/2, &wg)
	if err := waitBlocked(); err != nil {
		trace.Stop()
		mu.Unlock()
		close(ch)
		_, _ = client.Write([]byte{1})
		_, _ = syscall.Write(fds[1], []byte{1})
		wg.Wait()
		return nil, "", err
	}
	// Every scenario goroutine is blocked now, however busy the machine:
	// each stays so for blockTime, until released.
	time.Sleep(blockTime) // the scenario: how long the traced goroutines stay blocked, not synchronization
	mu.Unlock()
	ch <- 1
	_, _ = client.Write([]byte{1})
	_, _ = syscall.Write(fds[1], []byte{1})
	wg.Wait()
	trace.Stop()
	return buf.Bytes(), "", nil
}

// blockedStates is the state runtime.Stack shows for each blocking
// scenario goroutine once it is blocked where the scenario says.
var blockedStates = map[string]string{
	"scenarioMutex":   "sync.Mutex.Lock",
	"scenarioChan":    "chan receive",
	"scenarioNet":     "IO wait",
	"scenarioSleep":   "sleep",
	"scenarioSyscall": "syscall",
}

// waitBlocked returns once every blocking scenario goroutine has been
// seen in its state (blockedStates; each stays so until released, but the
// sleeper, which may also have returned by then), or an error naming
// those that were not after 10 s. The runtime offers no event for a
// goroutine having parked, so it checks the goroutines' stacks between
// yields, a bounded number of times.
func waitBlocked() error {
	buf := make([]byte, 1<<16)
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		var missing []string
		for fn, state := range blockedStates {
			present := false
			for _, g := range strings.Split(string(buf[:n]), "\n\n") {
				if strings.Contains(g, "."+fn+"(") {
					present = true
					seen[fn] = seen[fn] || strings.Contains(g, " ["+state)
				}
			}
			// A goroutine not yet run shows its function too: absent, the
			// sleeper has slept its blockTime and returned.
			seen[fn] = seen[fn] || fn == "scenarioSleep" && !present
			if !seen[fn] {
				missing = append(missing, fn+" ("+state+")")
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if i == 1_000_000 || time.Now().After(deadline) {
			return fmt.Errorf("scenario goroutines not blocked after %d checks: %s", i+1, strings.Join(missing, ", "))
		}
		runtime.Gosched()
	}
}

func sampleNames(s *pprofile.Sample) []string {
	var names []string
	for _, l := range s.Location {
		for _, ln := range l.Line {
			names = append(names, ln.Function.Name)
		}
	}
	return names
}

// TestCapturedTrace checks the bucket of each scenario goroutine's blocked
// time, decided by the recorded state and reason, and the stack it is
// charged to: where the goroutine blocked.
func TestCapturedTrace(t *testing.T) {
	data := captured(t)
	p, warns, err := Parse(data, Options{ProfilerFrame: tracerFrame.MatchString})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings: %q", warns)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if p.DefaultSampleType != "wall" || p.SampleType[1].Type+"/"+p.SampleType[1].Unit != "wall/nanoseconds" {
		t.Errorf("sample types %v, default %q", p.SampleType, p.DefaultSampleType)
	}
	type key struct{ scenario, bucket, reason, leaf string }
	got := map[key]int64{}
	profiler := 0
	for _, s := range p.Sample {
		if s.Label[labels.Profiler] != nil {
			profiler++
			continue
		}
		names := sampleNames(s)
		for _, n := range names {
			if i := strings.Index(n, ".scenario"); i >= 0 {
				k := key{n[i+1:], s.Label[labels.Bucket][0], strings.Join(s.Label[labels.Reason], ""), names[0]}
				got[k] += s.Value[1]
				break
			}
		}
	}
	if profiler == 0 {
		t.Error("no sample of the trace reader goroutine is labelled as the profiler's")
	}
	for _, want := range []key{
		{"scenarioMutex", "lock-contention", "sync", "sync.(*Mutex).Lock"},
		{"scenarioChan", "wait", "chan receive", "runtime.chanrecv1"},
		{"scenarioNet", "io", "network", "internal/poll.(*FD).Read"},
		{"scenarioSleep", "wait", "sleep", "time.Sleep"},
		{"scenarioSyscall", "syscall", "", "syscall.read"},
	} {
		if ns := got[want]; ns < int64(blockTime/2) {
			t.Errorf("%s: %v in %s (reason %q, leaf %s), want about %v; have %v", want.scenario, time.Duration(ns), want.bucket, want.reason, want.leaf, blockTime, got)
		}
	}
	// The spinning goroutine is running, or runnable when the CPUs are busy.
	var spin int64
	for k, ns := range got {
		if k.scenario == "scenarioSpin" && (k.bucket == "cpu" || k.bucket == labels.Sched) {
			spin += ns
			if k.leaf != FrameRunning && k.leaf != FrameRunnable {
				t.Errorf("spinning time charged to leaf %s", k.leaf)
			}
		}
	}
	if spin < int64(blockTime/4) {
		t.Errorf("scenarioSpin: %v running or runnable, want about %v", time.Duration(spin), blockTime/2)
	}
	checkWindow(t, "captured", data)
}

// Cut short, a trace gives an error that says where it ends, never a
// panic.
func TestTruncated(t *testing.T) {
	data := captured(t)
	for _, n := range []int{17, 64, len(data) / 3, len(data) - 7} {
		_, _, err := Parse(data[:n], Options{})
		if err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		} else if want := fmt.Sprintf("Go execution trace (go %s) cut short: the file ends at byte %d inside the ", Version(data), n); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("truncated to %d bytes: %v\nwant it to start %q", n, err, want)
		}
	}
}

// TestCutShortFraming walks the batch framing of this Go's own trace: it
// reads to the end exactly, and a cut anywhere but between two batches is
// seen, at the batch it falls in.
func TestCutShortFraming(t *testing.T) {
	data := captured(t)
	minor, _ := strconv.Atoi(strings.TrimPrefix(Version(data), "1."))
	if cut, ok := walkBatches(data, minor, func(batchFrame) {}); cut != "" || !ok {
		t.Fatalf("the whole trace: %q, %v", cut, ok)
	}
	batches := 0
	for n := headerLen + 1; n < len(data); n++ {
		cut, ok := walkBatches(data[:n], minor, func(batchFrame) {})
		if !ok {
			t.Fatalf("cut to %d bytes: the framing reads as corrupt, not cut", n)
		}
		if cut == "" {
			batches++ // a cut between batches leaves whole framing
			continue
		}
		if want := fmt.Sprintf("the file ends at byte %d inside the ", n); !strings.HasPrefix(cut, want) {
			t.Fatalf("cut to %d bytes: %q, want it to start %q", n, cut, want)
		}
	}
	// Batches are at most 64 KiB: a trace of this size has several, and
	// far fewer than bytes.
	if batches == 0 || batches > len(data)/32 {
		t.Errorf("%d of %d cuts fell between batches", batches, len(data))
	}
}

// toolCategories are the profiles `go tool trace -pprof=TYPE` writes
// (cmd/trace/pprof.go) and the intervals each counts: net is waiting with
// reason "network", sync waiting with a reason containing chan, sync or
// select, syscall the GoSyscall state, sched the GoRunnable state.
var toolCategories = []struct {
	flag  string
	match func(state xtrace.GoState, reason string) bool
}{
	{"net", func(s xtrace.GoState, r string) bool { return s == xtrace.GoWaiting && r == "network" }},
	{"sync", func(s xtrace.GoState, r string) bool {
		return s == xtrace.GoWaiting && (strings.Contains(r, "chan") || strings.Contains(r, "sync") || strings.Contains(r, "select"))
	}},
	{"syscall", func(s xtrace.GoState, _ string) bool { return s == xtrace.GoSyscall }},
	{"sched", func(s xtrace.GoState, _ string) bool { return s == xtrace.GoRunnable }},
}

var toolOnce struct {
	sync.Once
	path, skip string
}

// traceTool builds cmd/trace once per test binary (what `go tool trace`
// runs), or skips when there is no go command.
func traceTool(t *testing.T) string {
	t.Helper()
	toolOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			toolOnce.skip = "no go command: " + err.Error()
			return
		}
		dir, err := os.MkdirTemp("", "profdiff-gotrace-")
		if err != nil {
			toolOnce.skip = err.Error()
			return
		}
		toolDir = dir
		bin := filepath.Join(dir, "trace")
		if out, err := exec.Command(goBin, "build", "-o", bin, "cmd/trace").CombinedOutput(); err != nil {
			toolOnce.skip = fmt.Sprintf("cannot build cmd/trace: %v: %s", err, out)
			return
		}
		toolOnce.path = bin
	})
	if toolOnce.skip != "" {
		t.Skip(toolOnce.skip)
	}
	return toolOnce.path
}

var toolDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if toolDir != "" {
		os.RemoveAll(toolDir)
	}
	os.Exit(code)
}

// compareWithTool checks, for each cmd/trace category, that profdiff's
// intervals agree with `go tool trace -pprof=TYPE`, and returns a line of
// the numbers. cmd/trace counts less, for two reasons:
//
//   - it counts an interval only when it sees both ends: from a transition
//     (or a status report) into the state to the transition out of it.
//     profdiff also counts what the trace window cuts: a goroutine still in
//     the state when the trace ends is charged up to the last event, and
//     one whose first event leaves a state it was in before the trace, from
//     the first event ("cut" below);
//   - it clips each goroutine to its lifetime as its summary records it,
//     which starts when the goroutine first ran, so the scheduling latency
//     between a goroutine's creation and its first run (and a syscall a
//     goroutine was created in) is not counted ("before first run").
//
// The intervals that remain must match the tool within 1 µs per category,
// and the profile Parse returns must hold exactly all the intervals.
func compareWithTool(t *testing.T, tool, name string, data []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "x.trace")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWalker(Options{})
	var ivs []interval
	w.onInterv = func(iv interval) { ivs = append(ivs, iv) }
	if err := w.walk(data); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p := w.profile()
	if len(p.Sample) == 0 {
		// A trace without goroutines: cmd/trace fails on it too ("failed
		// to find matching goroutines"), and profile.Parse says it holds
		// no goroutine time.
		if err := exec.Command(tool, "-pprof=sched", file).Run(); err == nil {
			t.Errorf("%s: go tool trace found goroutine time where profdiff found none", name)
		}
		return name + ": no goroutines (go tool trace fails too)"
	}
	firstRun := map[xtrace.GoID]xtrace.Time{}
	for _, iv := range ivs {
		if iv.state == xtrace.GoRunning && iv.startEvent {
			if t0, ok := firstRun[iv.g]; !ok || iv.from < t0 {
				firstRun[iv.g] = iv.from
			}
		}
	}
	var line strings.Builder
	fmt.Fprintf(&line, "%s:", name)
	for _, c := range toolCategories {
		out, err := exec.Command(tool, "-pprof="+c.flag, file).Output()
		if err != nil {
			t.Errorf("%s: go tool trace -pprof=%s: %v", name, c.flag, err)
			continue
		}
		tp, err := pprofile.ParseData(out)
		if err != nil {
			t.Errorf("%s: go tool trace -pprof=%s output: %v", name, c.flag, err)
			continue
		}
		var theirs int64
		for _, s := range tp.Sample {
			theirs += s.Value[1]
		}
		var both, cut, prerun int64
		for _, iv := range ivs {
			if !c.match(iv.state, iv.reason) {
				continue
			}
			d := int64(iv.to - iv.from)
			if !iv.startEvent || iv.open {
				cut += d
				continue
			}
			if t0, ok := firstRun[iv.g]; ok && iv.from < t0 {
				in := max(0, int64(iv.to-t0))
				both += in
				prerun += d - in
				continue
			}
			both += d
		}
		var ours int64
		for _, s := range p.Sample {
			if c.match(stateOf(s.Label[labels.State][0]), strings.Join(s.Label[labels.Reason], "")) {
				ours += s.Value[1]
			}
		}
		if d := both - theirs; d > 1000 || d < -1000 {
			t.Errorf("%s: -pprof=%s: go tool trace %d ns, profdiff %d ns with both ends seen (%+d)", name, c.flag, theirs, both, d)
		}
		if ours != both+cut+prerun {
			t.Errorf("%s: -pprof=%s: profile holds %d ns, intervals %d + %d cut by the window + %d before first run", name, c.flag, ours, both, cut, prerun)
		}
		fmt.Fprintf(&line, "\n  %-7s go tool trace %v, profdiff %v (%+dns); profdiff also counts %v cut by the window, %v before first run",
			c.flag, time.Duration(theirs), time.Duration(both), both-theirs, time.Duration(cut), time.Duration(prerun))
	}
	return line.String()
}

func stateOf(name string) xtrace.GoState {
	switch name {
	case "running":
		return xtrace.GoRunning
	case "runnable":
		return xtrace.GoRunnable
	case "waiting":
		return xtrace.GoWaiting
	case "syscall":
		return xtrace.GoSyscall
	}
	return xtrace.GoUndetermined
}

// TestAgainstGoToolTrace compares with `go tool trace -pprof=...` on the
// trace this test captures and on the Go team's traces in the corpus.
func TestAgainstGoToolTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/trace")
	}
	tool := traceTool(t)
	t.Log(compareWithTool(t, tool, "captured", captured(t)))
	dir := corpusDir(t)
	if dir == "" {
		t.Log("../shared/corpus not found; corpus part skipped")
		return
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "golang-go", "*.bin.trace"))
	for _, path := range paths {
		if brokenTrace(path) {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "src__internal__trace__testdata__tests__"), ".test.bin.trace")
		t.Log(compareWithTool(t, tool, name, data))
	}
}

// TestCapturedWakers: the waiting time of each scenario names who ended
// it (labels.Waker): the mutex and channel waits, captureTrace (which
// unlocked and sent), with its stack root first; the network read, the
// network poller; the sleep, a timer. The time still waiting when the
// trace ended names none.
func TestCapturedWakers(t *testing.T) {
	p, _, err := Parse(captured(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"scenarioMutex": "gotrace.captureTrace", "scenarioChan": "gotrace.captureTrace",
		"scenarioNet": labels.WakerNetwork, "scenarioSleep": labels.WakerTimer,
	}
	got := map[string]map[string]int64{}
	for _, s := range p.Sample {
		if s.Label[labels.State][0] != "waiting" {
			if s.Label[labels.Waker] != nil {
				t.Errorf("a %s sample names a waker: %q", s.Label[labels.State][0], s.Label[labels.Waker])
			}
			continue
		}
		for _, n := range sampleNames(s) {
			i := strings.Index(n, ".scenario")
			if i < 0 {
				continue
			}
			sc := n[i+1:]
			if got[sc] == nil {
				got[sc] = map[string]int64{}
			}
			w := strings.Join(s.Label[labels.Waker], "")
			if strings.Contains(w, ";") {
				frames := strings.Split(w, ";")
				if !strings.HasSuffix(frames[len(frames)-1], "runtime.ready") && !strings.Contains(w, "Unlock") && !strings.Contains(w, "chansend") {
					t.Logf("%s: waker stack %s", sc, w)
				}
				w = frames[0] // root first: testing.tRunner...
				for _, f := range frames {
					if strings.HasSuffix(f, ".captureTrace") {
						w = "gotrace.captureTrace"
					}
				}
			}
			got[sc][w] += s.Value[1]
		}
	}
	for sc, waker := range want {
		total := int64(0)
		for _, v := range got[sc] {
			total += v
		}
		if total == 0 || got[sc][waker] < blockTime.Nanoseconds()*9/10 {
			t.Errorf("%s: waiting time by waker %v (ns), want ≥ %v woken by %s", sc, got[sc], blockTime*9/10, waker)
		}
	}
}

// TestBlameCaptured: scenarioMutex waited for the mutex captureTrace held
// while it slept; followed back along the wake-up, its wait is charged to
// captureTrace, asleep (no goroutine woke it: a timer), all of it. Cut
// short, the trace gives Blame an error, never a panic.
func TestBlameCaptured(t *testing.T) {
	data := captured(t)
	b, err := Blame(data, BlameOptions{ProfilerFrame: tracerFrame.MatchString})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*pprofile.Profile{b.Locks, b.Paths} {
		if err := p.CheckValid(); err != nil {
			t.Fatal(err)
		}
	}
	// The holder's time waiting for a CPU after its sleep ("[runnable]",
	// scheduler latency) and a collection that stopped the world while it
	// held the lock (runtime.gc… frames) are on the path too, the machine's
	// and the runtime's: the rest is captureTrace's, nearly all of it.
	var waited, toHolder, runnable int64
	others := map[string]int64{}
	for _, s := range b.Locks.Sample {
		if !strings.Contains(strings.Join(s.Label[LabelWaiter], ""), "scenarioMutex") {
			continue
		}
		waited += s.Value[1]
		names := sampleNames(s)
		switch {
		case slices.Contains(names, FrameRunnable) || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "runtime.gc") }):
			runnable += s.Value[1]
		case strings.Contains(strings.Join(names, ";"), ".captureTrace"):
			toHolder += s.Value[1]
		default:
			others[strings.Join(names, ";")] += s.Value[1]
		}
	}
	if waited < blockTime.Nanoseconds()*9/10 || runnable > waited/2 || toHolder < (waited-runnable)*9/10 {
		t.Errorf("scenarioMutex waited %v, %v of it charged to captureTrace and %v to scheduler latency and the GC; want ≥ %v, nearly all the rest to captureTrace; the others: %v", time.Duration(waited), time.Duration(toHolder), time.Duration(runnable), blockTime*9/10, others)
	}
	paths := map[string]bool{}
	for _, s := range b.Paths.Sample {
		paths[strings.Join(s.Label[LabelPath], "")] = true
	}
	if len(paths) == 0 || len(paths) > DefaultTop {
		t.Errorf("%d critical paths, want 1 to %d", len(paths), DefaultTop)
	}
	for _, n := range []int{17, 64, len(data) / 3, len(data) - 7} {
		if _, err := Blame(data[:n], BlameOptions{}); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
}

// TestBlameFocus: with Focus, the critical paths are those of the
// goroutines with a matching frame, whatever their waiting; Top -1
// without Focus asks for none.
func TestBlameFocus(t *testing.T) {
	data := captured(t)
	b, err := Blame(data, BlameOptions{Focus: func(name string) bool { return strings.HasSuffix(name, ".scenarioChan") }})
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]int64{}
	for _, s := range b.Paths.Sample {
		paths[strings.Join(s.Label[LabelPath], "")] += s.Value[1]
	}
	if len(paths) != 1 {
		t.Fatalf("paths %v, want scenarioChan's alone", paths)
	}
	for p, v := range paths {
		if !strings.Contains(p, "scenarioChan") || v < blockTime.Nanoseconds() {
			t.Errorf("path %q of %v, want scenarioChan's, at least %v", p, time.Duration(v), blockTime)
		}
	}
	if b, err = Blame(data, BlameOptions{Top: -1}); err != nil || len(b.Paths.Sample) != 0 {
		t.Errorf("Top -1: %d samples, %v", len(b.Paths.Sample), err)
	}
}
