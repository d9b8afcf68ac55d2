// Package waittest runs the test program of package wait
// (diff/wait/testdata/waitprog) for tests: it builds it with the go
// command once per test binary and runs it once per set of arguments,
// caching the folder of profiles, trace and measured truth it writes.
// It also makes, once per test binary, a perf recording and a JFR
// recording of the who-waited test programs of profile/perfscript and
// profile/jfr (PerfWaker, JFRHolders), for package wait's tests and the
// command's docs.
package waittest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/profdiff/profdiff/profile/producertest"
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
	return program(t, true, args)
}

// Again runs waitprog with args anew, for a test that makes a recording
// again when the machine's load spoiled one; the new run then serves
// Program's later calls with the same args.
func Again(t testing.TB, args ...string) *Run {
	t.Helper()
	return program(t, false, args)
}

func program(t testing.TB, cached bool, args []string) *Run {
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
	if r := runs[key]; r != nil && cached {
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

// recording is one recording made once per test binary: its bytes, or
// why it could not be made (skip: a producer is missing or cannot record
// here).
type recording struct {
	once sync.Once
	data []byte
	fail string
	skip bool
}

var perfWaker, perfChain, jfrHolders recording

// PerfWaker writes to path the perf script text of a recording of
// profile/perfscript's testdata/waker/waker.c (10 rounds in which its
// holder holds its three waiters' mutexes 3 ms in hold_work while they
// wait in wait_here, beside a napper in nap_here), recorded with
// sched:sched_switch, sched:sched_waking and DWARF call graphs (glibc has
// no frame pointers). It skips where gcc or perf is missing or perf
// cannot record the tracepoints.
func PerfWaker(t testing.TB, path string) {
	t.Helper()
	perfWaker.write(t, path, func(dir string) ([]byte, string, bool) {
		return recordPerf(dir, "profile/perfscript/testdata/waker/waker.c")
	})
}

// PerfChain writes to path the perf script text of a recording of
// profile/perfscript's testdata/chain/chain.c (10 rounds in which C waits
// in c_wait on a condition variable B signals once it gets the mutex A
// holds 3 ms in a_work), recorded as PerfWaker's. It skips where gcc or
// perf is missing or perf cannot record the tracepoints.
func PerfChain(t testing.TB, path string) {
	t.Helper()
	perfChain.write(t, path, func(dir string) ([]byte, string, bool) {
		return recordPerf(dir, "profile/perfscript/testdata/chain/chain.c")
	})
}

// JFRHolders writes to path a JDK Flight Recording (settings=profile) of
// profile/jfr's testdata/Holders.java: a thread named "holder" holds the
// three monitors its waiters block on in waitHere, spinning in holdSlow.
// It skips where java or javac is missing.
func JFRHolders(t testing.TB, path string) {
	t.Helper()
	jfrHolders.write(t, path, recordJFRHolders)
}

func (r *recording) write(t testing.TB, path string, record func(dir string) ([]byte, string, bool)) {
	t.Helper()
	r.once.Do(func() {
		dir, err := os.MkdirTemp("", "waittest")
		if err != nil {
			r.fail = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		r.data, r.fail, r.skip = record(dir)
	})
	switch {
	case r.skip:
		t.Skip(r.fail)
	case r.fail != "":
		t.Fatal(r.fail)
	}
	if err := os.WriteFile(path, r.data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoFile is a file of the repository, by its path from the root.
func repoFile(rel string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", filepath.FromSlash(rel))
}

// missing names the first of the tools not installed, "" when all are.
func missing(tools ...string) string {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " is not installed"
		}
	}
	return ""
}

// recordPerf builds the C program src (a path from the repository's
// root) and records it, 10 rounds of 3 ms, with sched_switch, sched_waking
// and DWARF call graphs.
func recordPerf(dir, src string) ([]byte, string, bool) {
	if m := missing("gcc", "perf"); m != "" {
		return nil, m, true
	}
	bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	if out, err := exec.Command("gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", repoFile(src), "-o", bin).CombinedOutput(); err != nil {
		return nil, "gcc " + filepath.Base(src) + ": " + err.Error() + ": " + string(out), false
	}
	data := filepath.Join(dir, "sched.data")
	var stderr bytes.Buffer
	rec := exec.Command("perf", producertest.PerfRecord("perf", "-q", "-o", data, "-e", "sched:sched_switch", "-e", "sched:sched_waking",
		"--call-graph", "dwarf,4096", "--switch-events", "--", bin, "10", "3")...)
	rec.Stderr = &stderr
	if err := rec.Run(); err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return nil, "perf cannot record sched_waking here (" + err.Error() + "): " + line, true
	}
	out, err := exec.Command("perf", "script", "-i", data, "--show-switch-events").Output()
	if err != nil {
		return nil, "perf script: " + err.Error(), false
	}
	return out, "", false
}

func recordJFRHolders(dir string) ([]byte, string, bool) {
	if m := missing("javac", "java"); m != "" {
		return nil, "no JDK: " + m, true
	}
	// C1 only: C2 spends about a second of CPU compiling JFR's start-up
	// code, which a program this short never recoups.
	const c1 = "-XX:TieredStopAtLevel=1"
	if out, err := exec.Command("javac", "-J"+c1, "-d", dir, repoFile("profile/jfr/testdata/Holders.java")).CombinedOutput(); err != nil {
		return nil, "javac Holders.java: " + err.Error() + ": " + string(out), false
	}
	path := filepath.Join(dir, "holders.jfr")
	if out, err := exec.Command("java", c1, "-XX:StartFlightRecording=filename="+path+",settings=profile", "-cp", dir, "Holders").CombinedOutput(); err != nil {
		return nil, "java Holders: " + err.Error() + ": " + string(out), false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err.Error(), false
	}
	return data, "", false
}
