package profile

import (
	"regexp"

	pprofile "github.com/google/pprof/profile"
)

// profilerFrame matches frames that only the profiler's own goroutines run:
// fgprof's sampling loop and runtime/pprof's profile writer and goroutine
// dumper (also reached through net/http/pprof), and the execution tracer's
// reader goroutine while a trace is being taken (runtime/trace.Start's, or in
// newer Go versions its multiplexer's), with the runtime's trace advancer and
// CPU-sample reader goroutines. runtime/pprof.Do and the
// label helpers run user code and are deliberately not matched.
var profilerFrame = regexp.MustCompile(`^(github\.com/felixge/fgprof\.|net/http/pprof\.|runtime/pprof\.(profileWriter|\(\*profileBuilder\)|writeGoroutine|writeRuntimeProfile|writeProfileInternal|writeHeap|writeAlloc|writeMutex|writeBlock|writeThreadCreate|\(\*Profile\)\.WriteTo|runtime_goroutineProfileWithLabels|StartCPUProfile|StopCPUProfile|readProfile)|runtime\.(goroutineProfileWithLabels\w*|pprof_goroutineProfileWithLabels|ReadTrace)$|runtime/trace\.Start\.func\d+$|runtime/trace\.\(\*traceMultiplexer\)\.startLocked\.func\d+$|runtime\.\(\*traceAdvancerState\)\.start\.func\d+$|runtime\.traceStartReadCPU\.func\d+$)`)

// DropProfilerSamples removes samples whose stack contains a profiler-only
// frame, and the samples a Go execution trace labels as the profiler's own
// goroutines' (LabelProfiler: the goroutine had such a frame in
// any of its stacks, so its time with no stack goes too), and returns how many sample records it removed. Locations and
// functions are left in place; they are harmless without samples.
func DropProfilerSamples(p *pprofile.Profile) int64 {
	// Match each function once; most profiles hold no profiler frame at
	// all, and then the samples need not be walked.
	profFn := map[*pprofile.Function]bool{}
	for _, fn := range p.Function {
		if fn != nil && IsProfilerFrame(fn.Name) {
			profFn[fn] = true
		}
	}
	if len(profFn) == 0 && !hasProfilerLabel(p) {
		return 0
	}
	profLoc := map[*pprofile.Location]bool{}
	for _, loc := range p.Location {
		for _, ln := range loc.Line {
			if profFn[ln.Function] {
				profLoc[loc] = true
				break
			}
		}
	}
	isProfiler := func(loc *pprofile.Location) bool { return profLoc[loc] }
	kept := p.Sample[:0]
	var dropped int64
	for _, s := range p.Sample {
		drop := len(s.Label) > 0 && len(s.Label[LabelProfiler]) > 0
		for _, loc := range s.Location {
			if drop {
				break
			}
			if isProfiler(loc) {
				drop = true
				break
			}
		}
		if drop {
			dropped++
			continue
		}
		kept = append(kept, s)
	}
	for i := len(kept); i < len(p.Sample); i++ {
		p.Sample[i] = nil
	}
	p.Sample = kept
	return dropped
}

func hasProfilerLabel(p *pprofile.Profile) bool {
	for _, s := range p.Sample {
		if len(s.Label) > 0 && len(s.Label[LabelProfiler]) > 0 {
			return true
		}
	}
	return false
}
