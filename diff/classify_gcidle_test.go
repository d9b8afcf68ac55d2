package diff

import (
	"testing"

	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// Idle collector threads wait; busy ones do GC work. The thread-loop (ctx)
// rows must come before the broad strong GC rows of their pack, or every
// frame of a GC thread would be GC work.
func TestIdleGCThreadsAreWait(t *testing.T) {
	rs := rules.Default()
	cases := []struct {
		stack []string // leaf first
		want  rules.Bucket
	}{
		{[]string{"GCEvent::Wait", "SVR::gc_heap::gc_thread_function", "SVR::gc_heap::gc_thread_stub"}, rules.Wait},
		{[]string{"SVR::gc_heap::mark_phase", "SVR::gc_heap::gc1", "SVR::gc_heap::gc_thread_function"}, rules.GC},
		{[]string{"PosixSemaphore::wait", "GCTaskThread::run", "Thread::call_run"}, rules.Wait},
		{[]string{"Monitor::wait_without_safepoint_check", "G1ServiceThread::wait_for_task", "G1ServiceThread::run_service", "ConcurrentGCThread::run"}, rules.Wait},
		{[]string{"G1ParScanThreadState::trim_queue", "G1ParEvacuateFollowersClosure::do_void", "WorkerThread::run"}, rules.GC},
	}
	for _, c := range cases {
		if got, _ := ClassifyStack(rs, c.stack, profile.KindWall); got != c.want {
			t.Errorf("%v: %s, want %s", c.stack, got, c.want)
		}
	}
}

// os/signal's loop goroutine parks in runtime.sigNoteSleep (stack from the
// parca fgprof profile in the corpus); it waits, it does not compute.
func TestSignalLoopIsWait(t *testing.T) {
	stack := []string{"runtime.sigNoteSleep", "os/signal.signal_recv", "os/signal.loop", "runtime.goexit"}
	if got, at := ClassifyStack(rules.Default(), stack, profile.KindWall); got != rules.Wait || at != 0 {
		t.Errorf("signal loop: %s decided by frame %d, want wait by frame 0", got, at)
	}
}
