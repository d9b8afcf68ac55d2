// Package gatetest records real contention profiles for the gate's tests:
// it builds the test program in ../testdata/lockprog with the installed Go
// toolchain and runs it, so that the mutex and block profiles the tests
// gate are written by the Go runtime itself.
package gatetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Variant is one version of the test program.
type Variant struct {
	Name string // the folder its profiles go to
	// Lock is how the program takes its mutex: "fold" (or "") only to
	// fold each item's result into the shared total; "hold" across each
	// item's work too, the regression; "none" never.
	Lock string
	// Join is how the program waits for its workers: "poll" (or "") an
	// atomic counter, so that its block profile holds the mutex alone;
	// "wg" a sync.WaitGroup, which block profiles record as wait.
	Join string
}

// build compiles the test program into dir (the Go build cache makes a
// second build quick), or says why it cannot.
func build(dir string) (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("no go toolchain to build the lock test program: %w", err)
	}
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "lockprog")
	bin := filepath.Join(dir, "lockprog")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", src, err, out)
	}
	return bin, nil
}

// Record runs each variant runs times, interleaved (so that a change in
// the machine's load falls on every variant alike), each run writing
// dir/mutex/NAME/run-I.pb.gz and dir/block/NAME/run-I.pb.gz. The program
// runs with GOMAXPROCS=2, as on a small CI machine, for about a tenth of
// a second a run. The program is built once per call; without a Go
// toolchain the test is skipped.
func Record(t testing.TB, dir string, runs int, variants ...Variant) {
	t.Helper()
	bin, err := build(t.TempDir())
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"mutex", "block"} {
		for _, v := range variants {
			if err := os.MkdirAll(filepath.Join(dir, kind, v.Name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 1; i <= runs; i++ {
		for _, v := range variants {
			name := fmt.Sprintf("run-%d.pb.gz", i)
			lock, join := v.Lock, v.Join
			if lock == "" {
				lock = "fold"
			}
			if join == "" {
				join = "poll"
			}
			cmd := exec.Command(bin, "-lock", lock, "-join", join,
				"-mutex", filepath.Join(dir, "mutex", v.Name, name), "-block", filepath.Join(dir, "block", v.Name, name))
			cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
		}
	}
}
