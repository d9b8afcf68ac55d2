package jfr

import "testing"

// ShapesRecording gives the external tests (package jfr_test, which may
// import package profile and diff) the shared Shapes recording.
func ShapesRecording(t testing.TB) string { return shapesRecording(t) }
