package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// recordCallgrindPair builds the callgrind tests' mutex program
// (profile/callgrind/testdata/lock.c, four threads doing work while they
// hold one pthread mutex) and runs it under valgrind --tool=callgrind
// twice, into dir/base.out and dir/new.out, the held work doubled the
// second time. It skips the test where gcc or valgrind is not installed.
func recordCallgrindPair(t *testing.T, root, dir string) {
	t.Helper()
	for _, tool := range []string{"gcc", "valgrind"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	bin := filepath.Join(dir, "lock")
	src := filepath.Join(root, "profile", "callgrind", "testdata", "lock.c")
	if b, err := exec.Command("gcc", "-O1", "-g", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	for _, side := range [][2]string{{"base.out", "1"}, {"new.out", "2"}} {
		cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+filepath.Join(dir, side[0]), bin, side[1])
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("valgrind: %v\n%s", err, b)
		}
	}
}

// recordCProfilePair records the pstats tests' lock program
// (profile/pstats/testdata/locks.py: the main thread waits for a
// threading.Lock another thread holds, then sleeps) with python3 -m
// cProfile twice, into dir/base.prof and dir/new.prof, the hold and the
// sleep 50 ms, then 100 ms. It skips the test where python3 is not
// installed.
func recordCProfilePair(t *testing.T, root, dir string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	script := filepath.Join(root, "profile", "pstats", "testdata", "locks.py")
	for _, side := range [][2]string{{"base.prof", "0.05"}, {"new.prof", "0.1"}} {
		cmd := exec.Command(py, "-m", "cProfile", "-o", filepath.Join(dir, side[0]), script, side[1])
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("python3 -m cProfile: %v\n%s", err, b)
		}
	}
}
