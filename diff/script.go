package diff

import (
	"path"
	"strings"
)

// scriptFile reports whether a function's source file (pprof's
// Function.filename, as the readers set it) is a script's: JavaScript's
// URL (https://, resource://, chrome://, file://, node: in a V8 or Gecko
// profile), or a file of an interpreted language by its extension (.js,
// .mjs, .ts, .py, .rb, .php, .lua, .pl, .pm), or Python's and Ruby's
// code without a file of its own (<frozen posixpath>, <string>,
// <internal:kernel>). A native frame has no file (cProfile's built-ins
// have none in the pstats reader's model, "~" in cProfile's own), or a
// compiled language's source (read.c, syscall_linux.go, lib.rs), or a
// marker that says it is native (stackprof's "<cfunc>"). The rules marked native (rules.Rule.Native) do not count for
// a script's frame: its function send or read is the program's own.
func scriptFile(file string) bool {
	if file == "" {
		return false
	}
	if urlScheme(file) {
		return true
	}
	if file[0] == '<' {
		return strings.HasPrefix(file, "<frozen ") || strings.HasPrefix(file, "<internal:") ||
			file == "<string>" || file == "<stdin>"
	}
	switch strings.ToLower(path.Ext(strings.ReplaceAll(file, `\`, "/"))) {
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".py", ".pyw", ".rb", ".php", ".lua", ".pl", ".pm":
		return true
	}
	return false
}

// urlScheme reports whether s starts with a URL's scheme and its colon
// (RFC 3986: a letter, then letters, digits, +, - or .), two characters
// or more, so that a Windows drive (C:\src\read.c) is none.
func urlScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i >= 2
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}
