// Package producertest records profiles with real producers for tests:
// the callgrind and pstats readers' programs (profile/callgrind/testdata,
// profile/pstats/testdata) run under valgrind --tool=callgrind and
// python3 -m cProfile, so that the files the tests read are the tools'
// own. A test whose producer is not installed is skipped with a one-line
// reason.
package producertest

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// profileDir is the profile package's folder in the source tree.
func profileDir(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("producertest: no source location")
	}
	return filepath.Dir(filepath.Dir(file))
}

// Need skips the test unless every tool is installed.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// Run runs a producer and fails the test with its output if it fails.
func Run(t testing.TB, name string, args ...string) {
	t.Helper()
	if b, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, b)
	}
}

// LockProgram builds profile/callgrind/testdata/lock.c (four threads doing
// work while they hold one pthread mutex: 200*HOLD iterations per hold,
// HOLD its argument) with gcc -O1 -g into dir and returns the binary.
func LockProgram(t testing.TB, dir string) string {
	t.Helper()
	Need(t, "gcc", "valgrind")
	bin := filepath.Join(dir, "lock")
	Run(t, "gcc", "-O1", "-g", "-pthread", "-o", bin, filepath.Join(profileDir(t), "callgrind", "testdata", "lock.c"))
	return bin
}

// Callgrind runs bin with args under valgrind --tool=callgrind, with the
// given options before the program, writing out.
func Callgrind(t testing.TB, out, bin string, opts []string, args ...string) {
	t.Helper()
	vargs := append(append([]string{"--tool=callgrind", "--callgrind-out-file=" + out}, opts...), bin)
	Run(t, "valgrind", append(vargs, args...)...)
}

// CProfile records a script of profile/pstats/testdata with python3 -m
// cProfile into out: locks.py HOLD (the main thread waits HOLD seconds
// for a threading.Lock another thread holds, then sleeps HOLD seconds) or
// io.py WAIT (it waits in select and a selector, WAIT seconds each, for
// data another thread sends, and receives it). It returns what the script
// printed (locks.py: the seconds it measured waiting on the locks and
// sleeping).
func CProfile(t testing.TB, out, script string, args ...string) string {
	t.Helper()
	Need(t, "python3")
	b, err := exec.Command("python3", append([]string{"-m", "cProfile", "-o", out, filepath.Join(profileDir(t), "pstats", "testdata", script)}, args...)...).Output()
	if err != nil {
		t.Fatalf("python3 -m cProfile %s: %v", script, err)
	}
	return string(b)
}
