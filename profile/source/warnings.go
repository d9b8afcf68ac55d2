package source

import (
	"fmt"
	"strings"

	"github.com/profdiff/profdiff/profile"
)

// Warnings are the load warnings of the profiles Load handed on, each
// distinct one once however many profiles have it (five runs a side, a
// glob of many files).
type Warnings struct {
	// Lines are the distinct warnings in the order first seen: "source:
	// text" for a warning of one profile, "text (N profiles: first, …)"
	// for one that several had (each source named once: the same file
	// may be read on both sides).
	Lines []string
	// Dropped sums profile.Loaded.Dropped, the samples of the profiler's
	// own goroutines dropped, over DroppedIn, the profiles that had any:
	// a command says them in one line, with how to keep them.
	Dropped   int64
	DroppedIn []string
}

// warnings gathers the load warnings of every profile of one Load.
type warnings struct {
	texts     []string            // distinct warning texts without their source, in first-seen order
	sources   map[string][]string // text → the profiles that warned it
	dropped   int64
	droppedIn []string
}

// add records the warnings of one loaded profile. Each of the profile
// package's warnings is prefixed with the source; the rest is the text
// compared.
func (w *warnings) add(l *profile.Loaded) {
	if w.sources == nil {
		w.sources = map[string][]string{}
	}
	for _, msg := range l.Warnings {
		text, src := msg, ""
		if t, ok := strings.CutPrefix(msg, l.Source+": "); ok {
			text, src = t, l.Source
		}
		if _, ok := w.sources[text]; !ok {
			w.texts = append(w.texts, text)
		}
		w.sources[text] = append(w.sources[text], src)
	}
	if l.Dropped > 0 {
		w.dropped += l.Dropped
		w.droppedIn = append(w.droppedIn, l.Source)
	}
}

// result is what was gathered, one line per distinct warning.
func (w *warnings) result() Warnings {
	out := Warnings{Dropped: w.dropped, DroppedIn: w.droppedIn}
	for _, text := range w.texts {
		srcs := w.sources[text]
		switch {
		case len(srcs) == 1 && srcs[0] != "":
			out.Lines = append(out.Lines, srcs[0]+": "+text)
		case len(srcs) == 1:
			out.Lines = append(out.Lines, text)
		default:
			out.Lines = append(out.Lines, fmt.Sprintf("%s (%d profiles%s)", text, len(srcs), nameList(srcs, 3)))
		}
	}
	return out
}

// nameList is ": " and the first n distinct non-empty names of names
// joined with ", " (with "…" when there are more), or "" when there are
// none (warnings that named no source).
func nameList(names []string, n int) string {
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
