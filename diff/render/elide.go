package render

import "strings"

// ellipsis marks what an elided name left out.
const ellipsis = "…"

// elideName shortens a function name to at most w columns by meaning:
// it takes the first of nameForms that fits, so a name loses its
// parameters, type arguments, module, namespace or import path before its
// class, and its class before its method. A method wider than w alone
// keeps its start, ending in "…".
func elideName(s string, params, w int) string {
	if width(s) <= w {
		return s
	}
	forms := nameForms(s, params)
	for _, f := range forms {
		if width(f) <= w {
			return f
		}
	}
	return cutEnd(forms[len(forms)-1], w)
}

// nameForms is a name in every form it can be shortened to, whole first,
// each shorter than the one before and none the same:
//
//   - the final parameter list, which starts at index params (see
//     report.Cell.Params; none at 0), as "(…)";
//   - type and template arguments as "<…>" and "[…]";
//   - a module before "!" (System.Private.CoreLib!) dropped;
//   - the qualifier's leading segments dropped one by one: a Go import
//     path's directories (github.com/x/y/pkg.(*T).M to pkg.(*T).M, and
//     node:internal/process/task_queues.f to task_queues.f), a
//     namespace or package (System.Threading.LowLevelLock.WaitAndAcquire
//     to LowLevelLock.WaitAndAcquire, ns::Class::method to
//     Class::method), down to the class (or Go package) and the method;
//   - a Go package dropped ((*T).M), an outer class dropped
//     (WaitSubsystem+ThreadWaitInfo.Wait to ThreadWaitInfo.Wait, Java's
//     Outer$Inner.m to Inner.m);
//   - the method alone (a Go closure with its function: F.func1).
func nameForms(s string, params int) []string {
	forms := []string{s}
	add := func(f string) {
		if f != "" && f != forms[len(forms)-1] {
			forms = append(forms, f)
		}
	}
	if params > 0 && params < len(s) && s[params] == '(' {
		s = s[:params] + "(" + ellipsis + ")"
		add(s)
	}
	s = collapseArgs(s)
	add(s)
	if i := strings.Index(s, "!"); i > 0 && i < len(s)-1 {
		s = s[i+1:]
		add(s)
	}
	// A Go import path: drop its directories first.
	if slash := lastTopSlash(s); slash >= 0 {
		for _, dir := range splitTop(s[:slash], "/") {
			s = s[len(dir)+1:]
			add(s)
		}
	}
	sep := "."
	if strings.Contains(s, "::") {
		sep = "::"
	}
	segs := splitTop(s, sep)
	// A Go closure (F.func1, F.gowrap2, F.func1.1) is part of its
	// function's name: func1 alone says nothing.
	for n := len(segs); n > 2 && goClosure(segs[n-1]); n = len(segs) {
		segs = append(segs[:n-2:n-2], segs[n-2]+sep+segs[n-1])
	}
	for len(segs) > 2 {
		segs = segs[1:]
		add(strings.Join(segs, sep))
	}
	if len(segs) == 2 {
		// An outer class: .NET's Outer+Inner, Java's Outer$Inner.
		if i := strings.LastIndexAny(segs[0], "+$"); i > 0 && i < len(segs[0])-1 {
			add(segs[0][i+1:] + sep + segs[1])
		}
		add(segs[1])
	}
	return forms
}

// goClosure reports whether seg names a Go closure within the function
// before it: funcN, gowrapN or a bare number.
func goClosure(seg string) bool {
	for _, p := range []string{"func", "gowrap", ""} {
		if n, ok := strings.CutPrefix(seg, p); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}

// lastTopSlash is the index of the last "/" of a Go import path (or of
// a Node built-in module, node:internal/timers.listOnTimeout) outside
// parentheses and brackets, followed by a package's or module's function,
// or -1.
func lastTopSlash(s string) int {
	last, depth := -1, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '<', '[':
			depth++
		case ')', '>', ']':
			depth = max(depth-1, 0)
		case '/':
			if depth == 0 {
				last = i
			}
		case ' ':
			// Not a name in a path: text with a path in it.
			if depth == 0 {
				return -1
			}
		}
	}
	if last >= 0 && !strings.Contains(s[last+1:], ".") {
		return -1 // a path with no package.function after it
	}
	return last
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

// cutEnd keeps the start of s, ending in "…", in at most w columns (one
// less where the next rune is wide: see cutWidth): the start of a
// method's name says more than its end.
func cutEnd(s string, w int) string {
	if width(s) <= w {
		return s
	}
	if w <= 1 {
		return cutWidth(s, max(w, 0))
	}
	return cutWidth(s, w-1) + ellipsis
}
