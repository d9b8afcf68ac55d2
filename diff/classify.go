package diff

import (
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
	"github.com/profdiff/profdiff/symbolize"
)

// frameRule is what the classifier needs to know about one frame, computed
// once per distinct function: the fields of the rule that matched it (if
// ruled) that classification reads, copied, and what its name says, in
// four pointer-free bytes. A frame of the walk copies its method's
// (Analyzer.mfr), with no write barrier and nothing for the collector to
// scan, and reading its rule is no second load. The zero value is a rule
// not worked out yet (known is clear).
type frameRule struct {
	strength Strength
	bucket   Bucket
	flags    uint8
}

// frameRule flags.
const (
	frKnown     = 1 << iota // worked out (frameRuleOf)
	frRuled                 // a rule matched; strength, bucket and the next three are its
	frNotLeaf               // Rule.NotLeaf
	frExternal              // Rule.External
	frFallback              // Rule.Fallback
	frPreempt               // runtime.asyncPreempt*: an interrupt, not a real callee
	frSynthetic             // "[running]" and other bracketed pseudo-frames
	frSysModule             // the frame's module is a system library's (frame.sys): set per frame, never memoized
)

func ruleOf(rs *RuleSet, normalized string, k profile.Kind) frameRule {
	fr := frameRule{flags: frKnown | flagIf(strings.HasPrefix(normalized, "runtime.asyncPreempt"), frPreempt) |
		flagIf(len(normalized) > 2 && normalized[0] == '[' && normalized[len(normalized)-1] == ']', frSynthetic)}
	if r := rs.Match(normalized, k); r != nil {
		fr.strength, fr.bucket = r.Strength, r.Bucket
		fr.flags |= frRuled | flagIf(r.NotLeaf, frNotLeaf) | flagIf(r.External, frExternal) | flagIf(r.Fallback, frFallback)
	}
	return fr
}

// flagIf is flag when on, else 0.
func flagIf(on bool, flag uint8) uint8 {
	if on {
		return flag
	}
	return 0
}

// syntheticFrame is the frame rule of a pseudo-frame (commRoot's).
var syntheticFrame = frameRule{flags: frKnown | frSynthetic}

// inSystem is f marked as a frame in a system library's module, when sys.
func (f frameRule) inSystem(sys bool) frameRule {
	f.flags |= flagIf(sys, frSysModule)
	return f
}

func (f frameRule) known() bool     { return f.flags&frKnown != 0 }
func (f frameRule) sysModule() bool { return f.flags&frSysModule != 0 }
func (f frameRule) ruled() bool     { return f.flags&frRuled != 0 }
func (f frameRule) notLeaf() bool   { return f.flags&frNotLeaf != 0 }
func (f frameRule) external() bool  { return f.flags&frExternal != 0 }
func (f frameRule) fallback() bool  { return f.flags&frFallback != 0 }
func (f frameRule) preempt() bool   { return f.flags&frPreempt != 0 }
func (f frameRule) synthetic() bool { return f.flags&frSynthetic != 0 }

// plain reports whether nothing marks the frame: no rule matched it, and
// it is neither a preemption nor a pseudo-frame.
func (f frameRule) plain() bool { return f.flags&^frKnown == 0 }

// skip reports whether a skip rule matched the frame.
func (f frameRule) skip() bool { return f.ruled() && f.strength == Skip }

// LabelledBucket returns the bucket a sample's profile.LabelBucket label
// names. A Go execution trace decides it from the goroutine's recorded
// state and block reason, which say more than frame names, so the engine
// uses it instead of the frame rules. sched reports runnable time
// (scheduler latency), which is in no bucket; ok is false when the sample
// has no such label (or an unknown value).
func LabelledBucket(s *pprofile.Sample) (b Bucket, sched, ok bool) {
	return labelBucket(s, profile.LabelBucket, profile.SchedLatency)
}

// recordBucket is labelBucket for a record's labels.
func recordBucket(rec *pull.Record, key, apart string) (b Bucket, isApart, ok bool) {
	if len(rec.Labels) == 0 {
		return 0, false, false
	}
	v, one := rec.Label(key)
	if !one {
		return 0, false, false
	}
	return labelValue(v, apart)
}

// labelValue reads a label's value as a bucket name, or as apart.
func labelValue(v, apart string) (b Bucket, isApart, ok bool) {
	if v == apart {
		return 0, true, true
	}
	b, err := ParseBucket(v)
	return b, false, err == nil
}

// labelBucket reads a sample's single-valued label key as a bucket name,
// or as apart, the value that keeps the sample out of the buckets (apart
// true); ok is false when the sample has no such label or an unknown value.
func labelBucket(s *pprofile.Sample, key, apart string) (b Bucket, isApart, ok bool) {
	v := s.Label[key]
	if len(v) != 1 {
		return 0, false, false
	}
	return labelValue(v[0], apart)
}

// labelDecider is the deciding frame of a sample whose bucket a label
// gave: the first frame that is neither a skip frame nor a synthetic one
// (a trace's "[running]" leaf), so --by decider and --by caller reach the
// stack where the goroutine blocked or resumed. Else the leaf.
func labelDecider(frames []frameRule) int {
	for i, f := range frames {
		if !f.synthetic() && !f.skip() {
			return i
		}
	}
	return leafIndex(frames)
}

// classify decides the bucket of one stack, given leaf first, and returns the
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
// The returned how says whether anything decided: unclaimed when no rule
// and no kind did (the bucket is then the default, cpu, which a sample's
// profile.LabelFallback label replaces), unclaimedExternal when, in
// addition, the sample is external (below an external marker): native code
// or blocked in the OS, which the frames cannot tell apart.
func classify(frames []frameRule, kind profile.Kind) (Bucket, int, how) {
	leaf := -1
	strongAt, weakAt, ctxAt, gcCtxAt, gcAbove, fallAt := -1, -1, -1, -1, -1, -1
	sawCallee, extBelow := false, false
	for i := 0; i < len(frames); i++ {
		f := frames[i]
		if f.plain() {
			// Most of a stack: the program's own frames, one rule-free
			// run after another, each doing what the first does.
			if leaf < 0 {
				leaf = i
			}
			sawCallee, extBelow = true, false
			for i+1 < len(frames) && frames[i+1].plain() {
				i++
			}
			continue
		}
		if f.skip() {
			if !f.preempt() {
				sawCallee = true
			}
			extBelow = extBelow || f.external()
			if f.fallback() && fallAt < 0 {
				fallAt = i
			}
			continue
		}
		ruled := f.ruled() && (!f.external() || extBelow)
		extBelow = false
		if leaf < 0 {
			leaf = i
		}
		if ruled {
			switch f.strength {
			case Strong:
				if strongAt < 0 && (!f.notLeaf() || sawCallee) {
					strongAt = i
				} else if strongAt >= 0 && f.bucket == GC && gcAbove < 0 {
					gcAbove = i
				}
			case Weak:
				if weakAt < 0 && ctxAt < 0 {
					weakAt = i
				}
			case Ctx:
				if ctxAt < 0 {
					ctxAt = i
				}
				if f.bucket == GC && gcCtxAt < 0 {
					gcCtxAt = i
				}
			}
		}
		if !f.preempt() {
			sawCallee = true
		}
	}
	if leaf < 0 && len(frames) > 0 {
		leaf = 0
	}
	b, at, h := CPU, leaf, ruled
	switch {
	case kind == profile.KindMutex:
		return LockContention, leaf, ruled
	case strongAt >= 0:
		b, at = frames[strongAt].bucket, strongAt
	case weakAt >= 0:
		b, at = frames[weakAt].bucket, weakAt
	case ctxAt >= 0:
		b, at = frames[ctxAt].bucket, ctxAt
	case fallAt >= 0:
		b, at = frames[fallAt].bucket, fallAt
	case external(frames):
		h = unclaimedExternal
	default:
		h = unclaimed
	}
	switch {
	case b == LockContention && gcCtxAt >= 0:
		b, at = GC, gcCtxAt
	case (b == LockContention || b == IO) && gcAbove > at:
		// A runtime lock taken by the collector itself (runtime.lock2
		// under gcMarkTermination, say), or the netpoll that starting
		// the world runs (EpollWait under gcMarkTermination): GC
		// overhead, not the program's contention or I/O.
		b, at = GC, gcAbove
	}
	if b == CPU && (kind == profile.KindBlock || kind == profile.KindTrace) {
		b, h = Wait, ruled
	}
	return b, at, h
}

// how says what decided a sample's bucket.
type how uint8

const (
	ruled             how = iota // a frame rule or the profile's kind
	unclaimed                    // nothing: the default, cpu
	unclaimedExternal            // nothing, in an external sample
)

// external reports whether a stack holds an external marker (a skip rule
// marked external: TraceEvent's UNMANAGED_CODE_TIME).
func external(frames []frameRule) bool {
	for _, f := range frames {
		if f.skip() && f.external() {
			return true
		}
	}
	return false
}

// ClassifyStack classifies a stack of frame names given leaf first and
// returns the bucket and the index of the deciding frame. It is the
// classifier the diff engine uses, for callers that hold names rather than
// profiles (tests, `profdiff rules --explain`).
func ClassifyStack(rs *RuleSet, stack []string, kind profile.Kind) (Bucket, int) {
	frames := make([]frameRule, len(stack))
	for i, name := range stack {
		frames[i] = ruleOf(rs, symbolize.Normalize(name), kind)
	}
	b, at, _ := classify(frames, kind)
	return b, at
}
