package perfscript_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// perfQuick holds the options perfRecord adds to every `perf record`:
// --no-bpf-event, because perf's BPF side-band costs about 0.8 s of
// waiting per recording (perf 6.1; the recorded programs load no BPF),
// and -N, so that no binary is copied into ~/.debug. A perf that does not
// know an option drops it when the first recording fails for it.
var perfQuick = struct {
	sync.Mutex
	opts []string
}{opts: []string{"--no-bpf-event", "-N"}}

// perfRecord runs `perf record -q -o data` with perfQuick's options and
// args, writing the command's stdout and stderr to stdout and stderr.
func perfRecord(data string, stdout, stderr *bytes.Buffer, args ...string) error {
	perfQuick.Lock()
	opts := perfQuick.opts
	perfQuick.Unlock()
	for {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.Command("perf", append(append([]string{"record", "-q", "-o", data}, opts...), args...)...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		err := cmd.Run()
		m := unknownOption.FindStringSubmatch(stderr.String())
		if err == nil || m == nil {
			return err
		}
		// An older perf: try again without the option it does not know.
		kept := slices.DeleteFunc(slices.Clone(opts), func(o string) bool { return strings.TrimLeft(o, "-") == m[1] })
		if len(kept) == len(opts) {
			return err
		}
		opts = kept
		perfQuick.Lock()
		perfQuick.opts = kept
		perfQuick.Unlock()
	}
}

// unknownOption is perf's complaint about an option it does not know.
var unknownOption = regexp.MustCompile("unknown (?:option|switch) `([^']+)'")

// perfScript returns `perf script -i data` with the given options.
func perfScript(t *testing.T, data string, opts ...string) string {
	t.Helper()
	out, err := exec.Command("perf", append([]string{"script", "-i", data}, opts...)...).Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	return string(out)
}

// onceMap holds what tests share by key (built programs, recordings):
// each value is made once per test binary, by the first test that asks,
// and only read after.
type onceMap[T any] struct {
	mu sync.Mutex
	m  map[string]*onceEntry[T]
}

type onceEntry[T any] struct {
	once sync.Once
	v    T
}

// get returns key's entry, made by fill the first time it is asked for.
func (o *onceMap[T]) get(key string, fill func(*T)) *T {
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string]*onceEntry[T]{}
	}
	e := o.m[key]
	if e == nil {
		e = &onceEntry[T]{}
		o.m[key] = e
	}
	o.mu.Unlock()
	e.once.Do(func() { fill(&e.v) })
	return &e.v
}

// built holds the test programs compiled for this test binary, keyed by
// the compiler and its arguments.
var built onceMap[buildResult]

type buildResult struct {
	bin  string
	skip string // why the program could not be built
}

// buildOnce compiles a test program with the compiler and args (the
// output path is appended as "-o PATH") once per test binary and returns
// the binary, skipping the test where the compiler is missing or fails.
func buildOnce(t *testing.T, compiler string, args ...string) string {
	t.Helper()
	r := built.get(compiler+"\x00"+strings.Join(args, "\x00"), func(r *buildResult) {
		if _, err := exec.LookPath(compiler); err != nil {
			r.skip = compiler + " is not installed"
			return
		}
		dir, err := os.MkdirTemp(testDir, "prog")
		if err != nil {
			r.skip = err.Error()
			return
		}
		bin := filepath.Join(dir, "prog")
		if out, err := exec.Command(compiler, append(args, "-o", bin)...).CombinedOutput(); err != nil {
			r.skip = fmt.Sprintf("%s failed: %v: %s", compiler, err, firstLine(string(out)))
			return
		}
		r.bin = bin
	})
	if r.skip != "" {
		t.Skip(r.skip)
	}
	return r.bin
}

// testDir holds what the tests share (programs, recordings); TestMain
// removes it.
var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "perfscript-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needPerf skips the test where perf is not installed.
func needPerf(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf is not installed")
	}
}
