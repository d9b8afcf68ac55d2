package jfr

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// TestMain starts making the recordings ahead of the tests in a run of them
// all (see prefetch), and removes the recordings and classes the tests
// share.
func TestMain(m *testing.M) {
	flag.Parse()
	var wg sync.WaitGroup
	if unfiltered() {
		wg.Go(prefetch)
	}
	code := m.Run()
	wg.Wait() // no JVM still writing to the folder removed below
	for _, d := range []string{classDir, sharedDir.path} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// onceEach computes a value once per key. Callers of different keys run at
// the same time, callers of one key wait for the first; a computation that
// fails (or ends its test) keeps nothing, and the next caller tries again.
type onceEach[V any] struct {
	mu sync.Mutex
	m  map[string]*onceEntry[V]
}

type onceEntry[V any] struct {
	mu   sync.Mutex
	done bool
	v    V
}

func (o *onceEach[V]) get(key string, compute func() (V, error)) (V, error) {
	o.mu.Lock()
	e := o.m[key]
	if e == nil {
		if o.m == nil {
			o.m = map[string]*onceEntry[V]{}
		}
		e = &onceEntry[V]{}
		o.m[key] = e
	}
	o.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		v, err := compute()
		if err != nil {
			return v, err
		}
		e.v, e.done = v, true
	}
	return e.v, nil
}

var (
	// recordings holds the paths of the recordings several tests read
	// (read only), by name.
	recordings onceEach[string]
	// sharedDir is the folder they are written to.
	sharedDir struct {
		once sync.Once
		path string
		err  error
	}
)

// recordOnce returns the path of the named recording, making it with make
// (given the path to write) the first time.
func recordOnce(t testing.TB, name string, make func(path string) error) string {
	t.Helper()
	p, err := recording(name, make)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recording is recordOnce for callers off the test's goroutine.
func recording(name string, make func(path string) error) (string, error) {
	return recordings.get(name, func() (string, error) {
		sharedDir.once.Do(func() { sharedDir.path, sharedDir.err = os.MkdirTemp("", "jfrrec") })
		if sharedDir.err != nil {
			return "", sharedDir.err
		}
		p := filepath.Join(sharedDir.path, name)
		if err := make(p); err != nil {
			return "", err
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("the JVM wrote no %s: %v", name, err)
		}
		return p, nil
	})
}

// tlabSettings writes a copy of the JDK's profile.jfc that also enables
// jdk.ObjectAllocationInNewTLAB and jdk.ObjectAllocationOutsideTLAB (both
// off in the JDK's own settings files).
// The error of a JDK without the file wraps fs.ErrNotExist.
func tlabSettings(dir string) (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(java)
	if err != nil {
		return "", err
	}
	src := filepath.Join(filepath.Dir(filepath.Dir(real)), "lib", "jfr", "profile.jfc")
	b, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("no JDK settings file: %w", err)
	}
	re := regexp.MustCompile(`(<event name="jdk\.ObjectAllocation(?:InNew|Outside)TLAB">\s*<setting name="enabled"[^>]*>)false`)
	if n := len(re.FindAllIndex(b, -1)); n != 2 {
		return "", fmt.Errorf("%s: %d TLAB events' enabled settings found, want 2", src, n)
	}
	out := filepath.Join(dir, "tlab.jfc")
	return out, os.WriteFile(out, re.ReplaceAll(b, []byte("${1}true")), 0o644)
}

// shapesRecording is testdata/Shapes.java recorded with profile.jfc plus
// the TLAB events: async-profiler's event types written by the JDK, and
// the JDK's own allocation, GC-phase and safepoint events.
func shapesRecording(t testing.TB) string {
	t.Helper()
	jdk(t)
	p, err := recording("shapes.jfr", recordShapes)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func recordShapes(path string) error {
	settings, err := tlabSettings(filepath.Dir(path))
	if err != nil {
		return err
	}
	return runJava([]string{"-XX:StartFlightRecording=filename=" + path + ",settings=" + settings}, "Shapes", nil)
}

// TestAsyncProfilerShapes: every event type Shapes commits, and the JDK's
// TLAB, GC-phase and safepoint events, read as `jfr print --json` reads
// them; wall-clock samples of the sleeping thread are not cpu, those of
// the running thread are.
func TestAsyncProfilerShapes(t *testing.T) {
	t.Parallel()
	path := shapesRecording(t)
	p := compareWithJDK(t, path, false)
	for _, typ := range []string{wallSamplesType, "alloc-in-new-tlab", "alloc-outside-tlab", "live", "malloc", "native-lock", "gc-phase-pause", "safepoint", "gc-pause"} {
		if sum(p, typ) <= 0 {
			t.Errorf("%s: no samples; the profile has %v", typ, p.SampleType)
		}
	}
	w := sampleIndex(p, wallSamplesType)
	byThread := map[string]string{}
	for _, s := range p.Sample {
		if w < 0 || s.Value[w] == 0 {
			continue
		}
		th := strings.Join(s.Label[labels.Thread], "")
		byThread[th] = strings.Join(s.Label[labels.Bucket], "") + "/" + strings.Join(s.Label[labels.Fallback], "")
	}
	if byThread["shapes-sleeper"] != "/wait" || byThread["shapes-runner"] != "cpu/" {
		t.Errorf("wall samples' bucket/fallback by thread: %v; want the sleeper's to fall back to wait and the runner's to be cpu", byThread)
	}
	_, warns := parseFile(t, path)
	if !slicesContain(warns, "names no wall-clock interval") {
		t.Errorf("no warning that wall-samples counts samples: %q", warns)
	}
	gc := map[string]bool{}
	for _, s := range p.Sample {
		if i := sampleIndex(p, "gc-phase-pause"); s.Value[i] > 0 {
			gc[s.Location[0].Line[0].Function.Name+" "+s.Label[labels.Bucket][0]] = true
		}
	}
	if len(gc) == 0 {
		t.Errorf("no GC phase pseudo-frames")
	}
	for k := range gc {
		if !strings.HasPrefix(k, "[GC phase: ") || !strings.HasSuffix(k, "] gc") {
			t.Errorf("GC phase sample %q; want a [GC phase: NAME] frame in bucket gc", k)
		}
	}
}

func slicesContain(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestIntervals: the nanoseconds one async-profiler sample stands for, as
// its settings give them (src/flightRecorder.cpp writeSettings,
// src/wallClock.cpp and src/arguments.h for the defaults).
func TestIntervals(t *testing.T) {
	for _, c := range []struct {
		settings  map[string]map[string]string
		wall, cpu int64 // 0: unknown
	}{
		{nil, 0, 0},
		{map[string]map[string]string{"jdk.ExecutionSample": {"wall": "0"}}, 50e6, 0},
		{map[string]map[string]string{"jdk.ExecutionSample": {"wall": "20000000", "interval": "5000000"},
			"jdk.ActiveRecording": {"engine": "perf_events", "event": "cpu"}}, 20e6, 5e6},
		{map[string]map[string]string{"jdk.ExecutionSample": {"interval": "0"},
			"jdk.ActiveRecording": {"engine": "wall", "event": "wall"}}, 50e6, 0},
		{map[string]map[string]string{"jdk.ExecutionSample": {"interval": "0"},
			"jdk.ActiveRecording": {"engine": "itimer", "event": "cpu"}}, 0, 10e6},
		{map[string]map[string]string{"jdk.ExecutionSample": {"interval": "0"},
			"jdk.ActiveRecording": {"event": "cpu"}}, 0, 10e6}, // 2.x names no engine
		{map[string]map[string]string{"jdk.ExecutionSample": {"interval": "2000000"},
			"jdk.ActiveRecording": {"event": "itimer"}}, 0, 2e6},
		{map[string]map[string]string{"jdk.ExecutionSample": {"interval": "1000000"},
			"jdk.ActiveRecording": {"engine": "perf_events", "event": "cycles"}}, 0, 0},
		{map[string]map[string]string{"jdk.ExecutionSample": {"wall": "x"}}, 0, 0},
	} {
		b := newBuilder()
		b.settings = c.settings
		wall, _ := b.wallInterval()
		cpu, _ := b.cpuInterval()
		if wall != c.wall || cpu != c.cpu {
			t.Errorf("%v: wall %d, cpu %d; want %d, %d", c.settings, wall, cpu, c.wall, c.cpu)
		}
	}
}

// TestWallInterval: with a wall-clock interval (as async-profiler's
// --wall 20ms writes it), wall is nanoseconds: each sample's count times
// the interval, per stack the same as wall-samples without it.
func TestWallInterval(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(shapesRecording(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	counted, _ := b.profile()
	b, _ = read(data)
	b.settings["jdk.ExecutionSample"] = map[string]string{"wall": "20000000"}
	timed, warns := b.profile()
	if err := timed.CheckValid(); err != nil {
		t.Fatal(err)
	}
	i := sampleIndex(timed, wallType)
	if i < 0 || timed.SampleType[i].Unit != "nanoseconds" || sampleIndex(timed, wallSamplesType) >= 0 {
		t.Fatalf("sample types %v; want wall in nanoseconds and no wall-samples", timed.SampleType)
	}
	want, got := totals(counted)[wallSamplesType], totals(timed)[wallType]
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d wall stacks, %d counted ones", len(got), len(want))
	}
	for stack, n := range want {
		if got[stack] != n*20e6 {
			t.Errorf("stack %q: %d ns for %d samples at 20 ms", stack, got[stack], n)
		}
	}
	if !slicesContain(warns, "20ms wall-clock interval") {
		t.Errorf("no warning naming the interval: %q", warns)
	}
}

// TestNativeFrames: async-profiler's native frames (a "()L;" method whose
// class is the library, "(Lk;)L;" or a Kernel frame type in the kernel)
// are named by the bare symbol with the library as the location's
// mapping; Java frames are Class.method with no mapping, marked native
// when the method is declared so (ACC_NATIVE); a nameless
// "()L;" frame (the allocated class async-profiler puts on top) is the
// class. The values are built as the reader decodes them from its pools,
// for the shapes the recordings in testdata lack (kernel frames, a
// nameless class frame); TestAsyncProfilerModes reads real ones.
func TestNativeFrames(t *testing.T) {
	str := func(s string) value { return value{kind: vString, s: s} }
	cls := &class{name: "java.lang.Class", fields: []field{{name: "name"}}}
	meth := &class{name: "jdk.types.Method", fields: []field{{name: "type"}, {name: "name"}, {name: "descriptor"}, {name: "modifiers"}}}
	sf := &class{name: "jdk.types.StackFrame", fields: []field{{name: "method"}, {name: "lineNumber"}, {name: "type"}}}
	fr := func(lib, name, desc, typ string, line int64) value {
		var mods int64
		if desc == "(J)V" {
			mods = 0x111 // public final native, as Object.wait(long)
		}
		m := value{kind: vStruct, typ: meth, fields: []value{{kind: vStruct, typ: cls, fields: []value{str(lib)}}, str(name), str(desc), {kind: vInt, i: mods}}}
		return value{kind: vStruct, typ: sf, fields: []value{m, {kind: vInt, i: line}, str(typ)}}
	}
	c := &chunk{}
	got := []frame{
		c.frame(fr("libc.so.6", "__GI___libc_malloc", "()L;", "Native", 0)),
		c.frame(fr("", "do_syscall_64", "(Lk;)L;", "Kernel", 0)),
		c.frame(fr("", "entry_SYSCALL_64", "()L;", "Kernel", 0)),
		c.frame(fr("java/lang/Object", "wait", "(J)V", "JIT compiled", 0)),
		c.frame(fr("com/example/App", "run", "()V", "JIT compiled", 42)),
		c.frame(fr("java/lang/String", "", "()L;", "Inlined", 0)),
	}
	want := []frame{
		{fn: "__GI___libc_malloc", lib: "libc.so.6"},
		{fn: "do_syscall_64", lib: "[kernel.kallsyms]"},
		{fn: "entry_SYSCALL_64", lib: "[kernel.kallsyms]"},
		{fn: "java.lang.Object.wait", java: true, native: true},
		{fn: "com.example.App.run", line: 42, java: true},
		{fn: "java.lang.String", java: true},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("frames %+v\nwant %+v", got, want)
	}
	b := newBuilder()
	b.present[0] = true
	b.sample(0, 1, got, map[string][]string{})
	b.sample(0, 1, got[:2], map[string][]string{})
	p, _ := b.profile()
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, l := range p.Location {
		if l.Mapping != nil {
			files = append(files, l.Line[0].Function.Name+"@"+l.Mapping.File)
		}
	}
	if strings.Join(files, " ") != "__GI___libc_malloc@libc.so.6 do_syscall_64@[kernel.kallsyms] entry_SYSCALL_64@[kernel.kallsyms]" || len(p.Mapping) != 2 {
		t.Errorf("native locations %v, %d mappings; want the library of each native frame", files, len(p.Mapping))
	}
}
