package jfr

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// asprofFiles are the recordings async-profiler 2.9 and 4.2.1 made of
// testdata/Turns.java (testdata/README.md says how), by mode, with the
// sample type each mode is read as by default and its unit.
var asprofFiles = []struct {
	mode, typ, unit string
}{
	{"cpu", cpuTimeType, "nanoseconds"},
	{"itimer", cpuTimeType, "nanoseconds"},
	{"wall", wallType, "nanoseconds"},
	{"wall-10ms", wallType, "nanoseconds"},
	{"alloc", "alloc-in-new-tlab", "bytes"},
	{"lock", "monitor-enter", "nanoseconds"},
	{"all", cpuTimeType, "nanoseconds"},
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
// bytes, lock waits' durations.
func TestAsyncProfilerModes(t *testing.T) {
	for _, v := range asprofVersions {
		for _, f := range asprofFiles {
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
					var total int64
					for _, n := range stacks {
						total += n
					}
					for stack, n := range stacks {
						if d := got[typ][stack] - n; d*200 > total || -d*200 > total {
							t.Errorf("%s, stack %q: %d, jfr print %d (total %d)", typ, stack, got[typ][stack], n, total)
						}
					}
					if len(got[typ]) != len(stacks) {
						t.Errorf("%s: %d stacks, jfr print %d", typ, len(got[typ]), len(stacks))
					}
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
			out[SamplesType] = map[string]int64{}
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
		case e.Type == "jdk.ThreadPark":
			add("park", e, e.Values.number(t, "duration"))
		case e.Type == "jdk.ObjectAllocationInNewTLAB":
			add("alloc-in-new-tlab", e, e.Values.number(t, "tlabSize"))
		case e.Type == "jdk.ObjectAllocationOutsideTLAB":
			add("alloc-outside-tlab", e, e.Values.number(t, "allocationSize"))
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
