// Package symbolize turns profile locations into frame names and normalizes
// those names so that the same function matches across builds, runtimes and
// profile writers.
//
// Two operations matter to the rest of profdiff:
//
//   - [Normalize] rewrites a frame name into the form the classification rules
//     and the method table use: it strips writer decorations (TraceEvent's
//     `Module!` prefix, perf-map's `[module] ` prefix, a shared object's
//     name joined by a dot (`libc.so.6.__poll`), trailing parameter lists,
//     glibc `@@GLIBC_x` and `@GLIBC_x` version tags and `__GI_` aliases, Rust `::h<hash>`
//     suffixes, async-profiler `_[j]` annotations) and turns JVM slashes into
//     dots. Go names are never rewritten beyond that: `internal/sync.` keeps
//     its slash.
//   - [MatchKey] reduces a name to the identity used to notice that a method
//     moved between modules, e.g. native `SystemNative_WaitForSocketEvents`
//     and managed `Interop+Sys.WaitForSocketEvents` both become
//     `WaitForSocketEvents`.
package symbolize

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

var (
	rustHash     = regexp.MustCompile(`::h[0-9a-f]{16}$`)
	asyncProfTag = regexp.MustCompile(`_\[[jikI0-9]\]$`)
	moduleBang   = regexp.MustCompile(`^([A-Za-z0-9_.\-]+)!(.+)$`)
	perfMapMod   = regexp.MustCompile(`^\[([^\]]+)\] (.+)$`)
	// soModDot is a shared object's name joined to the symbol by a dot
	// (`libc.so.6.__GI___futex_abstimed_wait_cancelable64`,
	// `libc-2.19.so.__poll`), as some native profilers write it.
	soModDot = regexp.MustCompile(`^([A-Za-z0-9_+\-]+(?:[.\-][0-9]+)*\.so(?:\.[0-9]+)*)\.([A-Za-z_].*)$`)
	// symVersion is an ELF symbol version (`@@GLIBC_2.2.5`, or
	// `@GLIBC_2.2.5` for a non-default version, as perf writes
	// clock_nanosleep).
	symVersion = regexp.MustCompile(`@@?[A-Za-z][A-Za-z0-9_]*_[0-9][0-9.]*$`)
	// moduleTick is DTrace's module`function (`libc.so.6`read`,
	// `server`main`), as stackcollapse.pl keeps it: a module without dots
	// or a shared object, and a name that starts as an identifier, never
	// .NET's generic arity (`Task`1.Process`).
	moduleTick = regexp.MustCompile("^([A-Za-z0-9_+\\-]+(?:\\.so(?:\\.[0-9]+)*|\\.dylib|\\.dll)?)`([A-Za-z_].*)$")
	// dsoSuffix is a symbol followed by its object's path in parentheses
	// (`__futex_abstimed_wait_cancelable64 (/usr/lib/x86_64-linux-gnu/libc.so.6)`),
	// as perf script and gdb print frames.
	dsoSuffix = regexp.MustCompile(`^(\S.*?) \((/[^()]+)\)$`)

	// Build variants: parts of a name that differ between two builds or
	// runs of the same code (see buildVariants).
	cClone       = regexp.MustCompile(`(?:\.(?:isra|part|constprop|lto_priv|llvm|localalias)\.[0-9]+|\.cold(?:\.[0-9]+)?)+$`)
	jvmLambda    = regexp.MustCompile(`\$\$Lambda(?:\$[0-9]+)?(?:\+0x[0-9a-f]+)?(?:/(?:0x)?[0-9a-f]+)?`)
	jvmAccess    = regexp.MustCompile(`\b(Generated(?:Serialization|Constructor)?(?:Method)?Accessor)[0-9]+\b`)
	jvmCGLIB     = regexp.MustCompile(`\$\$(EnhancerBySpringCGLIB|FastClassBySpringCGLIB|EnhancerByCGLIB|SpringCGLIB)\$\$[0-9a-f]+`)
	dotnetTier   = regexp.MustCompile(`\[(?:MinOptJitted|Optimized|QuickJitted|OptimizedTier1|OptimizedTier1OSR|InstrumentedTier|InstrumentedTierOptimized|PreJIT|PreJit-cold|Tier0|Tier1)\]$`)
	v8Marker     = regexp.MustCompile(`^(JS|LazyCompile|Function):[~^+*]`)
	rustDisambig = regexp.MustCompile(`\[[0-9a-f]{16}\]`)
)

// SplitModule separates a module prefix written into a frame name by
// TraceEvent (`System.Private.CoreLib!System.Threading.Monitor.Wait`), by
// perf-map based tools (`[libc.so.6] __lll_lock_wait`) or joined by a dot
// to a shared object's name (`libc.so.6.__GI___poll`). It returns the
// module ("" when there is none) and the rest of the name unchanged.
//
// Each pattern is tried only when the name holds the literal it cannot
// match without (a '!', a leading '[', ".so", a '`', " (/" and a closing
// ')'): most names hold none, and a regexp costs microseconds a name.
func SplitModule(name string) (module, rest string) {
	if strings.IndexByte(name, '!') > 0 {
		if m := moduleBang.FindStringSubmatch(name); m != nil {
			return m[1], m[2]
		}
	}
	if strings.HasPrefix(name, "[") {
		if m := perfMapMod.FindStringSubmatch(name); m != nil {
			return m[1], m[2]
		}
	}
	if strings.Contains(name, ".so") {
		if m := soModDot.FindStringSubmatch(name); m != nil {
			return m[1], m[2]
		}
	}
	if strings.IndexByte(name, '`') > 0 {
		if m := moduleTick.FindStringSubmatch(name); m != nil {
			return m[1], m[2]
		}
	}
	if strings.HasSuffix(name, ")") && strings.Contains(name, " (/") {
		if m := dsoSuffix.FindStringSubmatch(name); m != nil {
			return path.Base(m[2]), m[1]
		}
	}
	return "", name
}

// Normalize returns the canonical form of a frame name (see the package
// comment). It is idempotent: Normalize(Normalize(s)) == Normalize(s).
func Normalize(name string) string {
	_, s := SplitModule(strings.TrimSpace(name))
	if i := strings.Index(s, "@@"); i > 0 {
		s = s[:i]
	} else if strings.IndexByte(s, '@') >= 0 {
		if i := symVersion.FindStringIndex(s); i != nil && i[0] > 0 {
			s = s[:i[0]]
		}
	}
	s = strings.TrimPrefix(s, "__GI_")
	if strings.Contains(s, "::h") {
		s = rustHash.ReplaceAllString(s, "")
	}
	if strings.HasSuffix(s, "]") {
		s = asyncProfTag.ReplaceAllString(s, "")
	}
	s = stripParams(s)
	if isJVMSlashName(s) {
		s = strings.ReplaceAll(s, "/", ".")
	}
	return buildVariants(s)
}

// buildVariants removes what differs between two builds or runs of the
// same code, so that they diff as one method (the displayed name keeps
// what the profile said):
//
//   - C and C++ compiler clones, `.isra.0`, `.part.45`, `.constprop.2`,
//     `.lto_priv.0` and the cold part `.cold`: the clone is the function's
//     code, and the hot and cold parts merge. Only on a C name (no dot
//     before the suffix) or a C++ one (with `::`), never on qualified Go
//     or JVM names (`github.com/x/y.cold` is a function called cold; a
//     Go `main.cold` cannot be told from C's `main.cold` and is keyed
//     `main`).
//   - JVM hidden classes and generated accessors, whose numbers and
//     addresses are per run: `$$Lambda$92+0x00007f59f0009800/26728049`,
//     `$$Lambda/0x000001f8010c6a18` → `$$Lambda`,
//     `GeneratedMethodAccessor123` → `GeneratedMethodAccessor`, Spring's
//     `$$EnhancerBySpringCGLIB$$1a2b3c` → `$$EnhancerBySpringCGLIB`.
//   - .NET JIT tiers that perf maps append (`[OptimizedTier1]`,
//     `[QuickJitted]`, `[PreJIT]`): one method at any tier.
//   - V8's tier marker after `JS:` (`~` interpreted, `^` Sparkplug, `+`
//     Maglev, `*` TurboFan).
//   - Rust crate disambiguators, `r[20c418149eb3754d]::f` (c++filt's v0
//     form), like the legacy `::h<hash>` suffix above.
//
// Not merged: Go generic shapes (`Sum[go.shape.int]` and
// `Sum[go.shape.float64]` are different code, and runtime/pprof and the
// binary's symbol table both name them so). Go closures keep their numbers (`func1`, `gowrap2`): two
// closures of one function are different code, and the diff pairs
// renumbered ones by what they call instead (package diff). Package,
// namespace, receiver and overload qualifiers are never dropped.
func buildVariants(s string) string {
	if cloneLiteral(s) {
		if i := cClone.FindStringIndex(s); i != nil && i[0] > 0 && (!strings.Contains(s[:i[0]], ".") || strings.Contains(s[:i[0]], "::")) {
			s = s[:i[0]]
		}
	}
	if strings.Contains(s, "$$") {
		s = jvmLambda.ReplaceAllString(s, "$$$$Lambda")
		s = jvmCGLIB.ReplaceAllString(s, "$$$$$1")
	}
	if strings.Contains(s, "Accessor") {
		s = jvmAccess.ReplaceAllString(s, "$1")
	}
	if strings.HasSuffix(s, "]") {
		if i := dotnetTier.FindStringIndex(s); i != nil && i[0] > 0 {
			s = strings.TrimRight(s[:i[0]], " ")
		}
	}
	if strings.HasPrefix(s, "JS:") || strings.HasPrefix(s, "LazyCompile:") || strings.HasPrefix(s, "Function:") {
		s = v8Marker.ReplaceAllString(s, "$1:")
	}
	if strings.Contains(s, "::") && strings.Contains(s, "[") {
		s = rustDisambig.ReplaceAllString(s, "")
	}
	return s
}

// cloneLiteral reports whether s holds a literal cClone cannot match
// without, so that the regexp runs only on names that may be clones. It
// looks at each dot once, where seven searches of the name took seven
// passes.
func cloneLiteral(s string) bool {
	for i := strings.IndexByte(s, '.'); i >= 0; {
		rest := s[i:]
		for _, lit := range cloneLiterals {
			if strings.HasPrefix(rest, lit) {
				return true
			}
		}
		j := strings.IndexByte(s[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// cloneLiterals are the literals cloneLiteral looks for.
var cloneLiterals = []string{".isra.", ".part.", ".constprop.", ".lto_priv.", ".llvm.", ".localalias.", ".cold"}

// stripParams removes a trailing parameter list such as `(int, string)` or
// `(class System.Object)`. Go's receiver syntax `sync.(*Mutex).Lock` never
// ends in a parenthesis, and a parenthesis directly after a dot (`pkg.(*T)`)
// is a receiver, not a parameter list, so both are left alone.
func stripParams(s string) string {
	i := FinalGroup(s)
	// "pkg.(*T)" is a Go receiver and "Thread (1234)" a TraceEvent thread
	// label: neither is a parameter list.
	if i <= 0 || s[i-1] == '.' || s[i-1] == ' ' {
		return s
	}
	return strings.TrimRight(s[:i], " ")
}

// FinalGroup returns the index of the '(' that opens the balanced
// parenthesized group s ends with, or -1 when s does not end in one:
// `f(a, (b))` → 1. Callers decide what the group is (a parameter list, a
// perf script dso).
func FinalGroup(s string) int {
	if !strings.HasSuffix(s, ")") {
		return -1
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isJVMSlashName reports whether s looks like an async-profiler JVM name such
// as `java/util/concurrent/locks/ReentrantLock.lock`: slash-separated package
// segments followed by a class name that starts with an upper-case letter.
// Go import paths (`net/http.(*conn).serve`) continue with a lower-case
// package name after the last slash and are not touched.
func isJVMSlashName(s string) bool {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 || i+1 >= len(s) {
		return false
	}
	if strings.ContainsAny(s[:i], ".() ") {
		return false
	}
	c := s[i+1]
	return c >= 'A' && c <= 'Z'
}

// MatchKey returns the name a method is known by independent of the module or
// interop layer it lives in: the last member of a managed name (after `.`,
// `+` or `::`), with the `SystemNative_` export prefix of .NET's native shims
// removed. Two methods with equal MatchKeys in different modules are taken to
// be the same code that moved.
func MatchKey(name string) string {
	s := Normalize(name)
	if i := strings.LastIndexAny(s, ".+:"); i >= 0 && i+1 < len(s) {
		s = s[i+1:]
	}
	s = strings.TrimPrefix(s, "SystemNative_")
	return s
}

// IsNativeModule reports whether a module name denotes native code: a shared
// library or executable (`libSystem.Native.so`, `libc.so.6`, `kernel.dll`
// is not distinguishable from a managed `.dll`, so only names starting with
// `lib` or ending in `.so`/`.so.N`/`.dylib` count, plus `[kernel.kallsyms]`).
func IsNativeModule(module string) bool {
	if module == "" {
		return false
	}
	base := path.Base(module)
	switch {
	case strings.HasPrefix(base, "lib"), strings.Contains(base, ".so"),
		strings.HasSuffix(base, ".dylib"), strings.Contains(base, "kernel"),
		strings.Contains(base, "vmlinux"):
		return true
	}
	return false
}

// ModuleLabel is how a note names a module: "native" for native libraries,
// else the module's base name.
func ModuleLabel(module string) string {
	if IsNativeModule(module) {
		return "native"
	}
	if module == "" {
		return "unknown module"
	}
	return path.Base(module)
}

// Frame is one frame of a stack as profdiff sees it: a display name and the
// module it came from ("" when unknown).
type Frame struct {
	Name   string
	Module string
	File   string // the function's source file (Function.Filename); "" for an address
}

// LocationFrames appends the frames of one location to dst, innermost
// (inlined) frame first, as pprof orders Location.Line. A location without
// symbol information becomes one frame named by its address, relative to its
// mapping when the mapping is known (`libfoo.so+0x1a2b`), so unsymbolized
// profiles still diff by address instead of failing.
func LocationFrames(dst []Frame, loc *pprofile.Location) []Frame {
	module := ""
	if loc.Mapping != nil {
		module = path.Base(loc.Mapping.File)
	}
	named := false
	for _, ln := range loc.Line {
		if ln.Function == nil || ln.Function.Name == "" {
			continue
		}
		named = true
		mod, name := SplitModule(ln.Function.Name)
		if mod == "" {
			mod = module
		}
		dst = append(dst, Frame{Name: name, Module: mod, File: ln.Function.Filename})
	}
	if !named {
		dst = append(dst, Frame{Name: AddressName(loc), Module: module})
	}
	return dst
}

// AddressName names an unsymbolized location by its address.
func AddressName(loc *pprofile.Location) string {
	if m := loc.Mapping; m != nil && m.File != "" && loc.Address >= m.Start && loc.Address < m.Limit {
		return fmt.Sprintf("%s+0x%x", path.Base(m.File), loc.Address-m.Start+m.Offset)
	}
	return fmt.Sprintf("0x%x", loc.Address)
}

// ClosureFamily returns a Go closure's name with its numbers replaced by
// '#' (`main.run.func2` → `main.run.func#`, `main.run.gowrap1` →
// `main.run.gowrap#`) and true, or "" and false for a name that is no
// closure. Closures of one family are numbered in source order, so
// inserting one renumbers those after it; package diff pairs the members
// of a family across builds by what they call.
func ClosureFamily(name string) (string, bool) {
	if !strings.Contains(name, "func") && !strings.Contains(name, "wrap") && !strings.Contains(name, "-range") {
		return "", false // three vector searches: most names are no closure
	}
	var b strings.Builder
	last := 0
	for m := nextClosure(name, 0); m[0] >= 0; m = nextClosure(name, m[1]) {
		if m[1] < len(name) && name[m[1]] != '.' && name[m[1]] != '-' {
			continue // main.func1x is a function, not a closure
		}
		seg := name[m[0]:m[1]]
		b.WriteString(name[last:m[0]])
		switch {
		case strings.HasPrefix(seg, ".func"):
			b.WriteString(".func#")
		case strings.HasPrefix(seg, ".gowrap"):
			b.WriteString(".gowrap#")
		case strings.HasPrefix(seg, ".deferwrap"):
			b.WriteString(".deferwrap#")
		default:
			b.WriteString("-range#")
		}
		last = m[1]
	}
	if last == 0 {
		return "", false
	}
	b.WriteString(name[last:])
	return b.String(), true
}

// nextClosure finds the first Go closure numbering in name at or after
// from, as the expression
//
//	\.(?:func|gowrap|deferwrap)[0-9]+(?:\.[0-9]+)*|-range[0-9]+
//
// finds it (func literals, `func1` and nested `func1.2`, go and defer
// wrappers, range-over-func bodies): its start and end, or -1, -1. Every
// function name meets it once, where the expression cost a closure's name
// some 2 µs (TestNextClosureIsTheExpression holds it to that).
func nextClosure(name string, from int) [2]int {
	for i := from; i < len(name); i++ {
		c := name[i]
		if c != '.' && c != '-' {
			continue
		}
		var body int // where the digits start
		switch {
		case c == '.' && strings.HasPrefix(name[i+1:], "func"):
			body = i + 5
		case c == '.' && strings.HasPrefix(name[i+1:], "gowrap"):
			body = i + 7
		case c == '.' && strings.HasPrefix(name[i+1:], "deferwrap"):
			body = i + 10
		case c == '-' && strings.HasPrefix(name[i+1:], "range"):
			if e := digitsEnd(name, i+6); e > i+6 {
				return [2]int{i, e}
			}
			continue
		default:
			continue
		}
		e := digitsEnd(name, body)
		if e == body {
			continue
		}
		for e < len(name) && name[e] == '.' {
			f := digitsEnd(name, e+1)
			if f == e+1 {
				break
			}
			e = f
		}
		return [2]int{i, e}
	}
	return [2]int{-1, -1}
}

// digitsEnd is the end of the run of ASCII digits in s at i.
func digitsEnd(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
