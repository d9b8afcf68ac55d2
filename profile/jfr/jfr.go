// Package jfr reads JDK Flight Recorder recordings (.jfr: what
// `-XX:StartFlightRecording`, `jcmd JFR.start` and `JFR.dump` write, and
// async-profiler's `-o jfr`) into a pprof profile, without Java.
//
// A recording is a sequence of chunks, each with its own header, metadata
// (the description of every type, read generically), constant pools
// (stack traces, methods, classes, symbols, threads) and events. Parse reads
// every chunk and turns the events that say where threads spend time or
// memory into samples, one sample type per event type (the order of the
// profile's sample types):
//
//	event                           sample type/unit                bucket
//	profiler.WallClockSample        wall/nanoseconds (samples × the  cpu when RUNNABLE, else the frames,
//	                                wall interval), or wall-samples/ falling back to wait
//	                                count when the recording names
//	                                no interval
//	jdk.ExecutionSample             cpu-time/nanoseconds (samples ×  cpu
//	                                the CPU interval: async-
//	                                profiler's CPU engines), wall
//	                                (its wall mode, as above), else
//	                                execution-samples/count (the     cpu when running, else as wall
//	                                JDK's sampler)
//	jdk.NativeMethodSample          native-samples/count             the frames, falling back to native or
//	                                                                 blocked (unknown)
//	jdk.JavaMonitorEnter            monitor-enter/nanoseconds        lock-contention
//	jdk.JavaMonitorWait             monitor-wait/nanoseconds         wait
//	jdk.ThreadPark                  park/nanoseconds                 lock-contention on a lock, else wait
//	jdk.ThreadSleep                 sleep/nanoseconds                wait
//	jdk.SocketRead, SocketWrite     socket-read, socket-write/ns     io
//	jdk.FileRead, FileWrite         file-read, file-write/ns         io
//	profiler.NativeLock             native-lock/nanoseconds          lock-contention
//	jdk.GarbageCollection           gc-pause/nanoseconds (its sum    gc, frame [GC name]
//	                                of pauses)
//	jdk.GCPhasePause                gc-phase-pause/nanoseconds       gc, frame [GC phase: name]
//	jdk.SafepointBegin              safepoint/nanoseconds (time to   gc, frame [safepoint]
//	                                reach a safepoint, and cleanup)
//	jdk.ObjectAllocationSample      alloc-sample/bytes (its weight)
//	jdk.ObjectAllocationInNewTLAB   alloc-in-new-tlab/bytes (tlabSize, the new TLAB's size,
//	                                as async-profiler's jfrconv and Pyroscope weigh it)
//	jdk.ObjectAllocationOutsideTLAB alloc-outside-tlab/bytes (allocationSize)
//	profiler.LiveObject             live/bytes (allocationSize)
//	profiler.Malloc                 malloc/bytes (size)
//
// An async-profiler recording with lock or allocation events has, ahead of
// their own sample types, their sum, as its own views show them: lock
// (nanoseconds: monitor enters and parks, each with its bucket) and alloc
// (bytes: in new TLABs and outside).
//
// Before them comes thread-time/nanoseconds, when the recording names the
// JDK sampler's period (async-profiler's recordings have none): every wait, I/O event and GC pause's duration plus
// each execution or native sample's period, except a sample taken inside a
// wait or I/O event of its own thread (a thread blocked in a socket read is
// in native code, and the native sampler samples it while jdk.SocketRead
// times the read): that time is counted once, by the event. The sample
// types of the samples keep them all. GC phases, safepoints and
// async-profiler's events are not part of it (they overlap what it has).
//
// After them comes samples/count: the number of events behind each sample
// (one per execution or native sample, wait, I/O event, GC pause or
// allocation sample), the count diff.CountColumn pairs with every other
// sample type, so that noise and the number of samples profdiff reports
// are the selected type's own events, not the execution samples.
//
// A file whose last chunk is cut short (copied while the JVM wrote it) is
// read up to that chunk, with a warning naming its offset.
//
// Samples carry the bucket in labels.Bucket (where the event says why the
// thread waited or that it ran), the thread's name in labels.Thread, and
// the monitor, parked-on or allocated class in LabelClass. Monitor enters,
// monitor waits and parks also carry who waited on whom (see whoWaited):
// the lock (labels.Lock), a monitor enter's previous owner (labels.Owner),
// a monitor wait's notifier or timeout (labels.Waker, labels.WakerThread);
// a park names no owner, which JFR does not record. A wall-clock or
// execution sample of a thread that was not running (async-profiler's
// STATE_SLEEPING, any state but STATE_DEFAULT, STATE_RUNNABLE and
// STATE_RUNNING) has no bucket but labels.Fallback "wait": a frame rule
// still decides first, and where none does it is a wait, not cpu. Unless
// its stack shows it blocked entering a contended synchronized block: its
// first Java frame, a method not declared native (modifiers without
// ACC_NATIVE), calls a futex wait directly. Such a method reaches native
// code only through the VM, and async-profiler 2.x (4.x without
// cstack=vm) leaves the VM's frames, ObjectMonitor::enter among them,
// out; the JDK's own waits (Object.wait, Unsafe.park, Thread.sleep, socket
// reads) are native methods and stay to the frames. Those samples are
// lock-contention (labels.Bucket). A thread the VM stops at a safepoint
// looks the same, and is counted so too. Frames
// are named package.Class.method, as Java users read them, with the line
// number; a hidden class keeps the '/' before its suffix, as the JDK names
// a lambda's class (Busy$$Lambda$14+0x0000000800c01000/1790421142.run). async-profiler's native frames (C, C++ and kernel: a "()L;" or
// "(Lk;)L;" method whose class is the library, or a Kernel frame type) are
// named by the bare symbol, with the library as the location's mapping.
//
// async-profiler's settings (its jdk.ActiveSetting events; a "version"
// setting of jdk.ActiveRecording says async-profiler wrote the file) say
// what its jdk.ExecutionSample events are and give the intervals. With -e
// wall (jdk.ActiveRecording "event" wall: 2.x writes every wall sample as
// an execution sample, 4.x with --nobatch) they are wall samples, and so
// are those in a state other than STATE_DEFAULT when --wall runs beside
// a CPU engine (4.x); the jdk.ExecutionSample "wall" setting (--wall N)
// or, with -e wall, its "interval" setting (0: 50 ms) makes wall
// nanoseconds. Otherwise, with a CPU engine (4.x: "engine" perf_events
// with "event" cpu or cpu-clock, itimer, ctimer; 2.x, which names no
// engine: "event" cpu, cpu-clock, itimer, ctimer), they are cpu-time: each
// sample the "interval" setting's nanoseconds of CPU (0: 10 ms). A
// recording of -e cpu with --wall opens on cpu-time. Samples of other
// events (cycles, a traced method) are execution-samples, a count.
// Without the intervals wall is a count and cpu-time is absent, which a
// warning says. async-profiler's lock events sum their durations; a
// warning says which waits its "lock" setting kept (2.x: those at least
// that long; 4.x: one each time the waits add up to it).
//
// The JDK samples at most a few threads per period and records duration
// events only above a threshold; Parse reads both from the recording's own
// jdk.ActiveSetting events and says so in its warnings.
//
// The tests compare every sample type's per-stack totals with the JDK's
// own `jfr print --json` on recordings made at test time, and on real
// async-profiler 2.9 and 4.2.1 recordings of every mode (cpu, itimer,
// wall with and without an interval, alloc, lock, and combined),
// committed in testdata with a README saying how they were made: the
// profiler cannot be installed where the tests run. Its other event types
// (profiler.LiveObject, Malloc, NativeLock) are tested on recordings the
// JDK writes of testdata/Shapes.java, which declares them with jdk.jfr
// (names and fields as async-profiler's src/jfrMetadata.cpp has them).
package jfr

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

// LabelClass holds the class an event names: the monitor class of a monitor
// enter or wait, the parked-on class of a park, the allocated class of an
// allocation sample.
const LabelClass = "jfr.class"

// Looks reports whether data starts like a JFR chunk.
func Looks(data []byte) bool {
	return bytes.HasPrefix(data, []byte("FLR\x00"))
}

// spec says how one event type becomes samples of one sample type.
type spec struct {
	event  string
	sample string // the sample type
	unit   string
	bucket string // labels.Bucket, "" when the frames (or the state) decide
	stack  bool   // false: the event has no stack (GC, safepoints)
	what   string // the words a threshold warning uses
	value  string // the field holding the value: "" counts events
	thread bool   // the sample type is part of thread-time
	frame  string // a stackless event's pseudo-frame: "[" frame + its name field "]"
}

// specs lists the sample types Parse makes, in their order in the profile.
// An event may feed more than one (jdk.ExecutionSample: a count, and CPU
// time when async-profiler's CPU engine wrote it).
var specs = []spec{
	{event: "profiler.WallClockSample", sample: wallType, unit: "nanoseconds", stack: true, value: "samples"},
	{event: "jdk.ExecutionSample", sample: cpuTimeType, unit: "nanoseconds", stack: true},
	{event: "jdk.ExecutionSample", sample: "execution-samples", unit: "count", bucket: "cpu", stack: true, thread: true},
	{event: "jdk.NativeMethodSample", sample: "native-samples", unit: "count", stack: true, thread: true},
	{event: "jdk.JavaMonitorEnter", sample: "monitor-enter", unit: "nanoseconds", bucket: "lock-contention", stack: true, what: "monitor enters", value: "duration", thread: true},
	{event: "jdk.JavaMonitorWait", sample: "monitor-wait", unit: "nanoseconds", bucket: "wait", stack: true, what: "monitor waits", value: "duration", thread: true},
	{event: "jdk.ThreadPark", sample: "park", unit: "nanoseconds", bucket: "wait", stack: true, what: "parks", value: "duration", thread: true},
	{event: "jdk.ThreadSleep", sample: "sleep", unit: "nanoseconds", bucket: "wait", stack: true, what: "sleeps", value: "duration", thread: true},
	{event: "jdk.SocketRead", sample: "socket-read", unit: "nanoseconds", bucket: "io", stack: true, what: "socket reads", value: "duration", thread: true},
	{event: "jdk.SocketWrite", sample: "socket-write", unit: "nanoseconds", bucket: "io", stack: true, what: "socket writes", value: "duration", thread: true},
	{event: "jdk.FileRead", sample: "file-read", unit: "nanoseconds", bucket: "io", stack: true, what: "file reads", value: "duration", thread: true},
	{event: "jdk.FileWrite", sample: "file-write", unit: "nanoseconds", bucket: "io", stack: true, what: "file writes", value: "duration", thread: true},
	{event: "profiler.NativeLock", sample: "native-lock", unit: "nanoseconds", bucket: "lock-contention", stack: true, what: "native lock waits", value: "duration"},
	{event: "jdk.GarbageCollection", sample: "gc-pause", unit: "nanoseconds", bucket: "gc", value: "sumOfPauses", thread: true, frame: "GC "},
	{event: "jdk.GCPhasePause", sample: "gc-phase-pause", unit: "nanoseconds", bucket: "gc", what: "GC pause phases", value: "duration", frame: "GC phase: "},
	{event: "jdk.SafepointBegin", sample: "safepoint", unit: "nanoseconds", bucket: "gc", what: "safepoints", value: "duration", frame: "safepoint"},
	{event: "jdk.ObjectAllocationSample", sample: "alloc-sample", unit: "bytes", stack: true, value: "weight"},
	{event: "jdk.ObjectAllocationInNewTLAB", sample: "alloc-in-new-tlab", unit: "bytes", stack: true, value: "tlabSize"},
	{event: "jdk.ObjectAllocationOutsideTLAB", sample: "alloc-outside-tlab", unit: "bytes", stack: true, value: "allocationSize"},
	{event: "profiler.LiveObject", sample: "live", unit: "bytes", stack: true, value: "allocationSize"},
	{event: "profiler.Malloc", sample: "malloc", unit: "bytes", stack: true, value: "size"},
}

// The sample types whose unit depends on the recording's settings: wall
// is nanoseconds when the wall-clock interval is known and wall-samples
// (a count) otherwise; cpu-time is made only when it is known.
const (
	wallType        = "wall"
	wallSamplesType = "wall-samples"
	cpuTimeType     = "cpu-time"
)

// Parse reads a recording (already gunzipped) into a profile, with
// warnings about what the numbers mean and what the recording left out.
// Malformed input gives an error naming the chunk and byte offset.
//
// A last chunk that is cut short (a recording copied while the JVM was
// still writing it) is left out with a warning naming its offset, when
// complete chunks come before it; a file of one incomplete chunk is an
// error.
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	b, err := read(data)
	if err != nil {
		return nil, nil, err
	}
	p, warns := b.profile()
	return p, append(b.readWarnings, warns...), nil
}

// read turns every chunk's events into the builder's samples.
func read(data []byte) (*builder, error) {
	if !Looks(data) {
		return nil, fmt.Errorf("not a JFR recording: no FLR magic")
	}
	b := newBuilder()
	earlier := constants{}
	for off := 0; off < len(data); {
		c, size, err := parseChunkAfter(data[off:], off, earlier)
		if err != nil && off > 0 && incomplete(data[off:]) {
			b.readWarnings = append(b.readWarnings, fmt.Sprintf("the last chunk, at byte %d, is incomplete (%d bytes; a recording copied while it was written?) and is left out: %v", off, len(data)-off, err))
			break
		}
		if err != nil {
			return nil, err
		}
		if err := b.addChunk(c, data[off:]); err != nil {
			return nil, err
		}
		off += size
	}
	return b, nil
}

// incomplete reports whether the chunk at the start of rest is cut short:
// its header, or the size its header gives, runs past the end of the
// file, or the JVM has not written its size yet.
func incomplete(rest []byte) bool {
	if len(rest) < headerSize {
		return true
	}
	size := binary.BigEndian.Uint64(rest[8:])
	return size == 0 || size > uint64(len(rest))
}

// threadName returns a Thread pool entry's Java name, or its OS name.
func (c *chunk) threadName(v value) string {
	if s := c.str(c.get(v, "javaName")); s != "" {
		return s
	}
	return c.str(c.get(v, "osName"))
}

// className returns a Class pool entry's name in the dotted form.
func (c *chunk) className(v value) string {
	return dotted(c.str(c.get(v, "name")))
}

// dotted turns a JVM class name (java/lang/String) into the Java one
// (java.lang.String). A '/' before a digit stays: no Java identifier
// starts with one, so it is a hidden class's suffix, as in the JDK's name
// of a lambda's class, Busy$$Lambda$14+0x0000000800c01000/1790421142.
func dotted(name string) string {
	b := []byte(name)
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '/' && (b[i+1] < '0' || b[i+1] > '9') {
			b[i] = '.'
		}
	}
	return string(b)
}

// frame is one resolved stack frame.
type frame struct {
	fn   string
	line int64
	lib  string // a native frame's library (async-profiler), "" for Java
	// java marks a Java method's frame (not C, C++ or the kernel's), and
	// native one of a method declared native (Object.wait, Unsafe.park):
	// one that calls into native code itself.
	java, native bool
}

// stack resolves a StackTrace reference into frames, leaf first.
//
// A reference to a stack trace (how events name theirs) is resolved once
// per chunk: the events of a recording share a few thousand stacks, and
// the frames returned are shared too, so callers must not modify them.
func (c *chunk) stack(v value) (frames []frame, truncated bool) {
	if v.kind != vRef {
		return c.resolveStack(v)
	}
	k := [2]int64{v.typ.id, v.i}
	if s, ok := c.stacks[k]; ok {
		return s.frames, s.truncated
	}
	frames, truncated = c.resolveStack(v)
	if c.stacks == nil {
		c.stacks = map[[2]int64]resolvedStack{}
	}
	c.stacks[k] = resolvedStack{frames, truncated}
	return frames, truncated
}

// resolvedStack is a stack trace resolved by chunk.stack.
type resolvedStack struct {
	frames    []frame
	truncated bool
}

// resolveStack is stack without the cache.
func (c *chunk) resolveStack(v value) (frames []frame, truncated bool) {
	st := c.resolve(v)
	if st.kind != vStruct {
		return nil, false
	}
	truncated = c.get(st, "truncated").i != 0
	fs := c.get(st, "frames")
	for _, f := range fs.fields {
		frames = append(frames, c.frame(f))
	}
	return frames, truncated
}

// frame resolves one StackFrame. async-profiler writes native frames (C,
// C++, kernel) as methods whose class is the library and whose descriptor
// is "()L;" ("(Lk;)L;" in the kernel): they are named by the bare symbol,
// with the library kept for the profile's mapping. A "()L;" method without
// a name is the allocated class async-profiler puts on top of an
// allocation stack.
//
// What a frame takes from its method is worked out once per method
// reference of the chunk (see method).
func (c *chunk) frame(f value) frame {
	m := c.method(c.field(f, "method"))
	kernel := m.desc == "(Lk;)L;" || c.str(c.get(f, "type")) == "Kernel"
	if m.name != "" && (m.desc == "()L;" || kernel) {
		lib := m.lib
		if lib == "" && kernel {
			lib = "[kernel.kallsyms]"
		}
		return frame{fn: m.name, lib: lib}
	}
	return frame{fn: m.java, line: c.get(f, "lineNumber").i, java: true, native: m.modifiers&accNative != 0}
}

// accNative is the JVM's ACC_NATIVE method modifier.
const accNative = 0x100

// methodInfo is what frame reads of a Method: its name, descriptor, its
// type's name as written (a native frame's library) and the Java name,
// Class.method (or what there is of it, or [unknown]).
type methodInfo struct {
	name, desc, lib, java string
	modifiers             int64
}

// method returns the methodInfo of a Method value, resolved once per
// reference of the chunk.
func (c *chunk) method(ref value) methodInfo {
	var k [2]int64
	if ref.kind == vRef {
		k = [2]int64{ref.typ.id, ref.i}
		if m, ok := c.methods[k]; ok {
			return m
		}
	}
	m := c.resolve(ref)
	info := methodInfo{name: c.str(c.get(m, "name")), desc: c.str(c.get(m, "descriptor")), modifiers: c.get(m, "modifiers").i}
	typ := c.get(m, "type")
	info.lib = c.str(c.get(typ, "name"))
	info.java = info.name
	if cl := c.className(typ); cl != "" {
		if info.java == "" {
			info.java = cl
		} else {
			info.java = cl + "." + info.java
		}
	}
	if info.java == "" {
		info.java = "[unknown]"
	}
	if ref.kind == vRef {
		if c.methods == nil {
			c.methods = map[[2]int64]methodInfo{}
		}
		c.methods[k] = info
	}
	return info
}

// parkBucket says what a park on the given class is: lock contention when
// the blocker is a lock (an AbstractQueuedSynchronizer or one of the j.u.c
// locks, not one of their conditions), wait otherwise.
func parkBucket(class string) string {
	if strings.Contains(class, "$ConditionObject") {
		return "wait"
	}
	for _, s := range []string{"AbstractQueuedSynchronizer", "AbstractQueuedLongSynchronizer", "ReentrantLock", "ReentrantReadWriteLock", "StampedLock"} {
		if strings.Contains(class, s) {
			return "lock-contention"
		}
	}
	return "wait"
}
