package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestZZTmp(t *testing.T) {
	srv := fakeDebugServer(t, false, 1)
	dir := filepath.Join(t.TempDir(), "cap")
	t0 := time.Now()
	_, stderr, code := profdiff(t, "", "capture", srv.URL, "--duration", "1s", "--profiles", "goroutine", "--perf-pid", strconv.Itoa(os.Getpid()), "--out", dir)
	t.Logf("%v code %d\n%s", time.Since(t0), code, stderr)
	t0 = time.Now()
	_, stderr, code = profdiff(t, "", "capture", srv.URL, "--duration", "1s", "--profiles", "goroutine", "--out", dir+"2")
	t.Logf("%v code %d\n%s", time.Since(t0), code, stderr)
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	t.Logf("%s", b)
}
