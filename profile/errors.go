package profile

import "errors"

// Sentinel errors: a load failure wraps one of these (test with errors.Is),
// so callers decide by kind of failure, never by an error's text. The
// wrapping *Error names the source and says what is wrong and where.
var (
	// ErrUnrecognized: no registered format recognizes the content.
	ErrUnrecognized = errors.New("unrecognized format")
	// ErrUnsupported: the content is a known format that profdiff does not
	// read (JFR, perf.data, Chrome JSON, ...); the message names it.
	ErrUnsupported = errors.New("unsupported format")
	// ErrCorrupt: the format is recognized but the content is malformed or
	// truncated.
	ErrCorrupt = errors.New("corrupt profile")
	// ErrEmpty: the source holds no data, or a profile with no samples.
	ErrEmpty = errors.New("no samples")
	// ErrTooLarge: the source, or what a container expands to, passes the
	// size limit (Options.MaxSize). The message gives the limit; commands
	// add how to raise it.
	ErrTooLarge = errors.New("larger than the size limit")
)
