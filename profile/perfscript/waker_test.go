package perfscript_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/perfscript"
)

// In perf script text: a header's thread, and a sched_waking header's
// woken thread.
var (
	threadRE = regexp.MustCompile(`(?m)^\S+\s+(\d+)\s+\[\d+\]\s`)
	wakingRE = regexp.MustCompile(`sched:sched_waking: comm=.* pid=(\d+) `)
)

// recordWaker records testdata/waker/waker.c (10 rounds of 3 ms holds, 3
// waiters) and returns perf script's text (see recordSched).
func recordWaker(t *testing.T) string {
	t.Helper()
	text, _ := recordSched(t, filepath.Join("testdata", "waker", "waker.c"), "10", "3")
	return text
}

// recordSched builds a C program and records it with sched_switch,
// sched_waking and DWARF call graphs (glibc has no frame pointers: -g
// stops at its futex call and loses pthread_mutex_unlock and its
// caller), returning perf script's text and the program's output. It
// skips where gcc or perf is missing or cannot record the tracepoints.
func recordSched(t *testing.T, src string, args ...string) (text, stdout string) {
	t.Helper()
	needPerf(t)
	bin := buildOnce(t, "gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", src)
	data := filepath.Join(t.TempDir(), "sched.data")
	var out, stderr bytes.Buffer
	if err := perfRecord(data, &out, &stderr, append([]string{"-e", "sched:sched_switch", "-e", "sched:sched_waking", "--call-graph", "dwarf,4096", "--switch-events", "--", bin}, args...)...); err != nil {
		t.Skipf("perf cannot record sched_waking here (%v): %s", err, firstLine(stderr.String()))
	}
	b, err := exec.Command("perf", "script", "-i", data, "--show-switch-events").Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	return string(b), out.String()
}

// TestWakerRecorded reads a recording of a program whose waiters are
// woken by a holder's pthread_mutex_unlock in hold_work, and whose napper
// is woken by a timer on the holder's CPU: nine in ten of the wake-ups
// recorded name their waker, the waiters' blocked time is mostly
// hold_work's unlock's, and the napper's timer wake-ups are no thread's.
func TestWakerRecorded(t *testing.T) {
	t.Parallel()
	text := recordWaker(t)
	// The wake-ups, counted from the text alone: by threads of the
	// program (waker is one of its threads), and by interrupts that
	// stopped one (hrtimer_wakeup among the waker's frames).
	threads := map[string]bool{} // a per-task recording holds only the program's
	for _, m := range threadRE.FindAllStringSubmatch(text, -1) {
		threads[m[1]] = true
	}
	wakeups, timers := 0, 0
	for block := range strings.SplitSeq(text, "\n\n") {
		m := wakingRE.FindStringSubmatch(block)
		if m == nil || !threads[m[1]] {
			continue
		}
		wakeups++
		if strings.Contains(block, " hrtimer_wakeup+") {
			timers++
		}
	}
	l := loadText(t, text)
	p := l.Profile
	if l.Kind != profile.KindWall || p.DefaultSampleType != perfscript.OffCPUType {
		t.Errorf("kind %s, default sample type %q; want wall, %s", l.Kind, p.DefaultSampleType, perfscript.OffCPUType)
	}
	// The same from its first wake-up on, as a recording that printed one
	// first: the wake-ups do not become the default.
	if i := strings.Index(text, "\n\n"); i >= 0 {
		if j := wakingRE.FindStringIndex(text[i:]); j != nil {
			from := i + strings.LastIndexByte(text[i:i+j[0]], '\n') + 1
			l := loadText(t, text[from:])
			if l.Kind != profile.KindWall || l.Profile.DefaultSampleType != perfscript.OffCPUType {
				t.Errorf("from the first wake-up on: kind %s, default sample type %q; want wall, %s", l.Kind, l.Profile.DefaultSampleType, perfscript.OffCPUType)
			}
		}
	}
	off, n := sampleIndex(t, p, perfscript.OffCPUType), sampleIndex(t, p, "samples")
	var named, timerNamed int64 // intervals, as the samples/count column counts them
	var waited, byHold, napped, napTimer, napByThread int64
	holdUnlock := regexp.MustCompile(`(^|;)hold_work;(.*;)?[^;]*pthread_mutex_unlock`)
	for _, s := range p.Sample {
		w := s.Label[profile.LabelWaker]
		if len(w) == 1 {
			named += s.Value[n]
			if w[0] == profile.WakerTimer {
				timerNamed += s.Value[n]
			}
		}
		if len(s.Label[profile.LabelState]) == 0 || s.Label[profile.LabelState][0] != "waiting" {
			continue
		}
		switch stack := frames(s); {
		case strings.Contains(stack, "wait_here"):
			waited += s.Value[off]
			if len(w) == 1 && holdUnlock.MatchString(w[0]) {
				if byHold == 0 {
					t.Logf("a waiter's waker: %s", w[0])
				}
				byHold += s.Value[off]
				if len(s.Label[profile.LabelWakerThread]) != 1 {
					t.Errorf("waker %q has no thread label", w[0])
				}
			}
		case strings.Contains(stack, "nap_here"):
			napped += s.Value[off]
			switch {
			case len(w) == 1 && w[0] == profile.WakerTimer:
				napTimer += s.Value[off]
			case len(w) == 1 && !strings.HasPrefix(w[0], "[none:"):
				napByThread += s.Value[off]
				t.Errorf("a nap is charged to the stack of thread %v: %s", s.Label[profile.LabelWakerThread], w[0])
			}
		}
	}
	t.Logf("%d wake-ups of the program's threads recorded (%d by a timer), %d intervals name their waker (%d a timer)", wakeups, timers, named, timerNamed)
	t.Logf("waiters blocked %.3f ms, %.3f ms of it woken by hold_work's unlock; napper blocked %.3f ms, %.3f ms of it woken by a timer", float64(waited)/1e6, float64(byHold)/1e6, float64(napped)/1e6, float64(napTimer)/1e6)
	if wakeups == 0 || waited == 0 || napped == 0 {
		t.Fatalf("the recording holds %d wake-ups, %d ns of waiting and %d ns of napping", wakeups, waited, napped)
	}
	if named < int64(wakeups)*9/10 {
		t.Errorf("%d of %d wake-ups name their waker, want 90%%", named, wakeups)
	}
	if timerNamed < int64(timers)*9/10 {
		t.Errorf("%d of %d timer wake-ups are labelled %s, want 90%%", timerNamed, timers, profile.WakerTimer)
	}
	if byHold < waited*8/10 {
		t.Errorf("%.3f of the waiters' %.3f ms blocked are woken under hold_work's pthread_mutex_unlock, want 80%%", float64(byHold)/1e6, float64(waited)/1e6)
	}
}

// sampleIndex is the index of a sample type, failing the test without it.
func sampleIndex(t *testing.T, p *pprofile.Profile, typ string) int {
	t.Helper()
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i
		}
	}
	t.Fatalf("no sample type %s in %v", typ, p.SampleType)
	return -1
}

// frames joins a sample's frame names root first with ";".
func frames(s *pprofile.Sample) string {
	var names []string
	for i := len(s.Location) - 1; i >= 0; i-- {
		lines := s.Location[i].Line
		for j := len(lines) - 1; j >= 0; j-- {
			names = append(names, lines[j].Function.Name)
		}
	}
	return strings.Join(names, ";")
}
