package callgrind_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/profile"
)

// TestNamesWithAndWithoutValgrindDemangling records a C++ program under
// callgrind as Valgrind demangles it (with parameter lists) and with
// --demangle=no (mangled, which profdiff demangles on load): both give the
// frame names without parameters, as perf script's are read (a function
// template's keeps the return type Valgrind prints).
func TestNamesWithAndWithoutValgrindDemangling(t *testing.T) {
	for _, tool := range []string{"g++", "valgrind"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "names")
	if b, err := exec.Command("g++", "-O1", "-g", "-o", bin, filepath.Join("testdata", "names.cc")).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, b)
	}
	for _, demangle := range []string{"yes", "no"} {
		out := filepath.Join(dir, "callgrind.out."+demangle)
		if b, err := exec.Command("valgrind", "--tool=callgrind", "--demangle="+demangle, "--callgrind-out-file="+out, bin).CombinedOutput(); err != nil {
			t.Fatalf("valgrind: %v\n%s", err, b)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		l, err := profile.Parse(out, data, 0)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, f := range l.Profile.Function {
			names[f.Name] = true
		}
		// A function template's name keeps the return type Valgrind's
		// demangler prints, as perf's does.
		twice := map[string]string{"yes": "long twice<long>", "no": "twice<long>"}[demangle]
		for _, want := range []string{"shapes::Widget::frob", twice, "main", "(below main)"} {
			if !names[want] {
				t.Errorf("--demangle=%s: no function %q", demangle, want)
			}
		}
	}
}
