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
// output path is appended as "-o PATH"), records it with `perf record -e
// cpu-clock -g` and returns perf script's text and the binary. It skips
// where the compiler or perf is missing or perf cannot record.
func buildAndRecord(t *testing.T, compiler string, args ...string) (text, bin string) {
	t.Helper()
	for _, tool := range []string{compiler, "perf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	bin = filepath.Join(dir, "prog")
	if out, err := exec.Command(compiler, append(args, "-o", bin)...).CombinedOutput(); err != nil {
		t.Skipf("%s failed: %v: %s", compiler, err, firstLine(string(out)))
	}
	data := filepath.Join(dir, "perf.data")
	var stderr bytes.Buffer
	cmd := exec.Command("perf", "record", "-q", "-o", data, "-e", "cpu-clock", "-g", "--", bin)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Skipf("perf cannot record here (%v): %s", err, firstLine(stderr.String()))
	}
	out, err := exec.Command("perf", "script", "-i", data).Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	return string(out), bin
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
	text, bin := buildAndRecord(t, "g++", "-O0", "-g", "-fno-omit-frame-pointer", filepath.Join("testdata", "names", "lambda.cpp"))
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
	text, _ := buildAndRecord(t, "rustc", "-C", "opt-level=0", "-C", "force-frame-pointers=yes", "-C", "symbol-mangling-version=v0", "-g", filepath.Join("testdata", "names", "closure.rs"))
	if strings.Contains(text, " _R") {
		t.Skip("this perf does not demangle Rust v0 symbols")
	}
	got := names(t, text)
	wantNames(t, got, "std::rt::lang_start::<()>::{closure#0}", "std::sys::backtrace::__rust_begin_short_backtrace::<fn(), ()>")
}
