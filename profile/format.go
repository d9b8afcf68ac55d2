package profile

import "github.com/profdiff/profdiff/profile/internal/labels"

// Format names what a profile's content is. Containers (gzip, zip) are
// layers in front of a format (Loaded.Containers), never part of its name.
// The names appear in messages and are stable.
type Format string

const (
	FormatPprof       Format = "pprof"         // profile.proto, gzipped or not
	FormatPprofLegacy Format = "pprof-legacy"  // the legacy text and binary formats pprof reads
	FormatFolded      Format = "folded"        // folded stacks: `a;b;c 42`
	FormatGoTrace     Format = "go-trace"      // a Go execution trace, read as goroutine time
	FormatSpeedscope  Format = "speedscope"    // speedscope JSON
	FormatPerfScript  Format = "perf-script"   // `perf script` text
	FormatNettrace    Format = "nettrace"      // a .NET EventPipe trace
	FormatJFR         Format = "jfr"           // a JDK Flight Recorder recording
	FormatChromeTrace Format = "chrome-trace"  // Chrome Trace Event JSON (DevTools, chrome://tracing, Perfetto, Node.js)
	FormatV8          Format = "v8-cpuprofile" // a V8 CPU profile (.cpuprofile)
	FormatCallgrind   Format = "callgrind"     // Valgrind's callgrind (callgrind.out.PID)
	FormatPstats      Format = "pstats"        // Python's cProfile/profile output (marshal-serialized pstats)
	FormatStackprof   Format = "stackprof"     // a Ruby stackprof JSON dump
	FormatGecko       Format = "gecko"         // a Gecko profile: Firefox's own profiler
	FormatOTLP        Format = "otlp-profiles" // OpenTelemetry profiles (OTLP ProfilesData), protobuf or JSON
)

// The sample-label contract: readers that know more than frame names say
// so in these labels, and the classifier (package diff) reads them. Values
// are single strings.
const (
	// LabelBucket names a sample's bucket (cpu, wait, lock-contention, gc,
	// io, syscall) or SchedLatency, decided by the format from why the
	// thread waited; it overrides the frame rules.
	LabelBucket = labels.Bucket
	// LabelFallback names the bucket of a sample that no frame rule
	// claims, where the format knows the thread was not running (wait for
	// a thread blocked off the CPU); the rules decide first.
	LabelFallback = labels.Fallback
	// FallbackUnknown is the LabelFallback value of a thread that was in
	// native code or blocked, which the format cannot tell apart (a JFR
	// native-method sample): where no rule claims it, it is kept apart
	// from the buckets, as "native or blocked (unknown)".
	FallbackUnknown = labels.Unknown
	// LabelState is the thread or goroutine state: running, runnable,
	// waiting or syscall.
	LabelState = labels.State
	// LabelReason is the runtime's block or stop reason.
	LabelReason = labels.Reason
	// LabelProfiler marks samples of the profiler's own threads ("true");
	// Load drops them unless Options.KeepProfiler is set.
	LabelProfiler = labels.Profiler
	// LabelThread names the thread of a sample in thread-time profiles.
	LabelThread = labels.Thread
	// SchedLatency is the LabelBucket value of runnable time (waiting for
	// a CPU), which is reported on its own line, in no bucket.
	SchedLatency = labels.Sched

	// LabelWaker holds, on a blocked or off-CPU sample, the stack of the
	// thread or goroutine that woke it, root first, frames joined by ";"
	// (folded style), or one of the WakerTimer, WakerNetwork,
	// WakerTimeout, WakerUnknown values when the wake-up came from no
	// thread. Absent when the data names no waker. The sample keeps its
	// own (the waiter's) stack and bucket.
	LabelWaker = labels.Waker
	// LabelWakerThread holds the waker's thread or goroutine id (decimal),
	// where known.
	LabelWakerThread = labels.WakerThread
	// LabelOwner holds, on a lock-wait sample, the thread that held the
	// lock (JFR previousOwner's thread name, .NET owner thread id).
	LabelOwner = labels.Owner
	// LabelLock holds the lock's identity where the format has one (a JFR
	// monitor as "Class@0xADDR", a futex address).
	LabelLock = labels.Lock
	// The LabelWaker values of a wake-up by no thread: a timer, the
	// network poller, a timeout, or a cause the format does not name.
	WakerTimer   = labels.WakerTimer
	WakerNetwork = labels.WakerNetwork
	WakerTimeout = labels.WakerTimeout
	WakerUnknown = labels.WakerUnknown
)
