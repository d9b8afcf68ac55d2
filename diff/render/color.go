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
// line up.
func paint(padded string, n int, t report.Tone, a report.Align, color bool) string {
	code := toneCodes[t]
	if !color || code == "" || n == 0 {
		return padded
	}
	r := []rune(padded)
	if a == report.AlignRight {
		i := len(r) - n
		return string(r[:i]) + code + string(r[i:]) + reset
	}
	return code + string(r[:n]) + reset + string(r[n:])
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
// word wider than w is cut), keeping each character's tone; w ≤ 0 keeps it
// whole.
func wrapStyled(s styled, w int) []styled {
	var rs []rune
	var tones []report.Tone
	for _, r := range s {
		for _, c := range r.text {
			rs, tones = append(rs, c), append(tones, r.tone)
		}
	}
	if w <= 0 || len(rs) <= w {
		return []styled{s}
	}
	var out []styled
	for _, span := range breaks(rs, w) {
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

// wrap breaks s into lines of at most w columns (see wrapStyled).
func wrap(s string, w int) []string {
	var out []string
	for _, l := range wrapStyled(styled{{text: s}}, w) {
		out = append(out, l.String(false))
	}
	return out
}

// breaks returns the [start, end) spans of the lines rs breaks into at w
// columns: at the last space that fits, the space dropped.
func breaks(rs []rune, w int) [][2]int {
	var spans [][2]int
	start := 0
	for len(rs)-start > w {
		cut := -1
		for i := start + w; i > start; i-- {
			if rs[i] == ' ' {
				cut = i
				break
			}
		}
		if cut < 0 {
			spans = append(spans, [2]int{start, start + w})
			start += w
			continue
		}
		spans = append(spans, [2]int{start, cut})
		for start = cut; start < len(rs) && rs[start] == ' '; start++ {
		}
	}
	return append(spans, [2]int{start, len(rs)})
}
