package render

import (
	"strings"

	"github.com/profdiff/profdiff/diff/report"
)

// ANSI SGR sequences for each tone; reset ends any of them.
const reset = "\x1b[0m"

var toneCodes = map[report.Tone]string{
	report.ToneFail:   "\x1b[1;31m", // bold red
	report.ToneGrowth: "\x1b[31m",   // red
	report.ToneShrink: "\x1b[32m",   // green
	report.ToneNew:    "\x1b[33m",   // yellow
}

// paint colours the visible text (n columns) of a padded cell, leaving the
// padding plain so that widths, computed without escape codes, still
// line up. The padding is spaces, one column each.
func paint(padded string, n int, t report.Tone, a report.Align, color bool) string {
	code := toneCodes[t]
	if !color || code == "" || n == 0 {
		return padded
	}
	p := min(max(width(padded)-n, 0), len(padded))
	if a == report.AlignRight {
		return padded[:p] + code + padded[p:] + reset
	}
	i := len(padded) - p
	return code + padded[:i] + reset + padded[i:]
}

// styled is a line of prose as runs of text and their tones.
type styled []run

type run struct {
	text string
	tone report.Tone
}

// String is the line with the escape codes of its tones (none when color
// is off).
func (s styled) String(color bool) string {
	var b strings.Builder
	for _, r := range s {
		code := toneCodes[r.tone]
		if !color || code == "" {
			b.WriteString(r.text)
			continue
		}
		b.WriteString(code + r.text + reset)
	}
	return b.String()
}

// prose is a line as the terminal shows it, cell by cell with its tone.
func prose(l report.Line) styled {
	s := make(styled, len(l))
	for i, c := range l {
		s[i] = run{human(c, report.Terminal), c.Tone}
	}
	return s
}

// wrapStyled breaks a line into lines of at most w columns at spaces (a
// word wider than w is broken, see breaks), keeping each character's tone; w ≤ 0 keeps it
// whole.
func wrapStyled(s styled, w int) []styled { return wrapAt(s, w, breakAfter) }

// wrapAt is wrapStyled breaking words too wide for a line after the
// characters in seps.
func wrapAt(s styled, w int, seps string) []styled {
	if w <= 0 || s.width() <= w {
		return []styled{s}
	}
	var rs []rune
	var tones []report.Tone
	for _, r := range s {
		for _, c := range r.text {
			rs, tones = append(rs, c), append(tones, r.tone)
		}
	}
	var out []styled
	for _, span := range breaks(rs, w, seps) {
		var l styled
		for i := span[0]; i < span[1]; i++ {
			if n := len(l); n > 0 && l[n-1].tone == tones[i] {
				l[n-1].text += string(rs[i])
			} else {
				l = append(l, run{string(rs[i]), tones[i]})
			}
		}
		out = append(out, l)
	}
	return out
}

// width is the columns the line takes (see width).
func (s styled) width() int {
	n := 0
	for _, r := range s {
		n += width(r.text)
	}
	return n
}

// breakAfter are the characters a word too wide for its line breaks
// after: the separators of names, paths and compound words.
const breakAfter = "./:,+!-("

// wrap breaks s into lines of at most w columns (see wrapStyled).
func wrap(s string, w int) []string { return wrapSeps(s, w, breakAfter) }

// WrapIndent breaks s into lines of at most w columns as the table
// format wraps a paragraph (at spaces, a word wider than a line after a
// separator such as / or .), the lines after the first starting with
// indent: a message on standard error.
func WrapIndent(s string, w int, indent string) []string {
	first := wrap(s, w)
	if len(first) <= 1 {
		return first
	}
	out := first[:1]
	rest := strings.TrimLeft(strings.TrimPrefix(s, first[0]), " ")
	for _, l := range wrap(rest, max(w-width(indent), 1)) {
		out = append(out, indent+l)
	}
	return out
}

// wrapSeps is wrap breaking a word too wide for a line after the
// characters in seps; with none, where the line ends.
func wrapSeps(s string, w int, seps string) []string {
	var out []string
	for _, l := range wrapAt(styled{{text: s}}, w, seps) {
		out = append(out, l.String(false))
	}
	return out
}

// breaks returns the [start, end) spans of the lines rs breaks into at w
// columns (see runeWidth): at the last space that fits, the spaces around it dropped; a word wider
// than w after the last of seps that fits in the line's second half (breakAfter:
// Microsoft.AspNetCore. over Server.Kestrel, lock- over contention), else
// where the line is full. A wide rune that would stick out of the line
// starts the next one; a rune wider than w alone takes a line of its own.
func breaks(rs []rune, w int, seps string) [][2]int {
	// col[i] is the columns of rs[:i].
	col := make([]int, len(rs)+1)
	for i, r := range rs {
		col[i+1] = col[i] + runeWidth(r)
	}
	var spans [][2]int
	start := 0
	for col[len(rs)]-col[start] > w {
		// fit: the first rune that does not fit the line (one at least).
		fit := start + 1
		for fit < len(rs) && col[fit+1]-col[start] <= w {
			fit++
		}
		if fit == len(rs) {
			break // one rune wider than w
		}
		cut := -1
		for i := fit; i > start; i-- {
			if rs[i] == ' ' {
				cut = i
				break
			}
		}
		if cut < 0 {
			end := fit
			// Only where the line keeps at least half the width, so
			// that a regular expression does not break at every "\.".
			for i := fit; i > start && col[i]-col[start] >= max(w/2, 2); i-- {
				if strings.ContainsRune(seps, rs[i-1]) {
					end = i
					break
				}
			}
			spans = append(spans, [2]int{start, end})
			start = end
			continue
		}
		// The spaces before the cut go with it: no line ends in a space
		// ("new:  /a/long/path" breaks after "new:", not "new: ").
		end := cut
		for end > start && rs[end-1] == ' ' {
			end--
		}
		spans = append(spans, [2]int{start, end})
		for start = cut; start < len(rs) && rs[start] == ' '; start++ {
		}
	}
	return append(spans, [2]int{start, len(rs)})
}
