package profile

import (
	"strings"
	"testing"
)

func TestDropProfilerSamples(t *testing.T) {
	p := noisyProfile()
	if n := DropProfilerSamples(p); n != 2 {
		t.Fatalf("dropped %d, want 2", n)
	}
	var left []string
	for _, s := range p.Sample {
		left = append(left, strings.Join(funcNames(s), ";"))
	}
	want := []string{"main.handle;runtime/pprof.Do;main.serve;runtime.goexit", "main.compute;main.main;runtime.main"}
	if strings.Join(left, "\n") != strings.Join(want, "\n") {
		t.Errorf("kept\n%s\nwant\n%s", strings.Join(left, "\n"), strings.Join(want, "\n"))
	}
	if err := p.CheckValid(); err != nil {
		t.Errorf("CheckValid after dropping: %v", err)
	}
	if n := DropProfilerSamples(p); n != 0 {
		t.Errorf("second call dropped %d", n)
	}
}

func TestProfilerFrames(t *testing.T) {
	for name, want := range map[string]bool{
		"github.com/felixge/fgprof.Start.func1":                  true,
		"github.com/felixge/fgprof.(*profiler).GoroutineProfile": true,
		"runtime/pprof.profileWriter":                            true,
		"runtime/pprof.(*profileBuilder).addCPUData":             true,
		"runtime/pprof.writeGoroutine":                           true,
		"runtime/pprof.(*Profile).WriteTo":                       true,
		"runtime/pprof.StartCPUProfile":                          true,
		"runtime/pprof.readProfile":                              true,
		"runtime.goroutineProfileWithLabels":                     true,
		"runtime.pprof_goroutineProfileWithLabels":               true,
		"net/http/pprof.Index":                                   true,
		"runtime/pprof.Do":                                       false,
		"runtime/pprof.Labels":                                   false,
		"runtime/pprof.SetGoroutineLabels":                       false,
		"runtime/pprof.WithLabels":                               false,
		"main.profileWriter":                                     false,
		"github.com/felixge/fgprofx.Start":                       false,
		"example.com/runtime/pprof.profileWriter":                false,
	} {
		if got := profilerFrame.MatchString(name); got != want {
			t.Errorf("%s: profiler frame = %v, want %v", name, got, want)
		}
	}
}

func TestDropProfilerSamplesEmpty(t *testing.T) {
	p := buildTestProfile([]string{"samples/count"}, "", 1, nil)
	if n := DropProfilerSamples(p); n != 0 {
		t.Errorf("dropped %d", n)
	}
	p = buildTestProfile([]string{"samples/count"}, "", 1, []testStack{{frames: nil, values: []int64{1}}})
	if n := DropProfilerSamples(p); n != 0 || len(p.Sample) != 1 {
		t.Errorf("stackless sample: dropped %d", n)
	}
}

// The goroutine that drains an execution trace (runtime/trace.Start →
// runtime.ReadTrace) exists only while a trace is taken; a user's own
// trace annotations are their code.
func TestTraceReaderIsProfilerNoise(t *testing.T) {
	for name, want := range map[string]bool{
		"runtime.ReadTrace":                                   true,
		"runtime/trace.Start.func1":                           true,
		"runtime/trace.(*traceMultiplexer).startLocked.func1": true,
		"runtime.(*traceAdvancerState).start.func1":           true,
		"runtime.traceStartReadCPU.func1":                     true,
		"runtime/trace.WithRegion":                            false,
		"runtime/trace.(*Task).End":                           false,
		"runtime.ReadTraceStats":                              false,
	} {
		if got := profilerFrame.MatchString(name); got != want {
			t.Errorf("%s: profiler frame = %v, want %v", name, got, want)
		}
	}
}
