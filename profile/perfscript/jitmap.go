package perfscript

import "github.com/google/pprof/profile"

// Unnamed reports whether l is a frame perf printed as `[unknown]` in a
// file that names code: a perf map of JIT code (`7f0a1b2c3d4e [unknown]
// (/tmp/perf-1234.map)`, the map was gone when perf script ran) or an ELF
// binary or library perf found no symbol in (`11be [unknown]
// (/srv/app/server)`, a stripped build), but not the kernel or perf's own
// `[unknown]` dso. Such a location keeps its address (an absolute one in a
// perf map, a file offset in a binary, as perf prints callchains) and the
// dso as its Mapping, and its one line is the placeholder TidyName makes
// (`[perf-1234.map]`, `[server]`); package profile names it from the map
// or binary when the user supplies it (profile.Options.Symbols).
func Unnamed(l *profile.Location) bool {
	if l.Mapping == nil || len(l.Line) != 1 || l.Line[0].Function == nil {
		return false
	}
	dso := l.Mapping.File
	if dso == "" || IsKernelDSO(dso) || dso[0] == '[' {
		return false
	}
	sys := l.Line[0].Function.SystemName
	return sys == "[unknown]" || sys == ""
}

// UnnamedJIT reports whether l is an Unnamed frame of a perf map.
func UnnamedJIT(l *profile.Location) bool {
	return l.Mapping != nil && IsJITDSO(l.Mapping.File) && Unnamed(l)
}
