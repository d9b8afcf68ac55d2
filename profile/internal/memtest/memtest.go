// Package memtest measures, for the reliability tests, the peak memory
// and time of work done in a fresh process: the test binary re-executed
// to run one test, its child, which does the work between Measure's
// marks. The parent reads what the child printed.
//
// The child reports its own high-water mark (VmHWM of /proc/self/status)
// because the rusage a parent gets for a child counts the parent too: the
// child ran in the parent's memory image between fork and exec.
package memtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// env carries the child's arguments (separated by sep).
const (
	env = "PROFDIFF_MEMTEST_ARGS"
	sep = "\x1f"
)

// Args returns the arguments Run gave the child, or skips t when this
// process is no child of Run (the child test run directly does nothing).
func Args(t testing.TB) []string {
	v := os.Getenv(env)
	if v == "" {
		t.Skip("only run as the subprocess of a memory test")
	}
	return strings.Split(v, sep)
}

// Measure runs the work fn in the child and prints how long it took and,
// after it, the process's peak RSS, for Run to read.
func Measure(fn func()) {
	start := time.Now()
	fn()
	fmt.Printf("memtest took %d ns\n", time.Since(start))
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("memtest vmhwm %s\n", strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
}

// Run writes data to a file called name in a temporary folder, runs the
// test named test of this test binary as a child with that file's path
// and args (see Args), and returns what the child printed, the time its
// Measure took and its peak RSS in bytes.
func Run(t testing.TB, test, name string, data []byte, args ...string) (out string, took time.Duration, rss int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return RunFile(t, test, append([]string{path}, args...)...)
}

// RunFile is Run for arguments that are already files (args[0] usually).
func RunFile(t testing.TB, test string, args ...string) (out string, took time.Duration, rss int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+strings.Join(args, sep))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stdout.String())
	}
	out = stdout.String()
	var ns, kb int64
	if _, v, ok := strings.Cut(out, "memtest took "); ok {
		fmt.Sscan(v, &ns)
	}
	if _, v, ok := strings.Cut(out, "memtest vmhwm "); ok {
		if _, err := fmt.Sscan(v, &kb); err == nil {
			return out, time.Duration(ns), kb << 10
		}
	}
	peak, ok := maxRSS(cmd.ProcessState)
	if !ok {
		t.Skip("no peak memory of a subprocess on this system")
	}
	return out, time.Duration(ns), peak // an upper bound (see the package doc)
}

// Raced reports whether the test binary runs under the race detector,
// whose shadow memory and slowdown no bound of these tests allows for.
func Raced() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return true
			}
		}
	}
	return false
}
