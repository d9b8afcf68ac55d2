// Package sink makes text that came from outside profdiff (a function
// name in a profile, a file name, a server's error answer) safe for the
// place it is written to: a terminal, a Markdown table, a CSV cell, a
// one-line message. It is the one place that decides what is escaped; the
// layout (package diff/render), the readers that quote a server's answer
// and the command's messages call it. It imports only the standard
// library, so any package may.
//
// Terminal text shows every control character but tab escaped, as Go
// writes it in a string literal: the C0 controls (\x1b, \r, \n, \b...),
// DEL (\x7f), the C1 controls (\u009b), a byte that is not UTF-8 (\xff),
// and the characters that reorder or break a line without being seen
// (the bidirectional overrides and isolates \u202e, \u2066..., the marks
// \u200e and \u200f, and the separators \u2028 and \u2029). Nothing else
// changes, backslashes included, so a name without such characters reads
// as it is.
package sink

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Terminal is s with its control characters escaped (see the package
// doc): printed, it never moves the cursor, clears the screen, sets a
// colour, a title, a link or the clipboard, or ends the line.
func Terminal(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 && r != '\t' || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case unsafe(r):
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)) + h)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s has nothing Terminal escapes, without
// allocating: most names are plain ASCII.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			for _, r := range s[i:] {
				if r == utf8.RuneError || r < 0x20 && r != '\t' || r == 0x7f || unsafe(r) {
					return false // RuneError: a byte that is not UTF-8, or U+FFFD itself (escaped alike is harmless)
				}
			}
			return true
		}
	}
	return true
}

// unsafe reports whether r, a non-ASCII character, is a C1 control or one
// of the invisible characters that reorder or break a line.
func unsafe(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// MaxName is the longest name, in bytes, the text formats write whole;
// Cut shortens a longer one. JSON and CSV are data and keep names whole.
const MaxName = 4096

// Cut is s cut to at most n bytes (at a character boundary) followed by
// "… (N bytes)" with s's length, when s is longer than n; else s.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return prefix(s, n) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// prefix is s's first n bytes or fewer, ending at a character boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// MarkdownCode is s as a Markdown code span that stays inside its table
// cell: controls escaped as Terminal escapes them (a newline or CR would
// end the row), backticks shown as ' (one would end the span), and '|'
// written '\|', the escape GitHub honours inside a code span in a table
// (with one more backslash where backslashes before it would pair with
// the escape's). HTML inside a code span is shown as written.
func MarkdownCode(s string) string {
	s = strings.ReplaceAll(Terminal(s), "`", "'")
	if !strings.Contains(s, "|") {
		return "`" + s + "`"
	}
	// GitHub pairs backslashes from the left: a pipe after an odd run of
	// them is escaped, so the run before each pipe is made odd.
	var b strings.Builder
	b.WriteByte('`')
	run := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			run++
		case '|':
			if run%2 == 0 {
				b.WriteByte('\\')
			} else {
				b.WriteString(`\\`)
			}
			run = 0
		default:
			run = 0
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('`')
	return b.String()
}

// MarkdownText is s as literal Markdown text: controls escaped as
// Terminal escapes them, and a backslash before each ASCII punctuation
// character that Markdown or GitHub acts on (emphasis, code, links,
// images, HTML, tables, strikethrough, entities such as &#x202e;), so that a file name
// like "<img src=x>" or "[a](b)" shows as written.
func MarkdownText(s string) string {
	s = Terminal(s)
	if !strings.ContainsAny(s, markdownPunct) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(markdownPunct, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// markdownPunct are the characters MarkdownText escapes: '!' needs no
// escape, an image being "![" and '[' escaped.
const markdownPunct = "\\`*_[]<>|~&"

// CSV is a text cell as CSV writes it: a cell that a spreadsheet would
// read as a formula (starting with =, +, -, @, a tab or a CR) is
// prefixed with a single quote, as OWASP recommends, so that it stays
// text; a lone "-" or "+", a placeholder no spreadsheet evaluates, and
// any other cell is as it is (encoding/csv quotes separators,
// quotes and newlines).
func CSV(s string) string {
	if len(s) > 1 && strings.IndexByte("=+-@\t\r", s[0]) >= 0 || s == "=" || s == "@" {
		return "'" + s
	}
	return s
}

// Body is a server's error answer as a message quotes it: one line (runs
// of white space, newlines included, as one space), at most n bytes
// (see Cut), controls escaped as Terminal escapes them.
func Body(b []byte, n int) string {
	s := strings.Join(strings.Fields(string(b[:min(len(b), 4*n)])), " ")
	if len(s) > n {
		s = prefix(s, n) + "…"
	}
	return Terminal(s)
}
