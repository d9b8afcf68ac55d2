package jfr

import (
	"encoding/json"
	"strings"
	"testing"
)

// ShapesRecording gives the external tests (package jfr_test, which may
// import package profile and diff) the shared Shapes recording.
func ShapesRecording(t testing.TB) string { return shapesRecording(t) }

// Record gives the external tests a recording of Busy running these modes
// with settings=profile (once per set of modes).
func Record(t testing.TB, modes ...string) string { return record(t, modes...) }

// RecordAll gives the external tests recordings of Busy running each set of
// modes, as Record does, made at the same time.
func RecordAll(t testing.TB, sets ...[]string) []string { return recordAll(t, sets...) }

// NativeSamplesInWaits counts the native samples of a recording that the
// JDK's reader (jfr print) places inside a wait or I/O event of their
// thread: those thread-time leaves out.
func NativeSamplesInWaits(t *testing.T, path string) int64 {
	var n int64
	for _, v := range refCovered(t, reference(t, path))["native-samples"] {
		n += v
	}
	return n
}

// MonitorTurnsBlocked sums, from `jfr print --json` of an async-profiler
// recording of Turns' monitor mode, the wall samples (each event's samples
// count, or 1) of the threads taking turns on the monitor (monitor-N), and
// those of them blocked entering it: not running (STATE_SLEEPING), with
// Turns.monitorTurns, which holds the synchronized block, the innermost
// Java frame (the frames below it native: the VM's, libc's, the kernel's).
func MonitorTurnsBlocked(t *testing.T, path string) (blocked, all int64) {
	for _, e := range reference(t, path) {
		if e.Type != "profiler.WallClockSample" && e.Type != "jdk.ExecutionSample" {
			continue
		}
		var th struct {
			Name string `json:"javaName"`
		}
		json.Unmarshal(e.Values.all["sampledThread"], &th)
		var state string
		json.Unmarshal(e.Values.all["state"], &state)
		if !strings.HasPrefix(th.Name, "monitor-") || e.Type == "jdk.ExecutionSample" && state == "STATE_DEFAULT" {
			continue // not a monitor thread's, or a CPU sample beside the wall clock
		}
		n := int64(1)
		if _, ok := e.Values.all["samples"]; ok {
			n = e.Values.number(t, "samples")
		}
		all += n
		if state != "STATE_SLEEPING" || e.Values.StackTrace == nil {
			continue
		}
		for _, f := range e.Values.StackTrace.Frames {
			if d := f.Method.Descriptor; d == "()L;" || d == "(Lk;)L;" {
				continue
			}
			if f.Method.Type.Name == "Turns" && f.Method.Name == "monitorTurns" {
				blocked += n
			}
			break
		}
	}
	return blocked, all
}
