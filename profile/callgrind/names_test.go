package callgrind_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/producertest"
)

// TestNamesWithAndWithoutValgrindDemangling records a C++ program under
// callgrind as Valgrind demangles it (with parameter lists) and with
// --demangle=no (mangled, which profdiff demangles on load): both give the
// frame names without parameters, as perf script's are read (a function
// template's keeps the return type Valgrind prints).
func TestNamesWithAndWithoutValgrindDemangling(t *testing.T) {
	producertest.Need(t, "g++", "valgrind")
	dir := t.TempDir()
	bin := filepath.Join(dir, "names")
	producertest.Run(t, "g++", "-O1", "-g", "-o", bin, filepath.Join("testdata", "names.cc"))
	for _, demangle := range []string{"yes", "no"} {
		out := filepath.Join(dir, "callgrind.out."+demangle)
		producertest.Callgrind(t, out, bin, []string{"--demangle=" + demangle})
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
