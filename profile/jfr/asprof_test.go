package jfr

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// asprofFiles are the recordings async-profiler 2.9 and 4.2.1 made of
// testdata/Turns.java (testdata/README.md says how), by mode, with the
// sample type each mode is read as by default and its unit.
var asprofFiles = []struct {
	mode, typ, unit string
	only            string // the one version that has the mode, or ""
}{
	{"cpu", cpuTimeType, "nanoseconds", ""},
	{"itimer", cpuTimeType, "nanoseconds", ""},
	{"wall", wallType, "nanoseconds", ""},
	{"wall-10ms", wallType, "nanoseconds", ""},
	{"alloc", "alloc", "bytes", ""},
	{"lock", "lock", "nanoseconds", ""},
	{"all", cpuTimeType, "nanoseconds", ""},
	{"nobatch", cpuTimeType, "nanoseconds", "4.2.1"},
}

var asprofVersions = []string{"2.9", "4.2.1"}

func asprofPath(version, mode string) string {
	return filepath.Join("testdata", "ap"+version+"-"+mode+".jfr")
}

// falseWarnings are what the reader says of the JDK's sampler and
// recordings, false of async-profiler's.
var falseWarnings = []string{"at most 5 threads", ThreadTime, "names no wall-clock interval", "FlightRecorderOptions"}

// TestAsyncProfilerModes: each mode of real async-profiler recordings, in
// both versions, is read as its own sample type and unit by default (CPU
// time, wall time, allocated bytes, lock waits), with none of the JDK
// sampler's warnings, and per stack every sample type holds what `jfr
// print --json` shows of the same file: cpu and itimer samples times the
// CPU interval the recording states (0: 10 ms), wall samples (each
// event's samples count) times its wall interval (0: 50 ms), allocations'
// bytes, lock waits' durations, and alloc and lock the sums of both
// allocation and both lock event types.
func TestAsyncProfilerModes(t *testing.T) {
	for _, v := range asprofVersions {
		for _, f := range asprofFiles {
			if f.only != "" && f.only != v {
				continue
			}
			t.Run(v+"-"+f.mode, func(t *testing.T) {
				t.Parallel()
				path := asprofPath(v, f.mode)
				p, warns := parseFile(t, path)
				i := sampleIndex(p, f.typ)
				if p.DefaultSampleType != f.typ || i < 0 || p.SampleType[i].Unit != f.unit {
					t.Errorf("default sample type %s of %v; want %s/%s", p.DefaultSampleType, p.SampleType, f.typ, f.unit)
				}
				for _, w := range falseWarnings {
					if slicesContain(warns, w) {
						t.Errorf("false warning %q in %q", w, warns)
					}
				}
				if sampleIndex(p, "execution-samples") >= 0 || sampleIndex(p, ThreadTime) >= 0 {
					t.Errorf("sample types %v: execution-samples or thread-time, the JDK sampler's, in async-profiler's recording", p.SampleType)
				}
				jdk(t)
				want := asprofTotals(t, reference(t, path))
				got := totals(p)
				for typ, stacks := range want {
					sameStacks(t, typ+" of jfr print", got[typ], stacks)
				}
				for typ := range got {
					if _, ok := want[typ]; !ok {
						t.Errorf("sample type %s, which jfr print's events do not make", typ)
					}
				}
			})
		}
	}
}

// asprofTotals sums `jfr print --json`'s events of an async-profiler
// recording per sample type and stack, as its documentation and source
// say each event counts. The settings are read by name (each name is a
// setting of one event type): event, interval (-i), wall (--wall).
func asprofTotals(t *testing.T, evs []refEvent) map[string]map[string]int64 {
	set := map[string]string{}
	for _, e := range evs {
		if e.Type == "jdk.ActiveSetting" {
			set[e.Values.Name] = e.Values.Value
		}
	}
	ns := func(s string, def int64) int64 {
		var n int64
		if _, err := fmt.Sscan(s, &n); err != nil {
			t.Fatalf("setting %q: %v", s, err)
		}
		if n == 0 {
			return def
		}
		return n
	}
	wallNs := func() int64 {
		if w, ok := set["wall"]; ok {
			return ns(w, 50e6)
		}
		return ns(set["interval"], 50e6)
	}
	out := map[string]map[string]int64{}
	add := func(typ string, e refEvent, v int64) {
		if out[typ] == nil {
			out[typ] = map[string]int64{}
		}
		out[typ][asprofStack(e)] += v
	}
	counts := map[string]int64{}
	for _, e := range evs {
		var state string
		if raw, ok := e.Values.all["state"]; ok {
			state = strings.Trim(string(raw), `"`)
		}
		switch _, wall := set["wall"]; {
		case e.Type == "jdk.ExecutionSample" && (set["event"] == "wall" || wall && state != "STATE_DEFAULT"):
			add(wallType, e, wallNs())
		case e.Type == "jdk.ExecutionSample":
			add(cpuTimeType, e, ns(set["interval"], 10e6))
		case e.Type == "profiler.WallClockSample":
			add(wallType, e, e.Values.number(t, "samples")*wallNs())
		case e.Type == "jdk.JavaMonitorEnter":
			add("monitor-enter", e, e.Values.number(t, "duration"))
			add("lock", e, e.Values.number(t, "duration"))
		case e.Type == "jdk.ThreadPark":
			add("park", e, e.Values.number(t, "duration"))
			add("lock", e, e.Values.number(t, "duration"))
		case e.Type == "jdk.ObjectAllocationInNewTLAB":
			add("alloc-in-new-tlab", e, e.Values.number(t, "tlabSize"))
			add("alloc", e, e.Values.number(t, "tlabSize"))
		case e.Type == "jdk.ObjectAllocationOutsideTLAB":
			add("alloc-outside-tlab", e, e.Values.number(t, "allocationSize"))
			add("alloc", e, e.Values.number(t, "allocationSize"))
		case e.Type == "jdk.ActiveSetting":
			continue
		default:
			t.Fatalf("event %s: not one of async-profiler's that the test knows", e.Type)
		}
		counts[asprofStack(e)]++
	}
	if len(out) > 0 {
		out[SamplesType] = counts
	}
	return out
}

// asprofStack is the Class.method:line;... key of an event's stack, as
// refStack, but with async-profiler's native frames (descriptor "()L;",
// "(Lk;)L;" in the kernel, whose "class" is the library) named by their
// bare symbol.
func asprofStack(e refEvent) string {
	var fs []string
	if e.Values.StackTrace != nil {
		for _, f := range e.Values.StackTrace.Frames {
			name := javaName(f.Method.Type.Name, f.Method.Type.Package.Name) + "." + f.Method.Name
			if d := f.Method.Descriptor; (d == "()L;" || d == "(Lk;)L;") && f.Method.Name != "" {
				name = f.Method.Name
			}
			fs = append(fs, fmt.Sprintf("%s:%d", name, f.LineNumber))
		}
	}
	return strings.Join(fs, ";")
}

// Where the tests find async-profiler's own converter of the build that
// made the recordings (testdata/README.md): a second oracle, run only
// where it is given.
const (
	converter29Env  = "PROFDIFF_ASPROF29_CONVERTER" // v2.9's build/converter.jar
	converter421Env = "PROFDIFF_ASPROF421_JFRCONV"  // v4.2.1's build/bin/jfrconv
)

// TestAsyncProfilerConverter: per stack, the default sample type of each
// recording (samples for cpu, itimer and wall: the value over the
// interval; allocated bytes for alloc; lock waits' nanoseconds for lock)
// is what async-profiler's own converter of the same build makes of it as
// collapsed stacks (with --total; its frames' _[j]-style suffixes
// dropped, and the allocated or lock class it puts on top of alloc and
// lock stacks).
func TestAsyncProfilerConverter(t *testing.T) {
	for _, v := range asprofVersions {
		env := map[string]string{"2.9": converter29Env, "4.2.1": converter421Env}[v]
		for _, mode := range []string{"cpu", "itimer", "wall", "wall-10ms", "alloc", "lock"} {
			t.Run(v+"-"+mode, func(t *testing.T) {
				t.Parallel()
				conv := os.Getenv(env)
				if conv == "" {
					t.Skipf("%s is not set: no async-profiler %s converter to compare with", env, v)
				}
				path := asprofPath(v, mode)
				want := converted(t, v, conv, path, mode)
				p, _ := parseFile(t, path)
				got := map[string]int64{}
				for _, s := range p.Sample {
					if strings.HasPrefix(s.Location[0].Line[0].Function.Name, "[no stack") {
						continue // an event without a stack, which the converter leaves out
					}
					var fs []string
					for i := len(s.Location) - 1; i >= 0; i-- {
						fs = append(fs, s.Location[i].Line[0].Function.Name)
					}
					// The default sample type: CPU or wall nanoseconds
					// (counted in samples, as the converter counts), lock
					// waits' nanoseconds, allocated bytes.
					n := s.Value[sampleIndex(p, p.DefaultSampleType)]
					if ns := map[string]int64{"cpu": 10e6, "itimer": 10e6, "wall": 50e6, "wall-10ms": 10e6}[mode]; ns > 0 {
						if n%ns != 0 {
							t.Fatalf("%s value %d: not a count of %d ns samples", p.DefaultSampleType, n, ns)
						}
						n /= ns
					}
					if n != 0 {
						got[strings.Join(fs, ";")] += n
					}
				}
				sameStacks(t, "the converter's", got, want)
			})
		}
	}
}

// sameStacks checks that got has the stacks of want, each within 0.5% of
// want's total, and no other.
func sameStacks(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	var total int64
	for _, n := range want {
		total += n
	}
	for stack, n := range want {
		if d := got[stack] - n; d*200 > total || -d*200 > total {
			t.Errorf("stack %q: %d, %s %d (total %d)", stack, got[stack], what, n, total)
		}
	}
	if len(got) != len(want) || total == 0 {
		t.Errorf("%d stacks, %s %d (total %d)", len(got), what, len(want), total)
	}
}

// converted runs async-profiler's converter over a recording of the mode
// and returns its collapsed stacks, root first, with the frame suffixes
// and, for alloc and lock, the class frame on top left out.
func converted(t *testing.T, version, conv, path, mode string) map[string]int64 {
	out := filepath.Join(t.TempDir(), "out.collapsed")
	kind := map[string]string{"cpu": "--cpu", "itimer": "--cpu", "wall": "--wall", "wall-10ms": "--wall", "alloc": "--alloc", "lock": "--lock"}[mode]
	var cmd *exec.Cmd
	if version == "2.9" {
		// 2.9 has no --wall (nor --cpu: it keeps STATE_RUNNABLE, which
		// its wall samples have too): every execution sample is the mode's.
		args := []string{"-cp", conv, "jfr2flame", "--collapsed", "--total"}
		if kind == "--alloc" || kind == "--lock" {
			args = append(args, kind)
		}
		cmd = exec.Command("java", append(args, path, out)...)
	} else {
		cmd = exec.Command(conv, "-o", "collapsed", kind, "--total", "--dot", path, out)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	suffix := regexp.MustCompile(`_\[[0-9a-z]\]$`)
	stacks := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("collapsed line %q", line)
		}
		fs := strings.Split(line[:i], ";")
		if mode == "alloc" || mode == "lock" {
			fs = fs[:len(fs)-1]
		}
		for j, f := range fs {
			// A Java frame's suffix (interpreted, JIT-compiled, inlined,
			// C1): its class is dotted as the reader does (2.9 writes
			// java/lang/Thread).
			if m := suffix.FindString(f); m != "" && m != "_[k]" {
				f = dotted(f)
			}
			fs[j] = suffix.ReplaceAllString(f, "")
		}
		stacks[strings.Join(fs, ";")] += n
	}
	return stacks
}
