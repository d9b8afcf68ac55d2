package symbolize

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ianlancetaylor/demangle"
)

// demangleOptions is the form [Demangle] writes: the function's name with
// its scopes and template (Rust: generic) arguments, without the parameter
// list, the return type or clone suffixes (`.cold`, `.isra.0`). That is the
// name a C++ frame gets when perf demangles it and profdiff's perf script
// reader cuts the parameters, so one binary profiled with and without
// perf's demangling gives the same frames; overloads (`f(int)`, `f(long)`)
// share a name, as in pprof's default, while template instances stay
// apart. Rust legacy names lose their `::h<hash>` and v0 names their crate
// disambiguators, as rustc-demangle prints them. MaxLength bounds what a
// hostile name, whose substitutions can multiply, may expand into.
var demangleOptions = []demangle.Option{demangle.NoParams, demangle.MaxLength(14)}

// Demangle returns the readable name of a C++ (Itanium `_Z…`), Rust legacy
// (`_ZN…17h<hash>E`) or Rust v0 (`_R…`) symbol, and false (with name
// unchanged) for anything else, including names it cannot demangle. A
// prefix a profile writer put before the symbol — a module (`libfoo.so!`,
// `[libfoo.so] `, `libfoo.so.`) — and a suffix after it (perf's `+0x1f`,
// `@plt`, a symbol version `@@GLIBCXX_3.4`, stackcollapse's `_[k]`) are
// kept around the demangled name. Names that cannot be mangled, such as
// Go's, are rejected by a byte scan before the demangler runs.
func Demangle(name string) (string, bool) {
	start := mangledStart(name)
	if start < 0 {
		return name, false
	}
	end := start
	for end < len(name) && mangledByte(name[end]) {
		end++
	}
	suffix := name[end:]
	if strings.HasPrefix(suffix, "[") && end-start > 3 && name[end-1] == '_' {
		end-- // stackcollapse's `_[k]`, `_[j]`, `_[i]`
		suffix = name[end:]
	}
	sym := name[start:end]
	if strings.HasPrefix(sym, "__Z") {
		sym = sym[1:] // Mach-O's extra leading underscore
	}
	d, ok := rustLegacy(sym)
	var err error
	if !ok {
		d, err = toString(sym)
	}
	if err != nil || d == "" || d == sym {
		return name, false
	}
	if strings.HasPrefix(sym, "_R") {
		d = dropEmptySegments(d)
	}
	return name[:start] + d + suffix, true
}

// dropEmptySegments removes the empty path segments the demangler prints
// for a v0 path in a lowercase (implementation-specific) namespace without
// a name: a tuple struct's constructor (`c`), an anonymous const of older
// rustc (`k`), an opaque type (`i`). It writes `::` and nothing, giving
// `THREAD_RNG_KEY::::{closure#0}` or `Thing<u64>::>`; rustc-demangle, which
// Rust's own backtraces use, and c++filt print no segment at all. A `::`
// that ends the name or stands before another `::`, a closing `>`, `)`,
// `]`, a `,`, `;` or a space is such a segment: no Rust path has an empty
// one. (demangle v0.0.0-20260724033716; the fix belongs in the library.)
func dropEmptySegments(d string) string {
	if !strings.Contains(d, "::") {
		return d
	}
	var b strings.Builder
	for i := 0; i < len(d); i++ {
		if strings.HasPrefix(d[i:], "::") {
			rest := d[i+2:]
			if rest == "" || strings.HasPrefix(rest, "::") || strings.IndexByte(">)],; ", rest[0]) >= 0 {
				i++ // an empty segment: drop its "::"
				continue
			}
			b.WriteString("::")
			i++
			continue
		}
		b.WriteByte(d[i])
	}
	return b.String()
}

// toString is demangle.ToString that turns a panic of the demangler (it
// recovers only its own) into an error: a profile's odd name must never
// stop its load.
func toString(sym string) (s string, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = "", demangle.ErrNotMangledName
		}
	}()
	return demangle.ToString(sym, demangleOptions...)
}

// mangledStart returns where a mangled symbol starts in name, or -1: at the
// start, or after a module prefix `mod!`, `[mod] ` or `mod.so….`.
func mangledStart(name string) int {
	i := strings.IndexByte(name, '_')
	for i >= 0 {
		if mangledAt(name, i) {
			return i
		}
		j := strings.IndexByte(name[i+1:], '_')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return -1
}

func mangledAt(name string, i int) bool {
	rest := name[i:]
	if !strings.HasPrefix(rest, "_Z") && !strings.HasPrefix(rest, "_R") && !strings.HasPrefix(rest, "__Z") {
		return false
	}
	if i == 0 {
		return true
	}
	prefix := name[:i]
	switch prefix[len(prefix)-1] {
	case '!':
		return !strings.ContainsAny(prefix, " ;<>()")
	case ' ':
		return strings.HasPrefix(prefix, "[") && strings.HasSuffix(prefix, "] ") && strings.Count(prefix, " ") == 1
	case '.':
		return strings.Contains(prefix, ".so") && !strings.ContainsAny(prefix, " ;<>()")
	}
	return false
}

// mangledByte reports whether c may appear in an Itanium or Rust symbol
// (Rust legacy escapes with `$`; clone suffixes use `.`).
func mangledByte(c byte) bool {
	return c == '_' || c == '$' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// rustLegacy demangles a legacy Rust symbol, `_ZN` then length-prefixed
// identifiers, the last `h<16 hex>`, then `E` and an optional `.suffix`, as
// rustc-demangle prints it without the hash. The demangler library reads an
// identifier's leading `_` as a separator (`__rust_begin_short_backtrace`
// became `_rust_begin_short_backtrace`); rustc-demangle drops it only
// before a `$` escape. It reports false for anything else.
func rustLegacy(sym string) (string, bool) {
	s, ok := strings.CutPrefix(sym, "_ZN")
	if !ok {
		return "", false
	}
	var parts []string
	for len(s) > 0 && s[0] != 'E' {
		n := 0
		for n < len(s) && '0' <= s[n] && s[n] <= '9' {
			n++
		}
		l, err := strconv.Atoi(s[:n])
		if err != nil || l <= 0 || l > len(s)-n {
			return "", false
		}
		parts, s = append(parts, s[n:n+l]), s[n+l:]
	}
	if s == "" || len(s) > 1 && s[1] != '.' || len(parts) < 2 || !isRustHash(parts[len(parts)-1]) {
		return "", false
	}
	var b strings.Builder
	for i, p := range parts[:len(parts)-1] {
		if i > 0 {
			b.WriteString("::")
		}
		if !rustLegacyIdent(&b, p) {
			return "", false
		}
	}
	return b.String(), true
}

func isRustHash(s string) bool {
	if len(s) != 17 || s[0] != 'h' {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

var rustEscapes = map[string]string{"SP": "@", "BP": "*", "RF": "&", "LT": "<", "GT": ">", "LP": "(", "RP": ")", "C": ","}

// rustLegacyIdent writes one identifier with its `$…$` escapes and `..`
// decoded; it reports false on an escape it does not know.
func rustLegacyIdent(b *strings.Builder, s string) bool {
	if strings.HasPrefix(s, "_$") {
		s = s[1:]
	}
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, ".."):
			b.WriteString("::")
			s = s[2:]
		case s[0] == '$':
			end := strings.IndexByte(s[1:], '$')
			if end < 0 {
				return false
			}
			esc := s[1 : 1+end]
			if r, ok := rustEscapes[esc]; ok {
				b.WriteString(r)
			} else if v, err := strconv.ParseUint(strings.TrimPrefix(esc, "u"), 16, 32); err == nil && strings.HasPrefix(esc, "u") && utf8.ValidRune(rune(v)) {
				b.WriteRune(rune(v))
			} else {
				return false
			}
			s = s[2+end:]
		default:
			b.WriteByte(s[0])
			s = s[1:]
		}
	}
	return true
}
