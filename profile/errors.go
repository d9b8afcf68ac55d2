package profile

import (
	"errors"

	"github.com/profdiff/profdiff/profile/internal/loaderr"
)

// Sentinel errors: a load failure wraps one of these (test with errors.Is),
// so callers decide by kind of failure, never by an error's text. The
// wrapping *Error names the source and says what is wrong and where. Errors
// reading the source itself (a missing file, a failed HTTP request) wrap
// the underlying os or net error instead.
var (
	// ErrUnrecognized: no registered format recognizes the content.
	ErrUnrecognized = loaderr.Unrecognized
	// ErrUnsupported: the content is a known format that profdiff does not
	// read (JFR, perf.data, Chrome JSON, ...); the message names it.
	ErrUnsupported = loaderr.Unsupported
	// ErrCorrupt: the format is recognized but the content is malformed or
	// truncated.
	ErrCorrupt = loaderr.Corrupt
	// ErrEmpty: the source holds no data, or a profile with no samples.
	ErrEmpty = loaderr.Empty
	// ErrTooLarge: the source, or what a container expands to, passes the
	// size limit (Options.MaxSize). The message gives the limit; commands
	// add how to raise it.
	ErrTooLarge = loaderr.TooLarge
)

// ErrProfilerOnly marks the ErrEmpty of a profile whose every sample is of
// the profiler's own goroutines, dropped unless Options.KeepProfiler asks
// to keep them; commands say how to keep them.
var ErrProfilerOnly = errors.New("every sample is of the profiler's own goroutines")

// mark returns err as a failure of the given kind (one of the sentinels)
// with its message unchanged.
func mark(kind, err error) error { return loaderr.Mark(kind, err) }
