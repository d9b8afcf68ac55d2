// Package labels holds the sample-label contract between profdiff's readers
// and its classifier. Package profile re-exports it (profile.LabelBucket and
// the rest), which is the name everyone outside profile uses; it lives here
// only so that the format packages under profile, which profile imports,
// can use the same constants without an import cycle.
package labels

const (
	// Bucket holds a sample's bucket when the format recorded why the thread
	// waited (a Go trace's block reason): cpu, wait, lock-contention, gc, io,
	// syscall, or Sched. It decides before any frame rule.
	Bucket = "profdiff.bucket"
	// State holds the thread or goroutine state: running, runnable, waiting
	// or syscall.
	State = "profdiff.state"
	// Reason holds the runtime's block or stop reason ("sync",
	// "chan receive", "network", "preempted", ...); "unknown" when it was
	// already waiting when recording started.
	Reason = "profdiff.reason"
	// Fallback holds the bucket of a sample whose frames no rule claims,
	// where the format knows more than "cpu", the classifier's default:
	// "wait" for time a thread spent blocked off the CPU (a perf
	// sched_switch interval, a wall-clock sample of a sleeping thread).
	// Unlike Bucket, it decides only after every frame rule.
	Fallback = "profdiff.fallback"
	// Unknown is the Fallback value of a thread in native code or blocked,
	// which the format cannot tell apart.
	Unknown = "unknown"
	// Profiler is "true" on samples of the profiler's own threads or
	// goroutines; the loader drops them unless asked to keep them.
	Profiler = "profdiff.profiler"
	// Thread names the thread a sample was taken on, in thread-time
	// profiles (speedscope, .nettrace).
	Thread = "thread"
	// Sched is the Bucket value of runnable time: scheduler latency,
	// reported on its own and in none of the buckets.
	Sched = "sched"

	// Waker holds, on a blocked or off-CPU sample, the stack of the
	// thread or goroutine that woke it, root first, frames joined by ";"
	// (folded style, named as the reader names the sample's own frames).
	// Absent when the data names no waker. A value of the form
	// "[none: timer]", "[none: network]", "[none: timeout]" or
	// "[none: unknown]" says the wake-up came from no thread, where the
	// format tells that. The sample keeps its own (the waiter's) stack and
	// bucket; the label only adds who woke it.
	Waker = "profdiff.waker"
	// WakerThread holds the waker's thread id or goroutine id (decimal),
	// where known.
	WakerThread = "profdiff.waker.thread"
	// Owner holds, on a lock-wait sample, the thread that held the lock
	// (a JFR previousOwner's thread name, a .NET owner thread id), where
	// the format records it.
	Owner = "profdiff.owner"
	// Lock holds the lock's identity where the format has one: a JFR
	// monitor as "Class@0xADDR", a futex address.
	Lock = "profdiff.lock"
	// Path holds, on a sample of a critical-path profile, the thread or
	// goroutine whose path it is, named by the stack where it waited
	// longest, root first, ";"-joined.
	Path = "profdiff.path"
)

// FrameRunnable is the synthetic leaf frame of time a thread or goroutine
// was runnable, waiting for a CPU.
const FrameRunnable = "[runnable]"

// The Waker values of wake-ups that came from no thread.
const (
	WakerTimer   = "[none: timer]"
	WakerNetwork = "[none: network]"
	WakerTimeout = "[none: timeout]"
	WakerUnknown = "[none: unknown]"
)

// GoTraceComment starts the comment a Go execution trace reader puts on the
// profiles it builds, so that the kind (trace) survives a round trip
// through pprof.
const GoTraceComment = "profdiff: goroutine time from a Go execution trace"
