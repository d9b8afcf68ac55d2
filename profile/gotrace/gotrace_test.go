package gotrace

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/exp/trace"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// corpusDir is the shared corpus folder; the test skips when it is absent.
func corpusDir(t *testing.T) string {
	t.Helper()
	return corpus.Need(t)
}

// corpusTraces lists the binary traces of the corpus: the Go team's
// (golang-go/*.bin.trace, Go 1.22+) and gotraceui's (Go 1.11-1.21).
func corpusTraces(t *testing.T) []string {
	t.Helper()
	dir := corpusDir(t)
	if dir == "" {
		t.Skip("../shared/corpus not found")
	}
	a, _ := filepath.Glob(filepath.Join(dir, "golang-go", "*.bin.trace"))
	b, _ := filepath.Glob(filepath.Join(dir, "gotraceui", "*"))
	if len(a) == 0 {
		t.Fatal("no golang-go/*.bin.trace in the corpus")
	}
	return append(a, b...)
}

// brokenTrace reports whether a corpus trace is one the Go team wrote to
// fail parsing.
func brokenTrace(path string) bool {
	return strings.Contains(path, "go122-create-syscall-with-p") || strings.Contains(path, "go122-fail-first-gen-first")
}

// tracerFrame is the part of profile's profiler-frame list that a trace of
// a test process shows.
var tracerFrame = regexp.MustCompile(`^(runtime/trace\.Start\.func\d+|runtime/trace\.\(\*traceMultiplexer\)\.startLocked\.func\d+|runtime\.\(\*traceAdvancerState\)\.start\.func\d+|runtime\.traceStartReadCPU\.func\d+|runtime\.ReadTrace)$`)

func TestLooks(t *testing.T) {
	for in, want := range map[string]bool{
		"go 1.22 trace\x00\x00\x00\x01": true,
		"go 1.5 trace\x00\x00\x00\x00":  true,
		"go 1.26 trace\x00\x00\x00":     true,
		"go 1.22 trace;main 1\n":        false, // a folded line
		"go 1. trace\x00":               false,
		"Trace Go1.22\n":                false,
		"":                              false,
	} {
		if got := Looks([]byte(in)); got != want {
			t.Errorf("Looks(%q) = %v, want %v", in, got, want)
		}
	}
	if v := Version([]byte("go 1.22 trace\x00\x00\x00")); v != "1.22" {
		t.Errorf("Version = %q", v)
	}
}

// Every reason the Go 1.26 runtime emits (runtime/traceruntime.go), and
// the states, map to a bucket; "sync" depends on the top frame.
func TestBucket(t *testing.T) {
	w := trace.GoWaiting
	for _, tc := range []struct {
		state  trace.GoState
		reason string
		frames []string
		want   string
	}{
		{trace.GoRunning, "", nil, "cpu"},
		{trace.GoRunnable, "preempted", nil, labels.Sched},
		{trace.GoRunnable, "runtime.Gosched", nil, labels.Sched},
		{trace.GoSyscall, "", nil, "syscall"},
		{w, "sync", []string{"sync.(*Mutex).Lock", "main.f"}, "lock-contention"},
		{w, "sync", []string{"sync.(*RWMutex).RLock", "main.f"}, "lock-contention"},
		{w, "sync", []string{"sync.(*RWMutex).Lock", "main.f"}, "lock-contention"},
		{w, "sync", []string{"internal/sync.runtime_SemacquireMutex", "internal/sync.(*Mutex).lockSlow", "sync.(*Mutex).Lock"}, "lock-contention"},
		{w, "sync", []string{"internal/poll.(*fdMutex).rwlock", "internal/poll.(*FD).readLock"}, "lock-contention"},
		{w, "sync", []string{"sync.(*WaitGroup).Wait", "main.f"}, "wait"},
		{w, "sync", []string{"golang.org/x/sync/semaphore.(*Weighted).Acquire"}, "wait"},
		{w, "sync", nil, "wait"},
		{w, "sync.(*Cond).Wait", []string{"sync.(*Cond).Wait"}, "wait"},
		{w, "network", nil, "io"},
		{w, "chan receive", nil, "wait"},
		{w, "chan send", nil, "wait"},
		{w, "select", nil, "wait"},
		{w, "forever", nil, "wait"},
		{w, "sleep", nil, "wait"},
		{w, "synctest", nil, "wait"},
		{w, "unspecified", nil, "wait"},
		{w, "wait for debug call", nil, "wait"},
		{w, "GC background sweeper wait", nil, "wait"},
		{w, "system goroutine wait", nil, "wait"},
		{w, "GC mark assist wait for work", nil, "gc"},
		{w, "wait until GC ends", nil, "gc"},
		{w, "GC weak to strong wait", nil, "gc"},
		{w, "preempted", nil, "gc"},
		{w, "some future reason", nil, "wait"},
	} {
		got, ok := Bucket(tc.state, tc.reason, tc.frames)
		if !ok || got != tc.want {
			t.Errorf("Bucket(%v, %q, %q) = %q, %v; want %q", tc.state, tc.reason, tc.frames, got, ok, tc.want)
		}
	}
	// A goroutine waiting since before the trace has no reason: the frame
	// rules decide.
	if b, ok := Bucket(w, "", []string{"runtime.chanrecv1"}); ok {
		t.Errorf("unknown reason decided as %q", b)
	}
}

func TestNotATrace(t *testing.T) {
	for _, data := range []string{"", "hello", "go 1.22 trace\x00\x00\x00"} {
		if _, _, err := Parse([]byte(data), Options{}); err == nil {
			t.Errorf("%q: no error", data)
		}
	}
}

// checkWindow walks a trace and checks that every interval lies inside
// the trace window and that no goroutine is charged more than the window.
func checkWindow(t *testing.T, name string, data []byte) {
	t.Helper()
	w := newWalker(Options{})
	perG := map[trace.GoID]int64{}
	var ivs []interval
	w.onInterv = func(iv interval) { ivs = append(ivs, iv) }
	if err := w.walk(data); err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	for _, iv := range ivs {
		if iv.from < w.first || iv.to > w.last || iv.to < iv.from {
			t.Errorf("%s: goroutine %d interval [%d, %d) outside the window [%d, %d]", name, iv.g, iv.from, iv.to, w.first, w.last)
		}
		perG[iv.g] += int64(iv.to - iv.from)
	}
	for g, ns := range perG {
		if ns > int64(w.last-w.first) {
			t.Errorf("%s: goroutine %d charged %d ns in a %d ns window", name, g, ns, w.last-w.first)
		}
	}
}

// TestCorpus parses every binary trace of the corpus, Go 1.11 to 1.25: all
// but the two the Go team made broken give a valid profile whose
// goroutines fit in the trace window; those two fail with a clear error.
func TestCorpus(t *testing.T) {
	for _, path := range corpusTraces(t) {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := Parse(data, Options{})
		if brokenTrace(path) {
			// fail-first-gen-first's last batch declares 50 bytes of
			// events and the file ends 5 bytes into them: that cut is
			// named before the parser's complaint.
			prefix := "corrupt Go execution trace (go 1.22) after "
			if strings.Contains(path, "fail-first-gen-first") {
				prefix = "Go execution trace (go 1.22) cut short: the file ends at byte 41 inside the batch at byte 36, which holds 50 bytes of events (the parser, after 1 events: "
			}
			if err == nil || !strings.HasPrefix(err.Error(), prefix) ||
				!strings.Contains(err.Error(), "expected a proc but didn't have one") {
				t.Errorf("%s: want a corrupt-trace error, got %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := p.CheckValid(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// The batch framing that cutShort walks reads every whole trace
		// of the formats that have it to its end.
		if minor, _ := strconv.Atoi(strings.TrimPrefix(Version(data), "1.")); minor >= 22 {
			if cut, ok := walkBatches(data, minor, func(batchFrame) {}); cut != "" || !ok {
				t.Errorf("%s: the batch framing does not read to the end (%q, %v)", name, cut, ok)
			}
		}
		for _, s := range p.Sample {
			if s.Value[1] < 0 || s.Value[0] <= 0 {
				t.Errorf("%s: sample values %v", name, s.Value)
			}
			if len(s.Location) == 0 {
				t.Errorf("%s: sample without a stack", name)
			}
		}
		// Old traces' empty frames (no PC, no function) are left out.
		for _, f := range p.Function {
			if f.Name == "" {
				t.Errorf("%s: a function without a name", name)
				break
			}
		}
		checkWindow(t, name, data)
	}
}

// A trace the parser cannot advance through fails with one line that is
// the same every time: x/exp/trace's message goes on with a dump of its
// state, goroutines in map order, which the error leaves out.
func TestParserErrorIsItsFirstLine(t *testing.T) {
	dump := "broken trace: failed to advance: frontier:\n[gen=1]\n\nM 12739 [GoStart time=18477568637248 g=28 g_seq=105]\n\nG 25 [status=Waiting seq=1 (gen=1)]\nG 1 [status=Waiting seq=0 (gen=1)]\n\nGC 0 Undetermined\n"
	if got, want := parserError(errors.New(dump)), "broken trace: failed to advance"; got != want {
		t.Errorf("parserError = %q, want %q", got, want)
	}
	if got, want := parserError(errors.New("bad header: unknown version")), "bad header: unknown version"; got != want {
		t.Errorf("parserError = %q, want %q", got, want)
	}
}
