// Package waittest runs the test program of package wait
// (diff/wait/testdata/waitprog) for tests: it builds it with the go
// command once per test binary and runs it once per set of arguments,
// caching the folder of profiles, trace and measured truth it writes.
package waittest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Truth is what the program measured of itself (waitprog's truth.json),
// in nanoseconds.
type Truth struct {
	WallNs       int64 `json:"wall_ns"`
	HeldNs       int64 `json:"held_ns"`
	WaitedNs     int64 `json:"waited_ns"`
	DuringHoldNs int64 `json:"during_hold_ns"`
	ChanWaitNs   int64 `json:"chan_wait_ns"`
}

// Run is one run's folder: mutex.pb.gz, block.pb.gz, trace.out.
type Run struct {
	Dir   string
	Truth Truth
}

// Path is the run's file name.
func (r *Run) Path(name string) string { return filepath.Join(r.Dir, name) }

var (
	mu    sync.Mutex
	bin   string
	root  string
	fail  string
	skip  bool
	built bool
	runs  = map[string]*Run{}
)

// Program runs waitprog with args ("-mode", "holdslow", "-hold", "8ms")
// and returns its folder, the same one for the same args within a test
// binary. It skips the test where there is no go command.
func Program(t testing.TB, args ...string) *Run {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if !built {
		built = true
		build()
	}
	if bin == "" {
		if skip {
			t.Skip(fail)
		}
		t.Fatal(fail)
	}
	key := strings.Join(args, " ")
	if r := runs[key]; r != nil {
		return r
	}
	dir, err := os.MkdirTemp(root, "run")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(args, "-out", dir)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=4")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("waitprog %s: %v\n%s", key, err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{Dir: dir}
	if err := json.Unmarshal(b, &r.Truth); err != nil {
		t.Fatal(err)
	}
	runs[key] = r
	return r
}

// Main runs a package's tests (from its TestMain) and removes the runs'
// folder: os.Exit(waittest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if root != "" {
		os.RemoveAll(root)
	}
	return code
}

// build builds waitprog from this file's folder's ../testdata.
func build() {
	goBin, err := exec.LookPath("go")
	if err != nil {
		fail, skip = "no go command to build diff/wait/testdata/waitprog", true
		return
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		fail = "waittest: cannot find its own source"
		return
	}
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "waitprog")
	// Runs outlive one test, so the folder is the test binary's: Main
	// removes it.
	root, err = os.MkdirTemp("", "waitprog")
	if err != nil {
		fail = err.Error()
		return
	}
	bin = filepath.Join(root, "waitprog")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		bin, fail = "", "go build waitprog: "+err.Error()+": "+string(out)
	}
}
