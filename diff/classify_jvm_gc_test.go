package diff

import (
	"testing"

	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// HotSpot's collectors are named by their classes (G1*, PS*, Z*, X*,
// Shenandoah*, the Serial generations), but a program's own C++ classes
// that merely start with those letters are not the collector; and the
// JDK's native file and socket calls are io wherever they sit.
func TestJVMRulesNameTheCollectorOnly(t *testing.T) {
	checkStacks(t, profile.KindCPU, []bucketCase{
		{[]string{"G1ParScanThreadState::trim_queue", "G1ParEvacuateFollowersClosure::do_void"}, rules.GC},
		{[]string{"PSPromotionManager::drain_stacks_depth", "PSScavenge::invoke"}, rules.GC},
		{[]string{"ZMark::work", "ZWorkers::run"}, rules.GC},
		{[]string{"XHeap::alloc_page", "main"}, rules.GC},
		{[]string{"ShenandoahHeap::evacuate_object", "main"}, rules.GC},
		{[]string{"DefNewGeneration::collect", "main"}, rules.GC},
		{[]string{"XmlParser::parse", "main"}, rules.CPU},
		{[]string{"ZstdCompressor::compress", "main"}, rules.CPU},
		{[]string{"PSDocument::render", "main"}, rules.CPU},
		{[]string{"TenuredStudent::grade", "main"}, rules.CPU},
		{[]string{"SerialPort::read_frame", "main"}, rules.CPU},
		{[]string{"Parallelogram::area", "main"}, rules.CPU},
	})
	checkStacks(t, profile.KindWall, []bucketCase{
		{[]string{"sun.nio.ch.FileDispatcherImpl.write0", "sun.nio.ch.IOUtil.write", "App.send"}, rules.IO},
		{[]string{"sun.nio.ch.SocketDispatcher.write0", "App.send"}, rules.IO},
		{[]string{"java.io.FileInputStream.readBytes", "App.load"}, rules.IO},
		{[]string{"java.net.SocketOutputStream.socketWrite0", "App.send"}, rules.IO},
	})
}

// G1's concurrent threads (mark, refine, service) loop in run_service: an
// idle one waits on a monitor or a semaphore right below it, as
// async-profiler 4.x's wall clock shows every JVM thread (stacks as its
// recordings in profile/jfr/testdata have them), and is wait; a busy one
// has the collector's work below it, which is gc.
func TestJVMIdleG1ThreadsWait(t *testing.T) {
	root := []string{"ConcurrentGCThread::run", "Thread::call_run", "thread_native_entry", "start_thread", "clone3"}
	stack := func(frames ...string) []string { return append(frames, root...) }
	checkStacks(t, profile.KindWall, []bucketCase{
		{stack("__futex_abstimed_wait_common", "___pthread_cond_wait", "os::PlatformMonitor::wait", "Monitor::wait_without_safepoint_check", "G1ConcurrentMarkThread::run_service"), rules.Wait},
		{stack("__futex_abstimed_wait_common", "__new_sem_wait_slow64.constprop.0", "PosixSemaphore::wait", "G1ConcurrentRefineThread::run_service"), rules.Wait},
		{stack("__futex_abstimed_wait_common", "___pthread_cond_timedwait", "os::PlatformMonitor::wait", "Monitor::wait_without_safepoint_check", "G1ServiceThread::sleep_before_next_cycle", "G1ServiceThread::run_service"), rules.Wait},
		{stack("G1CMTask::do_marking_step", "G1CMConcurrentMarkingTask::work", "GangWorker::run_task", "G1ConcurrentMark::mark_from_roots", "G1ConcurrentMarkThread::phase_mark_loop", "G1ConcurrentMarkThread::concurrent_cycle_do", "G1ConcurrentMarkThread::run_service"), rules.GC},
		{stack("G1RefineCardConcurrentlyClosure::do_card_ptr", "G1DirtyCardQueueSet::refine_completed_buffer_concurrently", "G1ConcurrentRefineThread::run_service"), rules.GC},
	})
}
