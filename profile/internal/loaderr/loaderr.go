// Package loaderr holds the kinds of load failure. Package profile
// re-exports them (profile.ErrCorrupt and the rest), which is the name
// everyone outside profile uses; they live here only so that the format
// packages under profile, which profile imports, can mark their own errors
// without an import cycle.
package loaderr

import "errors"

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
