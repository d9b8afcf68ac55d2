// Package loaderr holds the kinds of load failure. Package profile
// re-exports them (profile.ErrCorrupt and the rest), which is the name
// everyone outside profile uses; they live here only so that the format
// packages under profile, which profile imports, can mark their own errors
// without an import cycle.
package loaderr

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// The kinds of load failure; see the profile package's ErrUnrecognized and
// the rest for what each means.
var (
	Unrecognized = errors.New("unrecognized format")
	Unsupported  = errors.New("unsupported format")
	Corrupt      = errors.New("corrupt profile")
	Empty        = errors.New("no samples")
	TooLarge     = errors.New("larger than the size limit")
)

// Mark returns err marked as a failure of the given kind: its message is
// err's, unchanged, and errors.Is matches both err's chain and kind.
func Mark(kind, err error) error {
	if err == nil {
		return nil
	}
	return &marked{err: err, kind: kind}
}

// Kind returns the kind err is marked with, or nil when it has none.
func Kind(err error) error {
	for _, k := range []error{Unrecognized, Unsupported, Corrupt, Empty, TooLarge} {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

type marked struct{ err, kind error }

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.err, m.kind} }

// Body is a server's error answer as an error quotes it: one line (runs
// of white space, newlines included, as one space) of at most n bytes,
// cut at a character boundary and followed by "…" where it was cut. Only
// the first 4n bytes of s are read. Controls are left for the command to
// escape where it prints the message (diff/render/sink).
func Body(s string, n int) string {
	s = strings.Join(strings.Fields(s[:min(len(s), 4*n)]), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
