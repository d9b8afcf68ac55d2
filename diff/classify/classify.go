// Package classify is the engine's classification stage: a pure function
// (Decide) from a sample's frames, its record's labels and its profile's
// kind to the sample's bucket, whether its time is kept apart from the
// buckets, and the frame that decided. A Frame is what the classifier
// knows of one frame, worked out once per method and kind from the rule
// tables (RuleOf, package diff/rules) and marked per location. The
// aggregation that sums the decided samples is package diff's Analyzer.
package classify

import (
	"strings"

	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
)

// Frame is what the classifier needs to know about one frame, computed
// once per distinct function: the fields of the rule that matched it (if
// ruled) that classification reads, copied, and what its name says, in
// four pointer-free bytes. A frame of the walk copies its method's
// (Analyzer.mfr), with no write barrier and nothing for the collector to
// scan, and reading its rule is no second load. The zero value is a rule
// not worked out yet (known is clear).
type Frame struct {
	strength rules.Strength
	bucket   Bucket
	flags    uint16
}

// Frame flags.
const (
	frKnown     = 1 << iota // worked out (FrameOf)
	frRuled                 // a rule matched; strength, bucket and the next three are its
	frNotLeaf               // Rule.NotLeaf
	frExternal              // Rule.External
	frFallback              // Rule.Fallback
	frPreempt               // runtime.asyncPreempt*: an interrupt, not a real callee
	frSynthetic             // "[running]" and other bracketed pseudo-frames
	frSysModule             // the frame's module is a system library's: set per frame (InSystem), never memoized
	frLeaf                  // Rule.Leaf
)

// RuleOf is the Frame of a native frame (or one that can be) of a
// normalized name in a profile of kind k: its rule is rules.Set.Match's.
func RuleOf(rs *rules.Set, normalized string, k profile.Kind) Frame {
	return frameOf(rs.Match(normalized, k), normalized)
}

// ScriptRuleOf is RuleOf for a script's frame (a JavaScript, Python or
// Ruby function, by its source file): its rule is rules.Set.MatchScript's,
// never one marked native, which names a C library or kernel function.
func ScriptRuleOf(rs *rules.Set, normalized string, k profile.Kind) Frame {
	return frameOf(rs.MatchScript(normalized, k), normalized)
}

// frameOf is the Frame of a name whose rule is r (nil: none).
func frameOf(r *rules.Rule, normalized string) Frame {
	fr := Frame{flags: frKnown | flagIf(strings.HasPrefix(normalized, "runtime.asyncPreempt"), frPreempt) |
		flagIf(len(normalized) > 2 && normalized[0] == '[' && normalized[len(normalized)-1] == ']', frSynthetic)}
	if r != nil {
		fr.strength, fr.bucket = r.Strength, r.Bucket
		fr.flags |= frRuled | flagIf(r.NotLeaf, frNotLeaf) | flagIf(r.Leaf, frLeaf) | flagIf(r.External, frExternal) | flagIf(r.Fallback, frFallback)
	}
	return fr
}

// flagIf is flag when on, else 0.
func flagIf(on bool, flag uint16) uint16 {
	if on {
		return flag
	}
	return 0
}

// Pseudo is the frame of a pseudo-frame: a thread's name the reader made
// the stack's root (Analyzer.commRoot), which never decides.
func Pseudo() Frame { return Frame{flags: frKnown | frSynthetic} }

// inSystem is f marked as a frame in a system library's module, when sys.
func (f Frame) InSystem(sys bool) Frame {
	f.flags |= flagIf(sys, frSysModule)
	return f
}

func (f Frame) Known() bool     { return f.flags&frKnown != 0 }
func (f Frame) SysModule() bool { return f.flags&frSysModule != 0 }
func (f Frame) Ruled() bool     { return f.flags&frRuled != 0 }
func (f Frame) NotLeaf() bool   { return f.flags&frNotLeaf != 0 }
func (f Frame) Leaf() bool      { return f.flags&frLeaf != 0 }
func (f Frame) External() bool  { return f.flags&frExternal != 0 }
func (f Frame) Fallback() bool  { return f.flags&frFallback != 0 }
func (f Frame) Preempt() bool   { return f.flags&frPreempt != 0 }
func (f Frame) Synthetic() bool { return f.flags&frSynthetic != 0 }

// plain reports whether nothing marks the frame: no rule matched it, and
// it is neither a preemption nor a pseudo-frame.
func (f Frame) Plain() bool { return f.flags&^frKnown == 0 }

// skip reports whether a skip rule matched the frame.
func (f Frame) Skip() bool { return f.Ruled() && f.strength == rules.Skip }

// recordBucket is labelBucket for a record's labels.
func recordBucket(rec *pull.Record, key, apart string) (b Bucket, isApart, ok bool) {
	if len(rec.Labels) == 0 {
		return 0, false, false
	}
	v, one := rec.Label(key)
	if !one {
		return 0, false, false
	}
	return LabelValue(v, apart)
}

// LabelValue reads a label's value as a bucket name, or as apart.
func LabelValue(v, apart string) (b Bucket, isApart, ok bool) {
	if v == apart {
		return 0, true, true
	}
	b, err := rules.ParseBucket(v)
	return b, false, err == nil
}

// labelDecider is the deciding frame of a sample whose bucket a label
// gave: the first frame that is neither a skip frame nor a synthetic one
// (a trace's "[running]" leaf), so --by decider and --by caller reach the
// stack where the goroutine blocked or resumed. Else the leaf.
func labelDecider(frames []Frame) int {
	for i, f := range frames {
		if !f.Synthetic() && !f.Skip() {
			return i
		}
	}
	return LeafIndex(frames)
}

// Stack decides the bucket of one stack, given leaf first, and returns the
// index of the frame that decided it (the leaf-most non-skip frame when no
// rule did, or -1 for an empty stack).
//
// The order is: the strong frame nearest the leaf; a GC context anywhere in
// the stack overrides a lock verdict (lock contention inside the collector is
// GC), and a strong GC frame above a lock or io verdict does too (the
// collector's own locks and netpoll); else the weak frame nearest the leaf, considering only frames below
// the first context frame (a scheduler loop's own mechanism frames are not
// the sample's wait); else the nearest context frame; else the fallback
// bucket of the skip frame nearest the leaf (a libc futex wait); else cpu.
//
// A rule marked external counts only for the first non-skip frame above an
// external marker (TraceEvent's UNMANAGED_CODE_TIME): the managed frame
// that called into native code, which an event loop's Run names a wait.
//
// Kind adjusts the verdict: every sample of a mutex profile is lock
// contention (decided by its leaf, the unlocker), and block profiles and
// traces record only off-CPU time, so what no rule claims there is wait.
//
// The returned How says whether anything decided: unclaimed when no rule
// and no kind did (the bucket is then the default, cpu, which a sample's
// profile.LabelFallback label replaces), unclaimedExternal when, in
// addition, the sample is external (below an external marker): native code
// or blocked in the OS, which the frames cannot tell apart.
func Stack(frames []Frame, kind profile.Kind) (Bucket, int, How) {
	leaf := -1
	strongAt, weakAt, ctxAt, gcCtxAt, gcAbove, fallAt := -1, -1, -1, -1, -1, -1
	sawCallee, extBelow := false, false
	ranBelow := false // a callee other than skip frames and preemption: a leaf rule no longer counts
	for i := 0; i < len(frames); i++ {
		f := frames[i]
		if f.Plain() {
			// Most of a stack: the program's own frames, one rule-free
			// run after another, each doing what the first does.
			if leaf < 0 {
				leaf = i
			}
			sawCallee, extBelow, ranBelow = true, false, true
			for i+1 < len(frames) && frames[i+1].Plain() {
				i++
			}
			continue
		}
		if f.Skip() {
			if !f.Preempt() {
				sawCallee = true
			}
			extBelow = extBelow || f.External()
			if f.Fallback() && fallAt < 0 {
				fallAt = i
			}
			continue
		}
		ruled := f.Ruled() && (!f.External() || extBelow) && (!f.Leaf() || !ranBelow)
		extBelow = false
		if leaf < 0 {
			leaf = i
		}
		if ruled {
			switch f.strength {
			case rules.Strong:
				if strongAt < 0 && (!f.NotLeaf() || sawCallee) {
					strongAt = i
				} else if strongAt >= 0 && f.bucket == rules.GC && gcAbove < 0 {
					gcAbove = i
				}
			case rules.Weak:
				if weakAt < 0 && ctxAt < 0 {
					weakAt = i
				}
			case rules.Ctx:
				if ctxAt < 0 {
					ctxAt = i
				}
				if f.bucket == rules.GC && gcCtxAt < 0 {
					gcCtxAt = i
				}
			}
		}
		if !f.Preempt() {
			sawCallee, ranBelow = true, true
		}
	}
	if leaf < 0 && len(frames) > 0 {
		leaf = 0
	}
	b, at, h := rules.CPU, leaf, Ruled
	switch {
	case kind == profile.KindMutex:
		return rules.LockContention, leaf, Ruled
	case strongAt >= 0:
		b, at = frames[strongAt].bucket, strongAt
	case weakAt >= 0:
		b, at = frames[weakAt].bucket, weakAt
	case ctxAt >= 0:
		b, at = frames[ctxAt].bucket, ctxAt
	case fallAt >= 0:
		b, at = frames[fallAt].bucket, fallAt
	case external(frames):
		h = UnclaimedExternal
	default:
		h = Unclaimed
	}
	switch {
	case b == rules.LockContention && gcCtxAt >= 0:
		b, at = rules.GC, gcCtxAt
	case (b == rules.LockContention || b == rules.IO) && gcAbove > at:
		// A runtime lock taken by the collector itself (runtime.lock2
		// under gcMarkTermination, say), or the netpoll that starting
		// the world runs (EpollWait under gcMarkTermination): GC
		// overhead, not the program's contention or I/O.
		b, at = rules.GC, gcAbove
	}
	if b == rules.CPU && (kind == profile.KindBlock || kind == profile.KindTrace) {
		b, h = rules.Wait, Ruled
	}
	return b, at, h
}

// how says what decided a sample's bucket.
type How uint8

const (
	Ruled             How = iota // a frame rule or the profile's kind
	Unclaimed                    // nothing: the default, cpu
	UnclaimedExternal            // nothing, in an external sample
)

// external reports whether a stack holds an external marker (a skip rule
// marked external: TraceEvent's UNMANAGED_CODE_TIME).
func external(frames []Frame) bool {
	for _, f := range frames {
		if f.Skip() && f.External() {
			return true
		}
	}
	return false
}

// Apart says why a sample's time is kept apart from the buckets.
type Apart uint8

const (
	InBucket Apart = iota // in its bucket
	// Sched is scheduler latency: runnable time (a Go trace's runnable
	// goroutines, a thread preempted in a perf sched_switch trace, a
	// goroutine not yet started), waiting for a CPU.
	Sched
	// Unknown is native-or-blocked time nothing can place: an external
	// sample (.NET's UNMANAGED_CODE_TIME: the thread is in native code or
	// blocked in the OS) under managed frames that name no wait. Counting
	// it as cpu would call an idle thread busy; as wait, a busy one idle.
	Unknown
)

// collectorAt is the index of the leaf-most frame a strong gc rule claims
// (runtime.gcMarkDone, gcAssistAlloc, gcBgMarkWorker), or -1. With
// rootOnly, only a collector goroutine's own root counts (gcBgMarkWorker,
// bgsweep): a trace's running interval has the stack it resumed at, and a
// goroutine that resumed inside an assist goes on to run its own code.
func collectorAt(frames []Frame, rootOnly bool) int {
	gcAt := func(i int) bool {
		f := frames[i]
		return f.Ruled() && f.strength == rules.Strong && f.bucket == rules.GC
	}
	if rootOnly {
		for i := len(frames) - 1; i >= 0; i-- {
			if frames[i].Skip() {
				continue
			}
			if gcAt(i) {
				return i
			}
			return -1
		}
		return -1
	}
	for i := range frames {
		if gcAt(i) {
			return i
		}
	}
	return -1
}

// fallbackOf returns the bucket a sample's profile.LabelFallback label names:
// what the format knows of time no frame rule claims (wait, for a thread
// blocked off the CPU), or unknown for profile.FallbackUnknown (a thread
// in native code or blocked: kept apart as Unknown).
func fallbackOf(rec *pull.Record) (b Bucket, unknown, ok bool) {
	return recordBucket(rec, profile.LabelFallback, profile.FallbackUnknown)
}

// parkedCollector reports a trace's collector goroutine (gcBgMarkWorker,
// bgsweep, bgscavenge: a strong gc frame at its root) waiting with nothing
// that says more between its parking and its root: idle until the next
// cycle, as a reason of "system goroutine wait" says when the trace knows
// it (IdleSystem). A goroutine blocked before the trace began has no known
// reason, so its frames decide, and their rule would call it GC work.
func parkedCollector(rec *pull.Record, frames []Frame, decider int, kind profile.Kind) bool {
	if kind != profile.KindTrace || decider < 0 {
		return false
	}
	st, ok := rec.Label(profile.LabelState)
	return ok && st == "waiting" && decider == collectorAt(frames, true)
}

// Running reports whether a trace sample is a running interval.
func Running(rec *pull.Record) bool {
	st, ok := rec.Label(profile.LabelState)
	return ok && st == "running"
}

// IdleSystem reports whether a trace sample is an idle collector
// goroutine: a mark worker or scavenger parked until the next cycle
// ("system goroutine wait") or the sweeper with nothing to sweep. They
// wait between cycles; wall-clock profiles never see them (goroutine
// profiles omit system goroutines), so they stay wait.
func IdleSystem(rec *pull.Record) bool {
	r, ok := rec.Label(profile.LabelReason)
	return ok && (r == "system goroutine wait" || r == "GC background sweeper wait")
}

// LeafIndex is the first frame that is not a skip frame (the frame a sample's
// own time is spent in), or 0.
func LeafIndex(frames []Frame) int {
	for i, f := range frames {
		if !f.Skip() {
			return i
		}
	}
	return 0
}

// Decide is the classification: the bucket of a sample, whether its time
// is kept apart from the buckets, and the index of the frame that decided
// (-1 for an empty stack). It is a function of the sample's frames (leaf
// first, each its method's Frame for the profile's kind, marked per
// location with InSystem), its record's labels, the profile's kind and
// whether it is a goroutine not started yet (notStarted: a wall or
// goroutine sample of runtime.goexit alone), and of nothing a walk met
// before: any split of the samples decides each the same. What the format
// recorded (a trace's block reason, profile's label contract) decides
// before frame names do.
func Decide(frames []Frame, rec *pull.Record, kind profile.Kind, notStarted bool) (b Bucket, apart Apart, decider int) {
	lb, lsched, lok := recordBucket(rec, profile.LabelBucket, profile.SchedLatency)
	if !lok && notStarted {
		lb, lsched, lok = 0, true, true
	}
	switch {
	case lok && !lsched && lb != rules.GC && !IdleSystem(rec) && collectorAt(frames, Running(rec)) >= 0:
		// A goroutine blocked (on any reason: a GC assist parks with
		// "sync") inside the collector, or a collector goroutine running,
		// is GC work, as the frame rules say of the same stack in a
		// wall-clock profile.
		b, apart, decider = rules.GC, InBucket, collectorAt(frames, Running(rec))
	case lok:
		b, apart, decider = lb, InBucket, labelDecider(frames)
		if lsched {
			apart = Sched
		}
	default:
		var h How
		apart = InBucket
		b, decider, h = Stack(frames, kind)
		if b == rules.GC && parkedCollector(rec, frames, decider, kind) {
			b = rules.Wait
		}
		if h != Ruled {
			switch fb, unknown, ok := fallbackOf(rec); {
			case ok && unknown:
				apart = Unknown
			case ok:
				b = fb
			case h == UnclaimedExternal:
				apart = Unknown
			}
		}
	}
	if len(frames) == 0 {
		decider = -1
	}
	return b, apart, decider
}

// Bucket is where a sample's time went (rules.Bucket).
type Bucket = rules.Bucket
