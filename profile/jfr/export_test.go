package jfr

import "testing"

// ShapesRecording gives the external tests (package jfr_test, which may
// import package profile and diff) the shared Shapes recording.
func ShapesRecording(t testing.TB) string { return shapesRecording(t) }

// Record gives the external tests a recording of Busy running these modes
// with settings=profile (once per set of modes).
func Record(t testing.TB, modes ...string) string { return record(t, modes...) }
