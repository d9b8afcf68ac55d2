package diff

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/producertest"
	"github.com/profdiff/profdiff/symbolize"
)

// Threads whose only user frame is a libc wait (glibc has no frame
// pointers, so perf's -g stack ends at the libc function) are waiting,
// not running: testdata/libcwaits/waits.c blocks one named thread in each
// wait, perf records every switch-out with its kernel and user stack, and
// every stack that ends in one of those waits falls in the wait's bucket.
func TestLibcWaitStacksAreNotCPU(t *testing.T) {
	l := recordLibcWaits(t)
	// Each switch-out starts off-CPU time (what a wall-clock profile
	// samples), so the stacks are classified as a wall profile's.
	// Keyed by the stack's outermost user frame: the libc function,
	// whose caller perf cannot see.
	want := map[string]rules.Bucket{
		"clock_nanosleep":              rules.Wait,           // sleeper and holder
		"__futex_abstimed_wait_common": rules.Wait,           // condwait: pthread_cond_timedwait
		"__lll_lock_wait":              rules.LockContention, // locker: pthread_mutex_lock
		"read":                         rules.IO,             // reader: a pipe
		"accept":                       rules.IO,             // acceptor: a socket
	}
	rs := rules.Default()
	got := map[string]map[rules.Bucket]int{}
	for _, smp := range l.Profile.Sample {
		var stack []string
		for _, loc := range smp.Location {
			for _, ln := range loc.Line {
				stack = append(stack, ln.Function.Name)
			}
		}
		// perf script's loader roots each stack in the thread's name.
		comm := smp.Label["comm"]
		for len(stack) > 0 && (len(comm) == 1 && stack[len(stack)-1] == comm[0] || stack[len(stack)-1] == "[unknown]") {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			continue
		}
		outer := symbolize.Normalize(stack[len(stack)-1])
		if _, ok := want[outer]; !ok {
			continue
		}
		b, _ := ClassifyStack(rs, stack, profile.KindWall)
		if got[outer] == nil {
			got[outer] = map[rules.Bucket]int{}
		}
		got[outer][b]++
	}
	for leaf, w := range want {
		n := 0
		for _, c := range got[leaf] {
			n += c
		}
		if n == 0 {
			t.Errorf("no switch-out recorded in %s", leaf)
		} else if got[leaf][w] != n {
			t.Errorf("%s: %v, want all %d %s", leaf, got[leaf], n, w)
		}
	}
}

// A libc wait alone, in each module-prefix form native profilers write,
// is its wait; a futex under pthread_mutex_lock is lock contention, and a
// caller that says why decides before the futex fallback does.
func TestLibcWaitModuleForms(t *testing.T) {
	checkStacks(t, profile.KindWall, []bucketCase{
		{[]string{"libc.so.6.__GI___futex_abstimed_wait_cancelable64", "start_thread", "clone3"}, rules.Wait},
		{[]string{"libc.so.6!__GI___futex_abstimed_wait_cancelable64", "libc.so.6!start_thread"}, rules.Wait},
		{[]string{"[libc.so.6] __GI___futex_abstimed_wait_cancelable64", "[libc.so.6] __pthread_mutex_lock", "[app] worker"}, rules.LockContention},
		{[]string{"libc.so.6.__GI___futex_abstimed_wait_cancelable64", "libc.so.6.__pthread_cond_wait", "app.worker"}, rules.Wait},
		{[]string{"libc.so.6.accept", "app.serve"}, rules.IO},
		// DTrace's module`function, and a symbol followed by its object's path.
		{[]string{"libc.so.6`__futex_abstimed_wait_cancelable64", "libc.so.6`pthread_mutex_lock", "app`worker"}, rules.LockContention},
		{[]string{"libc.so.6`epoll_wait", "app`serve"}, rules.IO},
		{[]string{"__futex_abstimed_wait_cancelable64 (/usr/lib/x86_64-linux-gnu/libc.so.6)", "start_thread (/usr/lib/x86_64-linux-gnu/libc.so.6)"}, rules.Wait},
		{[]string{"[libc.so.6] __libc_recv", "app.serve"}, rules.IO},
		{[]string{"libc.so.6!read", "app.serve"}, rules.IO},
		{[]string{"libc-2.19.so.__epoll_wait_nocancel", "app.loop"}, rules.IO},
		{[]string{"[libc.so.6] __GI___poll", "app.loop"}, rules.IO},
		{[]string{"libc.so.6.__GI___clock_nanosleep", "libc.so.6.__nanosleep", "app.tick"}, rules.Wait},
		// On-CPU code stays cpu.
		{[]string{"libc.so.6.__memmove_avx_unaligned_erms", "app.copy"}, rules.CPU},
	})
}

// bucketCase is a stack, leaf first, and the bucket the built-in rules
// must give it.
type bucketCase struct {
	stack []string
	want  rules.Bucket
}

func checkStacks(t *testing.T, kind profile.Kind, cases []bucketCase) {
	t.Helper()
	rs := rules.Default()
	for _, c := range cases {
		if got, at := ClassifyStack(rs, c.stack, kind); got != c.want {
			t.Errorf("%v: %s (decided by frame %d), want %s", c.stack, got, at, c.want)
		}
	}
}

// recordLibcWaits records testdata/libcwaits/waits.c's threads for 0.4 s
// with perf (every switch-out, with its kernel and user stack) and loads
// perf script's output: frames in libc.so.6, in the program and in the
// kernel. The recording is made once per test binary (libcWaits) and
// parsed anew for each caller. It skips where gcc or perf is missing or
// cannot record.
func recordLibcWaits(t *testing.T) *profile.Loaded {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: records with perf")
	}
	script := libcWaits.get(t, func(t *testing.T) [][]byte {
		for _, tool := range []string{"gcc", "perf"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s is not installed: libc wait stacks not recorded", tool)
			}
		}
		dir := t.TempDir()
		bin := filepath.Join(dir, "waits")
		if out, err := exec.Command("gcc", "-O1", "-pthread", "-o", bin, filepath.Join("testdata", "libcwaits", "waits.c")).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		data := filepath.Join(dir, "perf.data")
		if out, err := exec.CommandContext(ctx, "perf", producertest.PerfRecord("perf", "-q", "-e", "sched:sched_switch", "-g", "-o", data, "--", bin, "0.4")...).CombinedOutput(); err != nil {
			t.Skipf("perf cannot record sched:sched_switch here: %v: %.200s", err, out)
		}
		script, err := exec.CommandContext(ctx, "perf", "script", "-i", data).Output()
		if err != nil {
			t.Fatalf("perf script: %v", err)
		}
		return [][]byte{script}
	})[0]
	l, err := profile.Parse("waits.txt", script, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var libcWaits recording
