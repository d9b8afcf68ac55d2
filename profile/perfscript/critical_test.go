package perfscript_test

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/perfscript"
)

// TestCriticalPathChain records testdata/chain/chain.c, where C waits on
// a condition variable that B signals once it gets the mutex A holds in
// a_work: C's critical path charges most of the time C waited, as the
// program measured it, to a_work (through B's wake-up of C and A's unlock
// that woke B), little to B's own code.
func TestCriticalPathChain(t *testing.T) {
	t.Parallel()
	out, stdout := recordSched(t, filepath.Join("testdata", "chain", "chain.c"), "10", "3")
	m := regexp.MustCompile(`cwait (\d+)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("chain printed no cwait: %q", stdout)
	}
	cwait, _ := strconv.ParseInt(m[1], 10, 64)
	p, err := perfscript.CriticalPaths(string(out), perfscript.PathOptions{Focus: func(f string) bool { return f == "c_wait" }})
	if err != nil {
		t.Fatal(err)
	}
	if p == nil {
		t.Fatal("no critical paths from a recording with wake-ups")
	}
	// Running time on the path by whose code it was, and the scheduler
	// latency on it (A, B or C preempted, or woken but waiting for a CPU:
	// on a busy machine, time nobody's code explains; the share below
	// leaves it out, all of it, though some is outside C's c_wait).
	var aRun, bRun, runnable int64
	paths := map[string]bool{}
	for _, s := range p.Sample {
		paths[label(s, "profdiff.path")] = true
		switch {
		case label(s, "profdiff.bucket") == "sched":
			runnable += s.Value[0]
		case label(s, "profdiff.bucket") != "cpu":
		case hasFrame(s, "a_work"):
			aRun += s.Value[0]
		case hasFrame(s, "b_pass"):
			bRun += s.Value[0]
		}
	}
	if len(paths) != 1 {
		t.Fatalf("want C's path alone, got %d: %v", len(paths), paths)
	}
	for name := range paths {
		if !strings.Contains(name, ";follower;") {
			t.Errorf("C's path is named %q, want a stack of its thread (follower)", name)
		}
	}
	// C's blocked time in c_wait as the recording holds it (the off-CPU
	// reading): perf drops events on a busy machine, so the program's own
	// measure may hold rounds the recording lacks.
	l := loadText(t, string(out))
	vi := -1
	for i, st := range l.Profile.SampleType {
		if st.Type == perfscript.OffCPUType {
			vi = i
		}
	}
	var recorded int64
	for _, s := range l.Profile.Sample {
		if vi >= 0 && hasFrame(s, "c_wait") && label(s, "profdiff.state") == "waiting" {
			recorded += s.Value[vi]
		}
	}
	if recorded <= 0 || recorded > cwait*11/10 {
		t.Fatalf("the recording holds %d ns of C blocked in c_wait; the program measured %d", recorded, cwait)
	}
	if runnable >= recorded {
		// Past this, the share says how busy the machine is, not what
		// the path found.
		t.Skipf("machine too loaded: %.2f ms of scheduler latency on C's path beside %.2f ms of C blocked in c_wait", float64(runnable)/1e6, float64(recorded)/1e6)
	}
	share := float64(aRun) / float64(recorded-runnable)
	t.Logf("C blocked in c_wait %.2f ms recorded (%.2f ms measured); on its path a_work ran %.2f ms (%.0f%% of it; %.0f%% less %.2f ms runnable), b_pass %.2f ms",
		float64(recorded)/1e6, float64(cwait)/1e6, float64(aRun)/1e6, 100*float64(aRun)/float64(recorded), 100*share, float64(runnable)/1e6, float64(bRun)/1e6)
	if share < 0.8 {
		t.Errorf("a_work has %.0f%% of C's blocked time, want at least 80%%; the path:", 100*share)
		for _, s := range p.Sample {
			var frames []string
			for _, l := range s.Location {
				frames = append(frames, l.Line[0].Function.Name)
			}
			t.Logf("%9d %-5s %s", s.Value[0], label(s, "profdiff.bucket"), strings.Join(frames, " < "))
		}
	}
	if bRun*4 > aRun {
		t.Errorf("b_pass ran %d ns on the path, a_work %d: B only passed A's work on", bRun, aRun)
	}
}

// label is a sample's first value of a label, "" where it has none (a
// sample of another event than the switches, such as a wake-up).
func label(s *pprofile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func hasFrame(s *pprofile.Sample, name string) bool {
	for _, l := range s.Location {
		for _, ln := range l.Line {
			if ln.Function.Name == name {
				return true
			}
		}
	}
	return false
}

// TestCriticalPathsOverflow: two threads that ran for 2^63 ns all but a
// few seconds, on the same stack, charge more to it than an int64 holds
// (a hostile text: perf never writes such time stamps): an error, not a
// wrapped sum.
func TestCriticalPathsOverflow(t *testing.T) {
	var b strings.Builder
	for _, tid := range []string{"11", "12"} {
		b.WriteString("app " + tid + " [000] 1.000000: PERF_RECORD_SWITCH IN\n\n")
	}
	for _, tid := range []string{"11", "12"} {
		b.WriteString("app " + tid + " [000] 9223372000.000000: sched:sched_switch: prev_comm=app prev_pid=" + tid +
			" prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\t4005d6 wait+0x10 (/bin/app)\n\n")
		b.WriteString("app 13 [001] 9223372000.500000: sched:sched_waking: comm=app pid=" + tid +
			" prio=120 target_cpu=000\n\t4005e0 wake+0x10 (/bin/app)\n\n")
		b.WriteString("app " + tid + " [000] 9223372001.000000: PERF_RECORD_SWITCH IN\n\n")
	}
	p, err := perfscript.CriticalPaths(b.String(), perfscript.PathOptions{})
	if err == nil || !strings.Contains(err.Error(), "2^63-1") {
		t.Errorf("got %v, %v; want an error saying the time passes 2^63-1 ns", p, err)
	}
	// One of them fits.
	one := b.String()[strings.Index(b.String(), "app 12 [000] 9223372000"):]
	one = "app 12 [000] 1.000000: PERF_RECORD_SWITCH IN\n\n" + strings.ReplaceAll(one, "pid=11", "pid=12")
	if p, err := perfscript.CriticalPaths(one, perfscript.PathOptions{}); err != nil || p == nil || len(p.Sample) == 0 {
		t.Errorf("one thread: %v, %v; want its path", p, err)
	}
}
