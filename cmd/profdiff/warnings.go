package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/profile"
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
		fmt.Fprintf(w, "profdiff: warning: %s\n", m)
	}
}

// loadWarnings gathers the load warnings of every profile of a run, so that
// each distinct warning is printed once however many profiles have it (a
// 5-vs-5 gate, a --base 'dir/*.pb.gz' glob).
type loadWarnings struct {
	texts   []string            // distinct warning texts without their source, in first-seen order
	sources map[string][]string // text → the profiles that warned it
	// dropped sums Loaded.Dropped over the droppedIn profiles that had
	// samples of the profiler's own goroutines.
	dropped   int64
	droppedIn []string
}

// add records the warnings of one loaded profile. Each of the library's
// warnings is prefixed with the source; the rest is the text compared.
func (lw *loadWarnings) add(l *profile.Loaded) {
	if lw.sources == nil {
		lw.sources = map[string][]string{}
	}
	for _, w := range l.Warnings {
		text, src := w, ""
		if t, ok := strings.CutPrefix(w, l.Source+": "); ok {
			text, src = t, l.Source
		}
		if _, ok := lw.sources[text]; !ok {
			lw.texts = append(lw.texts, text)
		}
		lw.sources[text] = append(lw.sources[text], src)
	}
	if l.Dropped > 0 {
		lw.dropped += l.Dropped
		lw.droppedIn = append(lw.droppedIn, l.Source)
	}
}

// lines returns one line per distinct warning: "source: text" for a warning
// of one profile, "text (N profiles: first, …)" for one that several had
// (each source named once: the same file may be read on both sides),
// and the profiler samples dropped in all of them in one line with how to
// keep them.
func (lw *loadWarnings) lines() []string {
	var out []string
	for _, text := range lw.texts {
		srcs := lw.sources[text]
		switch {
		case len(srcs) == 1 && srcs[0] != "":
			out = append(out, srcs[0]+": "+text)
		case len(srcs) == 1:
			out = append(out, text)
		default:
			out = append(out, fmt.Sprintf("%s (%d profiles%s)", text, len(srcs), warnList(srcs, 3)))
		}
	}
	switch n := len(lw.droppedIn); {
	case n == 1:
		out = append(out, fmt.Sprintf("%s: dropped %s sample(s) of the profiler's own goroutines; --keep-profiler keeps them", lw.droppedIn[0], warnCount(lw.dropped)))
	case n > 1:
		out = append(out, fmt.Sprintf("dropped the profiler's own samples in %d profiles (%s samples); --keep-profiler keeps them", n, warnCount(lw.dropped)))
	}
	return out
}

// warnList is ": " and the first n distinct non-empty names of names
// joined with ", " (with "…" when there are more), or "" when there are
// none (warnings that named no source).
func warnList(names []string, n int) string {
	var distinct []string
	seen := map[string]bool{}
	for _, s := range names {
		if s != "" && !seen[s] {
			seen[s] = true
			distinct = append(distinct, s)
		}
	}
	switch {
	case len(distinct) == 0:
		return ""
	case len(distinct) > n:
		return ": " + strings.Join(distinct[:n], ", ") + ", …"
	}
	return ": " + strings.Join(distinct, ", ")
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
