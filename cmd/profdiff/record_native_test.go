package main

import (
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/profile/producertest"
)

// recordCallgrindPair runs the callgrind tests' mutex program
// (producertest.LockProgram: four threads doing work while they hold one
// pthread mutex) under valgrind --tool=callgrind twice, into dir/base.out
// and dir/new.out, the held work doubled the second time. It skips the
// test where gcc or valgrind is not installed.
func recordCallgrindPair(t *testing.T, dir string) {
	t.Helper()
	bin := producertest.LockProgram(t, dir)
	producertest.Callgrind(t, filepath.Join(dir, "base.out"), bin, nil, "1")
	producertest.Callgrind(t, filepath.Join(dir, "new.out"), bin, nil, "2")
}

// recordCProfilePair records the pstats tests' lock program
// (producertest.CProfile, locks.py: the main thread waits for a threading.Lock
// another thread holds, then sleeps) with python3 -m cProfile twice, into
// dir/base.prof and dir/new.prof, the hold and the sleep 50 ms, then
// 100 ms. It skips the test where python3 is not installed.
func recordCProfilePair(t *testing.T, dir string) {
	t.Helper()
	producertest.CProfile(t, filepath.Join(dir, "base.prof"), "locks.py", "0.05")
	producertest.CProfile(t, filepath.Join(dir, "new.prof"), "locks.py", "0.1")
}
