// Package jfr reads JDK Flight Recorder recordings (.jfr: what
// `-XX:StartFlightRecording`, `jcmd JFR.start` and `JFR.dump` write) into a
// pprof profile, without Java.
//
// A recording is a sequence of chunks, each with its own header, metadata
// (the description of every type, read generically), constant pools
// (stack traces, methods, classes, symbols, threads) and events. Parse reads
// every chunk and turns the events that say where threads spend time into
// samples, one sample type per event type:
//
//	jdk.ExecutionSample       execution-samples/count  bucket cpu
//	jdk.NativeMethodSample    native-samples/count     (the frames decide)
//	jdk.JavaMonitorEnter      monitor-enter/nanoseconds  lock-contention
//	jdk.JavaMonitorWait       monitor-wait/nanoseconds   wait
//	jdk.ThreadPark            park/nanoseconds   lock-contention when parked on a lock, wait otherwise
//	jdk.ThreadSleep           sleep/nanoseconds          wait
//	jdk.SocketRead, SocketWrite, FileRead, FileWrite     io
//	jdk.GarbageCollection     gc-pause/nanoseconds (the sum of its pauses) gc
//	jdk.ObjectAllocationSample  alloc-sample/bytes (the sample's weight)
//
// Samples carry the bucket in labels.Bucket (where the event says why the
// thread waited), the thread's name in labels.Thread, and the monitor,
// parked-on or allocated class in LabelClass. Frames are named
// package.Class.method, as Java users read them, with the line number.
//
// The JDK samples at most a few threads per period and records duration
// events only above a threshold; Parse reads both from the recording's own
// jdk.ActiveSetting events and says so in its warnings.
package jfr

import (
	"bytes"
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

// spec says how one event type becomes samples.
type spec struct {
	event  string
	sample string // the sample type
	unit   string
	bucket string // labels.Bucket, "" when the frames decide
	stack  bool   // false: the event has no stack (GC)
	what   string // the words a threshold warning uses
}

// specs lists the events Parse reads, in the order of the sample types.
var specs = []spec{
	{"jdk.ExecutionSample", "execution-samples", "count", "cpu", true, ""},
	{"jdk.NativeMethodSample", "native-samples", "count", "", true, ""},
	{"jdk.JavaMonitorEnter", "monitor-enter", "nanoseconds", "lock-contention", true, "monitor enters"},
	{"jdk.JavaMonitorWait", "monitor-wait", "nanoseconds", "wait", true, "monitor waits"},
	{"jdk.ThreadPark", "park", "nanoseconds", "wait", true, "parks"},
	{"jdk.ThreadSleep", "sleep", "nanoseconds", "wait", true, "sleeps"},
	{"jdk.SocketRead", "socket-read", "nanoseconds", "io", true, "socket reads"},
	{"jdk.SocketWrite", "socket-write", "nanoseconds", "io", true, "socket writes"},
	{"jdk.FileRead", "file-read", "nanoseconds", "io", true, "file reads"},
	{"jdk.FileWrite", "file-write", "nanoseconds", "io", true, "file writes"},
	{"jdk.GarbageCollection", "gc-pause", "nanoseconds", "gc", false, ""},
	{"jdk.ObjectAllocationSample", "alloc-sample", "bytes", "", true, ""},
}

// Parse reads a recording (already gunzipped) into a profile, with
// warnings about what the numbers mean and what the recording left out.
// Malformed input gives an error naming the chunk and byte offset.
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	if !Looks(data) {
		return nil, nil, fmt.Errorf("not a JFR recording: no FLR magic")
	}
	b := newBuilder()
	earlier := constants{}
	for off := 0; off < len(data); {
		c, size, err := parseChunkAfter(data[off:], off, earlier)
		if err != nil {
			return nil, nil, err
		}
		if err := b.addChunk(c, data[off:]); err != nil {
			return nil, nil, err
		}
		off += size
	}
	p, warns := b.profile()
	return p, warns, nil
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
	return strings.ReplaceAll(c.str(c.get(v, "name")), "/", ".")
}

// frame is one resolved stack frame.
type frame struct {
	fn   string
	line int64
}

// stack resolves a StackTrace reference into frames, leaf first.
func (c *chunk) stack(v value) (frames []frame, truncated bool) {
	st := c.resolve(v)
	if st.kind != vStruct {
		return nil, false
	}
	truncated = c.get(st, "truncated").i != 0
	fs := c.get(st, "frames")
	for _, f := range fs.fields {
		m := c.get(f, "method")
		name := c.str(c.get(m, "name"))
		if cl := c.className(c.get(m, "type")); cl != "" {
			name = cl + "." + name
		}
		if name == "" {
			name = "[unknown]"
		}
		frames = append(frames, frame{fn: name, line: c.get(f, "lineNumber").i})
	}
	return frames, truncated
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
