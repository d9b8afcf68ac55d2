package jfr

import "testing"

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
