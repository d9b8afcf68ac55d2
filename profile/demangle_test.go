package profile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/symbolize"
)

// nativeTool finds a compiler or profiler on $PATH or in ~/.cargo/bin, or
// skips the test saying which is missing.
func nativeTool(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	home, _ := os.UserHomeDir()
	if p := filepath.Join(home, ".cargo", "bin", name); home != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("%s is not installed", name)
	return ""
}

// buildNative compiles ../symbolize/testdata/src into the binary out.
func buildNative(t testing.TB, out, compiler, src string, args ...string) string {
	t.Helper()
	args = append(args, "-o", out, filepath.Join("..", "symbolize", "testdata", src))
	if b, err := exec.Command(nativeTool(t, compiler), args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, src, err, b)
	}
	return out
}

// mangledSymbols returns up to n distinct mangled names of the functions
// binutils' nm lists as defined in an ELF binary, those of the program's
// own code (containing own) first.
func mangledSymbols(t testing.TB, bin, own string, n int) []string {
	t.Helper()
	out, err := exec.Command(nativeTool(t, "nm"), "--defined-only", bin).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", bin, err)
	}
	var mine, rest []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line) // address, type, name
		if len(fields) != 3 || !strings.ContainsAny(fields[1], "TtWw") || seen[fields[2]] {
			continue
		}
		if name := fields[2]; strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R") {
			seen[name] = true
			if strings.Contains(name, own) {
				mine = append(mine, name)
			} else {
				rest = append(rest, name)
			}
		}
	}
	if len(mine) == 0 {
		t.Fatalf("%s has no mangled symbols of %q", bin, own)
	}
	return append(mine, rest...)[:min(n, len(mine)+len(rest))]
}

// checkDemangled checks every function of a loaded profile: one whose
// system name is mangled has the demangled name, and the mangled names
// given must all have been seen.
func checkDemangled(t *testing.T, l *Loaded, mangled []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range l.Profile.Function {
		sys := f.SystemName
		if !strings.Contains(sys, "_Z") && !strings.Contains(sys, "_R") {
			continue
		}
		want, ok := symbolize.Demangle(sys)
		if !ok {
			continue
		}
		if f.Name != want {
			t.Errorf("%s: function %q (system name %q), want %q", l.Source, f.Name, sys, want)
		}
		seen[sys] = true
	}
	for _, m := range mangled {
		if !seen[m] {
			t.Errorf("%s: no function with system name %q", l.Source, m)
		}
	}
}

// TestDemangleFolded loads folded stacks written from the symbols of
// programs g++ and rustc (legacy and v0 mangling) build here, frames with
// and without a module prefix.
func TestDemangleFolded(t *testing.T) {
	dir := t.TempDir()
	bins := []struct{ bin, own string }{
		{buildNative(t, filepath.Join(dir, "cpp"), "g++", "demangle.cpp", "-O0"), "shapes"},
		{buildNative(t, filepath.Join(dir, "legacy"), "rustc", "demangle.rs"), "8demangle"},
		{buildNative(t, filepath.Join(dir, "v0"), "rustc", "demangle.rs", "-C", "symbol-mangling-version=v0"), "8demangle"},
	}
	var text strings.Builder
	var all []string
	for i, b := range bins {
		syms := mangledSymbols(t, b.bin, b.own, 30)
		all = append(all, syms...)
		for j, s := range syms {
			mod := ""
			if j%2 == 1 {
				mod = fmt.Sprintf("libdemo%d.so!", i)
			}
			fmt.Fprintf(&text, "main;%s%s;%s %d\n", mod, s, syms[(j+1)%len(syms)], j+1)
		}
	}
	// Cut short, a symbol cannot be demangled: it loads as it is.
	bad := all[0][:8]
	fmt.Fprintf(&text, "main;%s 1\n", bad)
	l, err := Parse("native.folded", []byte(text.String()), 0)
	if err != nil {
		t.Fatal(err)
	}
	checkDemangled(t, l, all)
	if !slices.ContainsFunc(l.Profile.Function, func(f *pprofile.Function) bool { return f.Name == bad && f.SystemName == bad }) {
		t.Errorf("no function %q kept as it was", bad)
	}
	for _, f := range l.Profile.Function {
		if strings.HasPrefix(f.Name, "libdemo") {
			t.Errorf("module prefix left in the name: %q", f.Name)
		}
	}
}

// TestDemanglePprof loads a pprof profile whose functions carry mangled
// names of the g++-built program, one with a system name of its own that
// must stay.
func TestDemanglePprof(t *testing.T) {
	syms := mangledSymbols(t, buildNative(t, filepath.Join(t.TempDir(), "cpp"), "g++", "demangle.cpp", "-O0"), "shapes", 20)
	p := &pprofile.Profile{SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}}, Period: 1, PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}}
	for i, s := range syms {
		f := &pprofile.Function{ID: uint64(i + 1), Name: s, SystemName: s}
		if i == 0 {
			f.SystemName = "kept"
		}
		loc := &pprofile.Location{ID: uint64(i + 1), Line: []pprofile.Line{{Function: f}}}
		p.Function, p.Location = append(p.Function, f), append(p.Location, loc)
		p.Sample = append(p.Sample, &pprofile.Sample{Location: []*pprofile.Location{loc}, Value: []int64{int64(i + 1)}})
	}
	l, err := Parse("native.pb.gz", encodeT(t, p, true), 0)
	if err != nil {
		t.Fatal(err)
	}
	checkDemangled(t, l, syms[1:])
	if f := l.Profile.Function[0]; f.SystemName != "kept" || strings.HasPrefix(f.Name, "_Z") {
		t.Errorf("function 1: name %q, system name %q; want it demangled and %q kept", f.Name, f.SystemName, "kept")
	}
}

// TestDemanglePerfScript records programs built by g++ and rustc (legacy
// and v0 mangling) with perf and reads `perf script --no-demangle` (what a
// perf without demangling support prints): their frames get the names that
// perf's own demangling, read by the perf script reader, gives them, and
// keep the mangled system name. Names with a parenthesis are the
// exception: the reader cuts perf's `main::{lambda(int)#1}::operator()(int)
// const` and `std::rt::lang_start::<()>` at their first `(`.
func TestDemanglePerfScript(t *testing.T) {
	perf := nativeTool(t, "perf")
	for _, c := range []struct {
		name, compiler, src string
		args, want          []string
	}{
		{"cpp", "g++", "demangle.cpp", []string{"-O0"}, []string{"spin", "twice<int>", "shapes::Widget::frob", "main"}},
		{"legacy", "rustc", "demangle.rs", []string{"-C", "force-frame-pointers=yes"}, []string{"demangle::compute", "demangle::shapes::Thing<T>::double"}},
		{"v0", "rustc", "demangle.rs", []string{"-C", "force-frame-pointers=yes", "-C", "symbol-mangling-version=v0"}, []string{"demangle::compute", "<demangle::shapes::Thing<u64>>::double"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin := buildNative(t, filepath.Join(dir, c.name), c.compiler, c.src, c.args...)
			data := filepath.Join(dir, "perf.data")
			if out, err := perfRecord(perf, "-q", "-e", "cpu-clock", "-g", "-o", data, bin, "run"); err != nil {
				t.Skipf("perf record cannot record here: %v: %s", err, out)
			}
			mangled, byPerf := perfFrames(t, perf, data, c.name, "--no-demangle"), perfFrames(t, perf, data, c.name)
			for _, want := range c.want {
				if _, ok := mangled[want]; !ok {
					t.Errorf("no frame %q in %v", want, mangled)
				}
			}
			aliased := aliasedSymbols(t, bin)
			for name, sys := range mangled {
				if aliased[sys] {
					// Folded code (Rust's <usize as Display>::fmt and
					// <u64 as Display>::fmt share an address): perf may
					// name the address by either symbol, and did by
					// another with and without --no-demangle.
					continue
				}
				if _, ok := byPerf[name]; !ok && !strings.Contains(name, "(") {
					t.Errorf("frame %q (%s) is not among perf's demangled frames %v", name, sys, byPerf)
				}
			}
		})
	}
}

// perfFrames reads `perf script` of a recording and returns the name and
// system name of the frames in the binary named bin.
func perfFrames(t *testing.T, perf, data, bin string, args ...string) map[string]string {
	t.Helper()
	out, err := exec.Command(perf, append([]string{"script", "-i", data}, args...)...).Output()
	if err != nil {
		t.Fatalf("perf script %v: %v", args, err)
	}
	l, err := Parse(bin+".perf", out, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The registry's readers (perf script among them) end in
	// (*reader).load, not in finish: until that calls the hook too, the
	// test applies it (a no-op on demangled names).
	demangleFunctions(l.Profile)
	checkDemangled(t, l, nil)
	m := map[string]string{}
	for _, loc := range l.Profile.Location {
		if loc.Mapping == nil || filepath.Base(loc.Mapping.File) != bin {
			continue
		}
		for _, ln := range loc.Line {
			m[ln.Function.Name] = ln.Function.SystemName
		}
	}
	if len(m) == 0 {
		t.Fatalf("perf script %v: no frames in %s", args, bin)
	}
	return m
}

// BenchmarkDemangleFunctions measures the hook on the synthetic Go profile
// BenchmarkParse reads (Go names: the byte scan alone), and on the same
// profile with every function renamed to a mangled C++ name:
// go test ./profile -run '^$' -bench DemangleFunctions -benchtime 5x
func BenchmarkDemangleFunctions(b *testing.B) {
	l, err := Parse("synth.pb.gz", benchSynthGz(b, 200_000), 0)
	if err != nil {
		b.Fatal(err)
	}
	p := l.Profile
	b.Run(fmt.Sprintf("go/functions=%d", len(p.Function)), func(b *testing.B) {
		for b.Loop() {
			demangleFunctions(p)
		}
	})
	names := make([]string, len(p.Function))
	for i := range names {
		names[i] = fmt.Sprintf("_ZN2ns%d6Widget4frobERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERSt6vectorIiSaIiEE", i)
		names[i] = strings.Replace(names[i], "2ns", fmt.Sprintf("%dns", 2+len(fmt.Sprint(i))), 1)
	}
	b.Run(fmt.Sprintf("mangled/functions=%d", len(p.Function)), func(b *testing.B) {
		for b.Loop() {
			for i, f := range p.Function {
				f.Name, f.SystemName = names[i], names[i]
			}
			demangleFunctions(p)
		}
	})
}

// aliasedSymbols returns the function symbols of bin that share their
// address with another function symbol (identical code folded), as nm
// lists them.
func aliasedSymbols(t *testing.T, bin string) map[string]bool {
	t.Helper()
	out, err := exec.Command(nativeTool(t, "nm"), "--defined-only", bin).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", bin, err)
	}
	byAddr := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && strings.ContainsAny(f[1], "TtWw") {
			byAddr[f[0]] = append(byAddr[f[0]], f[2])
		}
	}
	aliased := map[string]bool{}
	for _, names := range byAddr {
		if len(names) > 1 {
			for _, n := range names {
				aliased[n] = true
			}
		}
	}
	return aliased
}

// TestDemangleRustV0Corpus loads speedscope's perf script sample of a Rust
// program built with v0 mangling: rand's thread-local key closure is named
// as rustc-demangle names it, and no name keeps an empty path segment.
func TestDemangleRustV0Corpus(t *testing.T) {
	path := filepath.Join(corpus.Need(t), "speedscope", "sample__profiles__linux-perf__rust-mangled.linux-perf.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("corpus file absent: %v", err)
	}
	l, err := Parse(path, data, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range l.Profile.Function {
		found = found || f.Name == "rand::rngs::thread::THREAD_RNG_KEY::{closure#0}"
		if strings.Contains(f.Name, "::::") || strings.Contains(f.Name, "::>") {
			t.Errorf("%s: empty path segment in %q", f.SystemName, f.Name)
		}
	}
	if !found {
		t.Error("no function rand::rngs::thread::THREAD_RNG_KEY::{closure#0}")
	}
}
