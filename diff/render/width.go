package render

import (
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// columns is how many terminal columns a rune takes: two for East Asian
// wide and fullwidth runes (CJK, ｆｕｌｌｗｉｄｔｈ forms, most emoji),
// none for combining marks and joiners, one for the rest. Runes of
// ambiguous width ("…", "·", box drawing) take one, as modern terminals
// draw them. The condition is set here rather than taken from
// runewidth.DefaultCondition, which follows LANG, LC_* and
// RUNEWIDTH_EASTASIAN, so that a report is laid out the same everywhere.
var columns = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// runeWidth is the columns r takes (see columns). ASCII takes one, control
// characters included: they reach the layout only escaped (sink).
func runeWidth(r rune) int {
	if r < 0x80 {
		return 1
	}
	return columns.RuneWidth(r)
}

// width is the number of columns s takes in a terminal: the sum of its
// runes' (see runeWidth), which is what tablewriter pads cells by, and at
// least what a terminal that joins emoji sequences into one glyph shows.
// s is text without escape codes: colour is added after layout (paint).
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			n := i
			for _, r := range s[i:] {
				n += runeWidth(r)
			}
			return n
		}
	}
	return len(s)
}

// cutWidth is the longest start of s that takes at most w columns: whole
// runes only, so a wide rune that would stick out half a column is left
// out (the line is a column short), and the zero-width runes after the
// last rune kept stay with it.
func cutWidth(s string, w int) string {
	n := 0
	for i, r := range s {
		if n += runeWidth(r); n > w {
			return s[:i]
		}
	}
	return s
}

// tailWidth is the longest end of s that takes at most w columns: whole
// runes only, and a zero-width rune is not split from the rune before it.
func tailWidth(s string, w int) string {
	n, start := 0, len(s)
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if n += runeWidth(r); n > w {
			break
		}
		i -= size
		if runeWidth(r) > 0 || i == 0 {
			start = i
		}
	}
	return s[start:]
}
