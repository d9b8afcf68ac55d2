package profile

import "github.com/profdiff/profdiff/profile/internal/perfevent"

// TypeKind is the kind of one sample type of a loaded profile: what the
// values of the type at index idx measure. A profile's Kind is its default
// type's; a format whose types measure different things says per type:
//
//   - perf script: an on-CPU event (cpu-clock, cycles, ...) is cpu, the
//     off-CPU time of sched_switch records (off-cpu) is wall.
//   - JFR: execution samples and async-profiler's cpu-time are cpu; the
//     combined thread time, native samples and async-profiler's wall
//     samples are wall (every thread, whatever it does); a duration event
//     (monitor enter and wait, park, sleep, socket and file I/O, native
//     locks, GC pauses and phases, safepoints, and async-profiler's lock,
//     their sum) is block (off-CPU time, recorded above a threshold); the
//     allocation types (and async-profiler's alloc, their sum) are heap.
//
// Any other type, or another format, is the profile's Kind.
func TypeKind(l *Loaded, idx int) Kind {
	p := l.Profile
	if p == nil || idx < 0 || idx >= len(p.SampleType) {
		return l.Kind
	}
	return KindOfType(l, p.SampleType[idx].Type)
}

// KindOfType is TypeKind of the sample type named typ, which the profile
// need not have (a JFR recording without sleeps has no sleep type).
func KindOfType(l *Loaded, typ string) Kind {
	switch l.Format {
	case FormatPerfScript:
		switch {
		case typ == "off-cpu":
			return KindWall
		case perfevent.OnCPU(typ):
			return KindCPU
		}
	case FormatJFR:
		if k, ok := jfrTypeKinds[typ]; ok {
			return k
		}
	}
	return l.Kind
}

// jfrTypeKinds are the kinds of the JFR reader's sample types (see package
// jfr).
var jfrTypeKinds = map[string]Kind{
	"thread-time": KindWall, "native-samples": KindWall, "wall": KindWall, "wall-samples": KindWall,
	"execution-samples": KindCPU, "cpu-time": KindCPU,
	"monitor-enter": KindBlock, "monitor-wait": KindBlock, "park": KindBlock, "sleep": KindBlock,
	"socket-read": KindBlock, "socket-write": KindBlock, "file-read": KindBlock, "file-write": KindBlock,
	"native-lock": KindBlock, "gc-pause": KindBlock, "gc-phase-pause": KindBlock, "safepoint": KindBlock,
	"alloc-sample": KindHeap, "alloc-in-new-tlab": KindHeap, "alloc-outside-tlab": KindHeap, "live": KindHeap, "malloc": KindHeap,
	// async-profiler's combined lock waits (monitor enters and parks) and
	// allocations (in new TLABs and outside).
	"lock": KindBlock, "alloc": KindHeap,
}
