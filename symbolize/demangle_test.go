package symbolize

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ianlancetaylor/demangle"
)

// tool finds a program on $PATH or in ~/.cargo/bin, or skips the test.
func tool(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, ".cargo", "bin", name); fileExists(p) {
			return p
		}
	}
	t.Skipf("%s is not installed", name)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// binaries holds the programs buildBinary compiled, by compiler, source
// and arguments: each is compiled once per test binary.
var binaries struct {
	sync.Mutex
	m map[string]*builtBinary
}

type builtBinary struct {
	once     sync.Once
	bin, err string
}

// buildBinary compiles testdata/src with a real compiler, once per test
// binary for the same compiler and args, and returns the binary's path.
// The binary is shared: tests must not change it.
func buildBinary(t *testing.T, compiler, src string, args ...string) string {
	t.Helper()
	cc := tool(t, compiler)
	key := strings.Join(append([]string{cc, src}, args...), "\x00")
	binaries.Lock()
	if binaries.m == nil {
		binaries.m = map[string]*builtBinary{}
	}
	b := binaries.m[key]
	if b == nil {
		b = &builtBinary{}
		binaries.m[key] = b
	}
	binaries.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp(testDir, "bin")
		if err != nil {
			b.err = err.Error()
			return
		}
		out := filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src)))
		cmd := exec.Command(cc, append(args, "-o", out, filepath.Join("testdata", src))...)
		if o, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Sprintf("%s %s: %v\n%s", compiler, src, err, o)
			return
		}
		b.bin = out
	})
	if b.err != "" {
		t.Fatal(b.err)
	}
	return b.bin
}

// funcSymbols returns the mangled function symbols of an ELF binary that
// start with one of the prefixes.
func funcSymbols(t *testing.T, bin string, prefixes ...string) []string {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var names []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || seen[s.Name] {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(s.Name, p) {
				seen[s.Name] = true
				names = append(names, s.Name)
				break
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s has no %v symbols", bin, prefixes)
	}
	return names
}

// cxxfilt demangles names with binutils' c++filt, the toolchain's own
// demangler (it reads C++, Rust legacy and Rust v0), one name a line.
func cxxfilt(t *testing.T, names []string) []string {
	t.Helper()
	cmd := exec.Command(tool(t, "c++filt"))
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("c++filt: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		t.Fatalf("c++filt printed %d lines for %d names", len(lines), len(names))
	}
	return lines
}

// TestDemangleCxx demangles every C++ function of a program built by g++:
// the library's full form must be c++filt's, and Demangle's form must be
// the function's name as it appears in c++filt's, without the parameters.
func TestDemangleCxx(t *testing.T) {
	bin := buildBinary(t, "g++", "demangle.cpp", "-O0")
	names := funcSymbols(t, bin, "_Z")
	ref := cxxfilt(t, names)
	got := map[string]bool{}
	for i, sym := range names {
		sym, version, _ := strings.Cut(sym, "@") // imports: `_Znwm@GLIBCXX_3.4`
		if version != "" {
			ref[i] = strings.TrimSuffix(ref[i], "@"+version)
			if d, ok := Demangle(names[i]); !ok || !strings.HasSuffix(d, "@"+version) {
				t.Errorf("Demangle(%s) = %q, %v: lost the version", names[i], d, ok)
			}
		}
		full, err := demangle.ToString(sym)
		if err != nil || full != ref[i] {
			t.Errorf("full %s = %q, %v; c++filt %q", sym, full, err, ref[i])
		}
		d, ok := Demangle(sym)
		if !ok || !strings.Contains(ref[i], d) || strings.HasSuffix(d, ")") && !strings.HasSuffix(d, "operator()") {
			t.Errorf("Demangle(%s) = %q, %v: not c++filt's %q without parameters", sym, d, ok, ref[i])
		}
		got[d] = true
	}
	// The functions of demangle.cpp: overloads share a name, template
	// instances and the lambda keep theirs.
	for _, want := range []string{"shapes::Widget::frob", "twice<int>", "twice<double>", "spin", "main::{lambda(int)#1}::operator()"} {
		if !got[want] {
			t.Errorf("no function demangled to %q", want)
		}
	}
}

var (
	rustHashRef = regexp.MustCompile(`::h[0-9a-f]{16}$`)
	// c++filt prints v0 crate disambiguators, `core[c1f1a4ba060b9bfa]`, and
	// the types of const generic arguments, `<4: usize>`; rustc-demangle's
	// default form, like the library's, leaves both out.
	rustDisamb    = regexp.MustCompile(`\[[0-9a-f]+\]`)
	rustConstType = regexp.MustCompile(`(\b\d+|'.'|true|false): [iu](?:8|16|32|64|128|size)\b|(\btrue|\bfalse): bool\b|('.'): char\b`)
)

// TestDemangleRustLegacy demangles every legacy-mangled function of a
// program built by rustc (legacy is stable's default; requesting it by name
// needs -Z unstable-options) against c++filt without the `::h<hash>`.
func TestDemangleRustLegacy(t *testing.T) {
	bin := buildBinary(t, "rustc", "demangle.rs")
	names := funcSymbols(t, bin, "_ZN")
	ref := cxxfilt(t, names)
	n := 0
	for i, sym := range names {
		if !rustHashRef.MatchString(ref[i]) {
			continue // a C++ symbol from the C runtime
		}
		n++
		want := rustHashRef.ReplaceAllString(ref[i], "")
		if d, ok := Demangle(sym); !ok || d != want {
			t.Errorf("Demangle(%s) = %q, %v; c++filt %q", sym, d, ok, want)
		}
	}
	if n == 0 {
		t.Fatal("no Rust legacy symbols")
	}
	d, _ := Demangle(names[0])
	t.Logf("%d Rust legacy names, e.g. %s -> %s", n, names[0], d)
}

// rustV0Known erases the two differences from c++filt found in the
// library's v0 output on std's symbols (demangle v0.0.0-20260724033716):
// after a backref it drops a trailing `()` generic argument and misnumbers
// nested closures (`{closure#0}::{closure#1}::{closure#0}` for c++filt's
// `{closure#0}::{closure#0}::{closure#1}`).
var rustV0Known = strings.NewReplacer(", ()>", ">", "#0}", "}", "#1}", "}", "#2}", "}", "#3}", "}")

// TestDemangleRustV0 does the same for a program built with
// -C symbol-mangling-version=v0 (stable accepts v0): the test program's own
// functions exactly, std's up to the library's known differences.
func TestDemangleRustV0(t *testing.T) {
	bin := buildBinary(t, "rustc", "demangle.rs", "-C", "symbol-mangling-version=v0")
	names := funcSymbols(t, bin, "_R")
	ref := cxxfilt(t, names)
	own, known := 0, 0
	for i, sym := range names {
		want := rustConstType.ReplaceAllString(rustDisamb.ReplaceAllString(ref[i], ""), "$1$2$3")
		d, ok := Demangle(sym)
		mine := strings.Contains(want, "demangle::")
		if mine {
			own++
		}
		switch {
		case ok && d == want:
		case ok && !mine && rustV0Known.Replace(d) == rustV0Known.Replace(want):
			known++
			t.Logf("known library difference: %s = %q; c++filt %q", sym, d, want)
		default:
			t.Errorf("Demangle(%s) = %q, %v; c++filt %q", sym, d, ok, want)
		}
	}
	if own == 0 {
		t.Fatal("no v0 symbols of the test program")
	}
	t.Logf("%d Rust v0 names, %d of the test program, %d with known differences", len(names), own, known)
}

// TestDemangleRustV0Backtrace compares Demangle with Rust's own backtrace
// (std demangles with rustc-demangle) on a frame whose v0 name holds a path
// segment without a name: `apply` instantiated with a tuple struct's
// constructor, whose segment the library printed as `Thing<u64>::`.
func TestDemangleRustV0Backtrace(t *testing.T) {
	bin := buildBinary(t, "rustc", "demangle.rs", "-C", "symbol-mangling-version=v0")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "DEMANGLE_BACKTRACE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	want := ""
	for _, line := range strings.Split(string(out), "\n") {
		if _, name, ok := strings.Cut(strings.TrimSpace(line), ": "); ok && strings.HasPrefix(name, "demangle::apply::") {
			want = name
			break
		}
	}
	if want == "" {
		t.Fatalf("no demangle::apply frame in the program's backtrace:\n%s", out)
	}
	var sym string
	for _, s := range funcSymbols(t, bin, "_R") {
		if strings.Contains(s, "5apply") {
			sym = s
		}
	}
	if d, ok := Demangle(sym); !ok || d != want {
		t.Errorf("Demangle(%s) = %q, %v; the backtrace prints %q", sym, d, ok, want)
	}
}

// TestDemangleRustV0EmptySegment: rand's thread-local key closure, built by
// an older rustc whose anonymous consts were the unnamed namespace `k`,
// demangles as c++filt prints it without crate disambiguators, the form
// Rust's backtraces print.
func TestDemangleRustV0EmptySegment(t *testing.T) {
	const sym = "_RNCNkNvNtNtCsiznFMVuT3yX_4rand4rngs6thread14THREAD_RNG_KEY00B9_"
	want := rustDisamb.ReplaceAllString(cxxfilt(t, []string{sym})[0], "")
	if want != "rand::rngs::thread::THREAD_RNG_KEY::{closure#0}" {
		t.Fatalf("c++filt prints %q", want)
	}
	if d, ok := Demangle(sym); !ok || d != want {
		t.Errorf("Demangle(%s) = %q, %v; want %q", sym, d, ok, want)
	}
	for _, c := range [][2]string{
		{"a::b::::{closure#0}", "a::b::{closure#0}"},
		{"a::Thing::<u64>::", "a::Thing::<u64>"},
		{"<a::Thing<u64>:: as a::F<(u64,)>>::call", "<a::Thing<u64> as a::F<(u64,)>>::call"},
		{"a::apply::<a::Thing<u64>::>", "a::apply::<a::Thing<u64>>"},
		{"a::b::::::c", "a::b::c"},
		{"<a::T as a::Tr>::m::<b::C>", "<a::T as a::Tr>::m::<b::C>"},
	} {
		if got := dropEmptySegments(c[0]); got != c[1] {
			t.Errorf("dropEmptySegments(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// TestDemangleWrapped checks that the prefixes and suffixes profile writers
// put around a symbol survive, on a symbol of the g++-built program, and
// that names that are not mangled, or are mangled wrongly, stay as they are.
func TestDemangleWrapped(t *testing.T) {
	bin := buildBinary(t, "g++", "demangle.cpp", "-O0")
	var sym string
	for _, s := range funcSymbols(t, bin, "_ZN6shapes") {
		sym = s
	}
	d, ok := Demangle(sym)
	if !ok || strings.HasPrefix(d, "_Z") {
		t.Fatalf("Demangle(%s) = %q, %v", sym, d, ok)
	}
	for _, w := range [][2]string{
		{"demo!", ""}, {"[demo] ", ""}, {"libdemo.so.6.", ""}, {"", "+0x1f"}, {"", "@plt"},
		{"", "_[k]"}, {"", ".cold"}, {"", ".isra.0"}, {"libdemo.so!", "+0x4"},
	} {
		want := w[0] + d + w[1]
		if w[1] == ".cold" || w[1] == ".isra.0" {
			want = w[0] + d // clone suffixes are dropped
		}
		if got, ok := Demangle(w[0] + sym + w[1]); !ok || got != want {
			t.Errorf("Demangle(%q) = %q, %v; want %q", w[0]+sym+w[1], got, ok, want)
		}
	}
	for _, name := range []string{
		"main.main", "runtime.mallocgc", "_rt0_amd64_linux", "__GI___futex_abstimed_wait_cancelable64",
		"libc.so.6.__GI___futex_abstimed_wait_cancelable64", "[unknown]", "", "java/lang/Thread.run",
		"shapes::Widget::frob", "_Z", "_RNvC", "a b!_ZN3fooEv", "x._ZN3fooEv", sym[:12],
	} {
		if got, ok := Demangle(name); ok || got != name {
			t.Errorf("Demangle(%q) = %q, %v; want it unchanged", name, got, ok)
		}
	}
}

func FuzzDemangle(f *testing.F) {
	for _, s := range []string{"_ZN6shapes6Widget4frobEi", "_ZN8demangle4main17h661d12b43ba68802E", "_RNvCs9I9vJlNpqqJ_8demangle4main", "lib.so!_Z3fooi+0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		d, ok := Demangle(name)
		if !ok && d != name {
			t.Fatalf("Demangle(%q) = %q, false: changed", name, d)
		}
	})
}
