package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/render/sink"
	"github.com/profdiff/profdiff/profile/source"
)

// warn prints warnings on w, one line each. A line repeated within one call
// is printed once: the analyses report per-profile facts that are often the
// same for every profile of a side.
func warn(w io.Writer, msgs ...string) {
	seen := make(map[string]bool, len(msgs))
	for _, m := range msgs {
		if seen[m] {
			continue
		}
		seen[m] = true
		say(w, "warning: %s", m)
	}
}

// say writes one message on w: "profdiff: " and the message on one line,
// escaped (sink.Terminal) so that nothing in it, a file name, a frame or
// a server's answer, acts on the terminal or starts another line.
func say(w io.Writer, format string, a ...any) {
	fmt.Fprintf(w, "profdiff: %s\n", sink.Terminal(fmt.Sprintf(format, a...)))
}

// warningLines are the lines of a load's warnings: each distinct one
// (source.Warnings.Lines), then the profiler's samples dropped in all
// the profiles in one line, with how to keep them.
func warningLines(w source.Warnings) []string {
	out := w.Lines
	switch n := len(w.DroppedIn); {
	case n == 1:
		out = append(out, fmt.Sprintf("%s: dropped %s sample(s) of the profiler's own goroutines; --keep-profiler keeps them", w.DroppedIn[0], warnCount(w.Dropped)))
	case n > 1:
		out = append(out, fmt.Sprintf("dropped the profiler's own samples in %d profiles (%s samples); --keep-profiler keeps them", n, warnCount(w.Dropped)))
	}
	return out
}

// warnCount formats n with commas between groups of three digits (1,234).
func warnCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
