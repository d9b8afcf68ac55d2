package render

import (
	"strings"
	"unicode/utf8"
)

// ellipsis marks what an elided name left out.
const ellipsis = "…"

// elideName shortens a function name to at most w characters, keeping
// what identifies it: the package (or module) and the method. It tries, in
// order, until the name fits: the final parameter list, which starts at
// index params (see report.Cell.Params; none at 0), as "(…)", type and
// template arguments as "<…>" and "[…]", then the middle of the qualifier
// (github.com/…/jsonserver.(*waitRegistry).acquire, System.Private.CoreLib!
// System.….WaitSubsystem+ThreadWaitInfo.Wait(…), std::…::vector<…>::push_back(…)),
// and as a last resort the middle of what is left, keeping more of the end.
func elideName(s string, params, w int) string {
	if width(s) <= w {
		return s
	}
	if params > 0 && params < len(s) && s[params] == '(' {
		if s = s[:params] + "(" + ellipsis + ")"; width(s) <= w {
			return s
		}
	}
	if s = collapseArgs(s); width(s) <= w {
		return s
	}
	if e, ok := elideQualifier(s, w); ok {
		return e
	}
	// A Go name too long even as …/pkg.Type.Method: its type and method.
	if i := strings.LastIndex(s, "/"); i >= 0 && !strings.Contains(s, "!") {
		if e, ok := elideQualifier(s[i+1:], w); ok {
			return e
		}
	}
	return elideMiddle(s, w)
}

// collapseArgs replaces the contents of every outermost <…> and […] group.
func collapseArgs(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch r {
		case '<', '[':
			if depth++; depth == 1 {
				b.WriteRune(r)
				b.WriteString(ellipsis)
			}
			continue
		case '>', ']':
			if depth > 0 {
				if depth--; depth == 0 {
					b.WriteRune(r)
				}
				continue
			}
		}
		if depth == 0 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// elideQualifier drops segments of a name's qualifier, nearest the method
// first, keeping its first segment and the method: the last path element
// for a Go import path, else the type and the method.
func elideQualifier(s string, w int) (string, bool) {
	mod := ""
	if i := strings.Index(s, "!"); i > 0 {
		mod, s = s[:i+1], s[i+1:]
	}
	sep, keep := ".", 2
	switch {
	case strings.Contains(s, "/"):
		sep, keep = "/", 1
	case strings.Contains(s, "::"):
		sep = "::"
	}
	segs := splitTop(s, sep)
	tail := strings.Join(segs[max(len(segs)-keep, 0):], sep)
	for h := len(segs) - keep - 1; h >= 1; h-- {
		e := mod + strings.Join(segs[:h], sep) + sep + ellipsis + sep + tail
		if width(e) <= w {
			return e, true
		}
	}
	// Narrower still: the type and the method alone, whole words rather
	// than the middle of one (….LowLevelLock.WaitAndAcquire).
	if len(segs) > keep {
		if e := mod + ellipsis + sep + tail; width(e) <= w {
			return e, true
		}
	}
	return "", false
}

// splitTop splits s at sep outside parentheses and brackets.
func splitTop(s, sep string) []string {
	var segs []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(' || c == '<' || c == '[':
			depth++
		case (c == ')' || c == '>' || c == ']') && depth > 0:
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			segs = append(segs, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(segs, s[start:])
}

// elideMiddle keeps a third of w from the start of s and the rest from
// its end, where a name's method is.
func elideMiddle(s string, w int) string {
	r := []rune(s)
	if w <= 1 {
		return string(r[:max(w, 0)])
	}
	head := (w - 1) / 3
	return string(r[:head]) + ellipsis + string(r[len(r)-(w-1-head):])
}

// width is the number of columns s takes in a terminal: one per rune
// (profile names and report text use no double-width characters).
func width(s string) int { return utf8.RuneCountInString(s) }
