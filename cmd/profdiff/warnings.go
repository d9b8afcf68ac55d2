package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/render"
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

// say writes one message on w: "profdiff: " and the message, escaped
// (sink.Terminal) so that nothing in it, a file name, a frame or a
// server's answer, acts on the terminal or starts another line of its
// own. On the standard error run hands a command (*messages) the input
// files it names are shortened and the message is wrapped to the width
// (see messages); elsewhere it is one line.
func say(w io.Writer, format string, a ...any) {
	msg := "profdiff: " + sink.Terminal(fmt.Sprintf(format, a...))
	if m, ok := w.(*messages); ok {
		msg = m.fit(msg)
	}
	fmt.Fprintf(w, "%s\n", msg)
}

// messages is the standard error that run hands a command. Writes go to
// w as they are (a library's log, a child's output); a message that say
// writes names the input files by their short names
// (present.ShortSources, as the report names them) and is wrapped at its
// spaces to width columns, its following lines indented two spaces.
// Errors (exit 2) are not written here: exitCode writes them on one line
// with each path as it was typed, for the user to find the file.
type messages struct {
	w io.Writer

	mu    sync.Mutex
	width int         // 0: each message on one line
	names []shortName // set once, by setNames
	named bool
}

// shortName is an input's path as given and its short name.
type shortName struct{ full, short string }

// newMessages is the messages of a run writing on w, escaped (sink.Writer),
// wrapped to the width of the terminal stderr is, else 80 columns.
func newMessages(stderr io.Writer) *messages {
	width := 80
	if n, ok := terminalWidth(stderr); ok && n > 0 {
		width = n
	}
	return &messages{w: sink.Writer{W: stderr}, width: width}
}

func (m *messages) Write(p []byte) (int, error) { return m.w.Write(p) }

// setWidth makes messages on w fit n columns (0: one line each), as
// --width says; w other than a *messages is left as it is.
func setWidth(w io.Writer, n int) {
	if m, ok := w.(*messages); ok {
		m.mu.Lock()
		m.width = n
		m.mu.Unlock()
	}
}

// setNames names the input files of sides (as source.Load resolved them,
// one list per side) in the messages on w by their short names. The
// first call of a run sets them: a command that loads some sides again
// (series --flame) keeps the names its report uses.
func setNames(w io.Writer, sides [][]string) {
	m, ok := w.(*messages)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.named {
		return
	}
	m.named = true
	short := present.ShortSources(sides...)
	for i, side := range sides {
		for j, full := range side {
			if short[i][j] != full {
				m.names = append(m.names, shortName{full, short[i][j]})
			}
		}
	}
	// The longest first, so that a path is not taken for a shorter one it
	// starts with.
	sort.SliceStable(m.names, func(i, j int) bool { return len(m.names[i].full) > len(m.names[j].full) })
}

// fit is msg with each input's path shortened, wrapped to the width.
func (m *messages) fit(msg string) string {
	m.mu.Lock()
	names, width := m.names, m.width
	m.mu.Unlock()
	for _, n := range names {
		msg = replacePath(msg, n.full, n.short)
	}
	if width <= 0 {
		return msg
	}
	return strings.Join(render.WrapIndent(msg, width, "  "), "\n")
}

// replacePath replaces each whole occurrence of the path full in s by
// short: one that runs on into a longer name (full is a/b.pb, s names
// a/b.pb.gz or x/a/b.pb) is left.
func replacePath(s, full, short string) string {
	var b strings.Builder
	from := 0
	for {
		i := strings.Index(s[from:], full)
		if i < 0 {
			break
		}
		i += from
		end := i + len(full)
		if pathEdge(s, i-1) && pathEdge(s, end) {
			b.WriteString(s[from:i] + short)
			from = end
		} else {
			b.WriteString(s[from : i+1])
			from = i + 1
		}
	}
	b.WriteString(s[from:])
	return b.String()
}

// pathEdge reports whether s[k] cannot be part of a path around it: the
// text's ends, a space, punctuation, and a full stop that ends a sentence.
func pathEdge(s string, k int) bool {
	switch {
	case k < 0 || k >= len(s):
		return true
	case s[k] == '.':
		return k == len(s)-1 || s[k+1] == ' '
	}
	return strings.ContainsRune(" :,;()'\"", rune(s[k]))
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
