package perfscript

import "github.com/google/pprof/profile"

// UnnamedJIT reports whether l is a frame perf printed as `[unknown]` in a
// perf map of JIT code (`7f0a1b2c3d4e [unknown] (/tmp/perf-1234.map)`:
// the map was gone when perf script ran). Such a location keeps its
// address and the map as its Mapping, and its one line is the placeholder
// TidyName makes (`[perf-1234.map]`); package profile names it from the
// map when the user supplies it (profile.Options.Symbols).
func UnnamedJIT(l *profile.Location) bool {
	if l.Mapping == nil || !IsJITDSO(l.Mapping.File) || len(l.Line) != 1 || l.Line[0].Function == nil {
		return false
	}
	sys := l.Line[0].Function.SystemName
	return sys == "[unknown]" || sys == ""
}
