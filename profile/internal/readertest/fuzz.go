package readertest

import (
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/memtest"
)

// BoundedAlloc runs read and fails the test if it allocated more than
// AllocLimit(n) for n bytes of input. Memory stays bounded by the input:
// a few KB that make a reader allocate hundreds of MB is a defect (an
// out-of-memory kill on a larger input) that a fuzz target sees only so.
func BoundedAlloc(t testing.TB, reader string, n int, read func()) {
	t.Helper()
	if got, limit := memtest.Allocated(read), AllocLimit(n); got > limit {
		t.Errorf("%s allocated %d MB for %d bytes of input (limit %d MB)", reader, got>>20, n, limit>>20)
	}
}

// AllocLimit is generous: readers expand compressed input (the fuzz
// targets cap it at a few MB), and some parsers start with fixed buffers
// (x/exp/trace's parser of Go 1.11-1.21 traces takes 32 MB for its first
// event).
func AllocLimit(n int) uint64 { return 128<<20 + 2048*uint64(n) }

// NotRecovered fails the test on an error made from a recovered panic
// (profile.Parse's guard says "parser failed", gotrace's and nettrace's
// "reader failed"): the guard keeps the program alive, but the message
// names a runtime error, not what is wrong in the input and where, so
// the reader must refuse such input itself.
func NotRecovered(t testing.TB, reader string, err error) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, "parser failed") || strings.Contains(msg, "reader failed") {
		t.Errorf("%s: a panic turned into an error: %s", reader, msg)
	}
}
