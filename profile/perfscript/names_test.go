package perfscript_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/perfscript"
)

// buildAndRecord compiles a test program with the given command (the
// output path is appended as "-o PATH"), records it running with the
// arguments prog with `perf record -e cpu-clock -g` and returns perf
// script's text and the binary. It skips where the compiler or perf is
// missing or perf cannot record.
func buildAndRecord(t *testing.T, prog []string, compiler string, args ...string) (text, bin string) {
	t.Helper()
	needPerf(t)
	bin = buildOnce(t, compiler, args...)
	data := filepath.Join(t.TempDir(), "perf.data")
	var stdout, stderr bytes.Buffer
	if err := perfRecord(data, &stdout, &stderr, append([]string{"-e", "cpu-clock", "-g", "--", bin}, prog...)...); err != nil {
		t.Skipf("perf cannot record here (%v): %s", err, firstLine(stderr.String()))
	}
	return perfScript(t, data), bin
}

// names returns the function names of a parse of text and checks that
// each name perf printed with parentheses in it is kept whole (perf
// script prints no parameter lists: what parentheses are left belong to
// the name).
func names(t *testing.T, text string) []string {
	t.Helper()
	p, _, err := perfscript.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range p.Function {
		out = append(out, f.Name)
		if strings.ContainsAny(f.SystemName, "()") && !strings.HasPrefix(f.Name, "[") && f.Name != f.SystemName {
			t.Errorf("perf printed %q, tidied to %q", f.SystemName, f.Name)
		}
	}
	return out
}

// wantNames checks that every name in want is one of got.
func wantNames(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no frame %q in the recording", w)
		}
	}
}

// TestNamesCxx records a g++ program whose frames are a lambda and a
// function of an anonymous namespace: their names keep their
// parentheses, and the same symbols as `nm -C` prints them (with
// parameter lists) tidy to the names perf printed.
func TestNamesCxx(t *testing.T) {
	t.Parallel()
	text, bin := buildAndRecord(t, nil, "g++", "-O0", "-g", "-fno-omit-frame-pointer", filepath.Join("testdata", "names", "lambda.cpp"))
	got := names(t, text)
	lambda, spin := "drive(int)::{lambda(int)#1}::operator()", "(anonymous namespace)::spin"
	wantNames(t, got, lambda, spin)
	out, err := exec.Command("nm", "-C", bin).Output()
	if err != nil {
		t.Skipf("nm -C: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		sym := strings.Join(f[2:], " ")
		for _, w := range []string{lambda, spin} {
			if strings.HasPrefix(sym, w+"(") {
				seen++
				if got := perfscript.TidyName(sym, bin, false); got != w {
					t.Errorf("nm's %q tidies to %q, want %q", sym, got, w)
				}
			}
		}
	}
	if seen != 2 {
		t.Errorf("nm -C printed %d of the two symbols with parameter lists:\n%s", seen, out)
	}
}

// TestNamesRust records a rustc program (v0 symbol mangling, which keeps
// generic arguments) whose closure runs on the main thread, under
// `std::rt::lang_start::<()>::{closure#0}`, and on a spawned one: names
// with `<()>`, `fn()` and closures keep their parentheses.
func TestNamesRust(t *testing.T) {
	t.Parallel()
	// 5M rounds a thread, a quarter of the default: each cpu-clock sample
	// of the main thread holds the frames looked for.
	text, _ := buildAndRecord(t, []string{"5000000"}, "rustc", "-C", "opt-level=0", "-C", "force-frame-pointers=yes", "-C", "symbol-mangling-version=v0", "-g", filepath.Join("testdata", "names", "closure.rs"))
	if strings.Contains(text, " _R") {
		t.Skip("this perf does not demangle Rust v0 symbols")
	}
	got := names(t, text)
	wantNames(t, got, "std::rt::lang_start::<()>::{closure#0}", "std::sys::backtrace::__rust_begin_short_backtrace::<fn(), ()>")
}
