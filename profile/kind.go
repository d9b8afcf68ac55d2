package profile

import (
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/labels"
	"github.com/profdiff/profdiff/profile/internal/perfevent"
	"github.com/profdiff/profdiff/profile/kind"
)

// Kind says what a profile's samples measure (package profile/kind: the
// names are part of the JSON output, `"kind"`).
type Kind = kind.Kind

const (
	KindCPU       = kind.CPU
	KindWall      = kind.Wall
	KindMutex     = kind.Mutex
	KindBlock     = kind.Block
	KindGoroutine = kind.Goroutine
	KindTrace     = kind.Trace
	KindHeap      = kind.Heap
	KindUnknown   = kind.Unknown
)

// Kinds lists every kind in a fixed order, for flag help and validation.
var Kinds = kind.Kinds

// ParseKind reads a kind by its name, in any case (kind.Parse).
func ParseKind(s string) (Kind, error) { return kind.Parse(s) }

// DetectKind infers the kind from the sample and period types, the way the
// writers set them:
//
//	Go CPU:        samples/count, cpu/nanoseconds; period cpu/nanoseconds
//	fgprof:        samples/count, time/nanoseconds; period wallclock/nanoseconds
//	Go mutex:      contentions/count, delay/nanoseconds; leaves are Unlock
//	Go block:      contentions/count, delay/nanoseconds; leaves are Lock, chanrecv, ...
//	gperftools:    contentions/count, delay/microseconds (lock contention)
//	Go goroutine:  goroutine/count (threadcreate/count and legacy thread/count
//	               are snapshots of threads, read the same way)
//	heap:          alloc_*/inuse_* or space/bytes
//
// A profile profdiff built from a Go execution trace (and wrote out again
// as pprof) says so in a comment, and a JFR recording's by
// its thread-time sample type; their samples' labels do not decide (perf
// sched_switch off-CPU time sets them too).
//
// Go writes mutex and block profiles with identical types, so the two are told
// apart by their frames: a mutex profile's stacks end in an unlock.
func DetectKind(p *pprofile.Profile) Kind {
	has := func(typ string) bool {
		for _, st := range p.SampleType {
			if st.Type == typ {
				return true
			}
		}
		return false
	}
	period := ""
	if p.PeriodType != nil {
		period = p.PeriodType.Type + "/" + p.PeriodType.Unit
	}
	switch {
	case fromGoTrace(p):
		return KindTrace
	case has(jfrThreadTime):
		// A JFR recording's thread time, a sample type only the JFR
		// reader writes, is time per state of every thread (the
		// registry's kind for JFR): so it stays after a pprof round trip.
		return KindWall
	case period == "wall/nanoseconds" || period == "wallclock/nanoseconds" || has("wall") || has("wallclock"):
		return KindWall
	case has("cpu") || period == "cpu/nanoseconds":
		return KindCPU
	case p.PeriodType != nil && perfevent.OnCPU(p.PeriodType.Type):
		// perf script: cycles, instructions, cpu-clock, task-clock, ...
		return KindCPU
	case has("contentions") || has("delay"):
		if looksLikeMutex(p) {
			return KindMutex
		}
		return KindBlock
	case has("goroutine") || has("goroutines") || has("threads") || has("thread") || has("threadcreate"):
		return KindGoroutine
	case has("alloc_objects") || has("alloc_space") || has("inuse_objects") || has("inuse_space") || has("space") || has("objects"):
		return KindHeap
	case has("samples") && p.PeriodType != nil && strings.Contains(p.PeriodType.Type, "cpu"):
		return KindCPU
	}
	return KindUnknown
}

// jfrThreadTime is jfr.ThreadTime (kind detection imports no format
// package; TestKindJFRThreadTime checks that the two agree).
const jfrThreadTime = "thread-time"

// looksLikeMutex reports whether most leaf frames of a contention profile are
// unlock calls (Go mutex profile) rather than lock/channel calls (Go block
// profile). Legacy (non-Go) contention profiles record the contended lock and
// are lock contention too, so a profile whose leaves are not Go is a mutex
// profile.
func looksLikeMutex(p *pprofile.Profile) bool {
	unlock, goBlock := 0, 0
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 || s.Location[0].Line[0].Function == nil {
			continue
		}
		name := s.Location[0].Line[0].Function.Name
		switch {
		case strings.HasSuffix(name, "Unlock") || strings.HasSuffix(name, "RUnlock") || name == "runtime.unlock" || strings.HasSuffix(name, "unlockSlow"):
			unlock++
		case strings.HasPrefix(name, "sync.") || strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "internal/"):
			goBlock++
		}
	}
	return unlock > 0 || goBlock == 0
}

// fromGoTrace reports whether p is goroutine time read from a Go execution
// trace: only the reader's comment (labels.GoTraceComment), which it puts
// on every profile it builds and which pprof keeps, says so. Sample labels
// do not: JFR recordings and perf sched_switch off-CPU time set LabelBucket
// too (a perf off-CPU profile's preempted records say "sched").
func fromGoTrace(p *pprofile.Profile) bool {
	for _, c := range p.Comments {
		if strings.HasPrefix(c, labels.GoTraceComment) {
			return true
		}
	}
	return false
}
