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
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Terminal is s with its control characters escaped (see the package
// doc): printed, it never moves the cursor, clears the screen, sets a
// colour, a title, a link or the clipboard, or ends the line.
func Terminal(s string) string { return escape(s, false) }

// Lines is s as Terminal writes it but for newlines, which stay: text of
// several lines, such as what is written to stderr.
func Lines(s string) string { return escape(s, true) }

func escape(s string, keepNewline bool) string {
	if clean(s, keepNewline) {
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
		case r == '\n' && keepNewline:
			b.WriteByte('\n')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 && r != '\t' || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case unsafe(r):
			b.WriteString(u4(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s has nothing to escape, without allocating:
// most names are plain ASCII.
func clean(s string, keepNewline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && !(c == '\n' && keepNewline) || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			for _, r := range s[i:] {
				if r == utf8.RuneError || r < 0x20 && r != '\t' && !(r == '\n' && keepNewline) || r == 0x7f || unsafe(r) {
					return false // RuneError: a byte that is not UTF-8 (or U+FFFD itself, which escape then writes as it is)
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

// u4 is r, a character of the Basic Multilingual Plane, as \uXXXX.
func u4(r rune) string {
	h := strconv.FormatInt(int64(r), 16)
	return `\u` + "0000"[len(h):] + h
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
// character with which Markdown or GitHub builds something (code, links,
// images, HTML, table cells, entities such as &#x202e;), so that a file
// name like "<img src=x>" or "[a](b)" shows as written. The emphasis
// characters (* _ ~) are left: they change only a style, and the tool's
// own sentences use them literally ("~ marks...", "inuse_space").
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
const markdownPunct = "\\`[]<>|&"

// CSV is a text cell as CSV writes it: a cell that a spreadsheet would
// read as a formula (starting with =, +, -, @, a tab or a CR) is
// prefixed with a single quote, as OWASP recommends, so that it stays
// text. Left as they are: a lone "-" (a placeholder), a signed number
// with a unit such as "+1pp", "-2.5x" or "+3%" (a threshold, a note),
// which names no function a spreadsheet could run, and any other cell
// (encoding/csv quotes separators, quotes and newlines).
func CSV(s string) string {
	if s == "" || strings.IndexByte("=+-@\t\r", s[0]) < 0 || s == "-" || signedAmount(s) {
		return s
	}
	return "'" + s
}

// signedAmount reports whether s is a sign, digits with at most one
// point, and letters or '%' after them: "+1pp", "-12.5x".
func signedAmount(s string) bool {
	if s[0] != '+' && s[0] != '-' {
		return false
	}
	i, digits, point := 1, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			digits++
		} else if c == '.' && !point && digits > 0 {
			point = true
		} else {
			break
		}
	}
	if digits == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if c := s[i] | 0x20; (c < 'a' || c > 'z') && s[i] != '%' {
			return false
		}
	}
	return true
}

// JSON is an encoded JSON document with the characters that encoding/json
// leaves raw in its strings but that act on a terminal (DEL, the C1
// controls, the bidi controls) written as \u escapes: the same document
// to a JSON reader, and safe to print. It must be whole JSON values, as a
// json.Encoder writes them, so that no escape starts inside a string's
// own escape or a character is split.
func JSON(b []byte) []byte {
	i := 0 // the first character to escape, or len(b): most documents have none
	for i < len(b) {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == 0x7f || unsafe(r) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	out := append(make([]byte, 0, len(b)+16), b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == 0x7f || unsafe(r) {
			out = append(out, u4(r)...)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// Writer writes everything through Lines: a stream of messages (stderr)
// in which nothing but tab and newline acts on the terminal. Each Write
// is escaped on its own, so a character split between two writes is
// shown as its bytes (\xe2...); fmt's writers write whole lines.
type Writer struct{ W io.Writer }

// Write writes p escaped and reports len(p) written when all of it was.
func (w Writer) Write(p []byte) (int, error) {
	s := Lines(string(p))
	if _, err := io.WriteString(w.W, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
