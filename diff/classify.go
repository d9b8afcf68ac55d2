package diff

import (
	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/classify"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
	"github.com/profdiff/profdiff/symbolize"
)

// The classification is package diff/classify, a pure function of a
// sample; the Analyzer sums what it decides.
type (
	// frameRule is what the classifier knows of one frame
	// (classify.Frame), memoized per method and kind (Analyzer.mfr).
	frameRule = classify.Frame
	// Apart says why a sample's time is kept apart from the buckets.
	Apart = classify.Apart
)

// The values of Apart.
const (
	InBucket = classify.InBucket // in its bucket
	Sched    = classify.Sched    // scheduler latency: runnable, waiting for a CPU
	Unknown  = classify.Unknown  // native-or-blocked time nothing can place
)

// decide sets the sample's bucket, apart flag and deciding frame
// (classify.Decide).
func (a *Analyzer) decide(s *Sample, rec *pull.Record, kind profile.Kind) {
	s.Bucket, s.Apart, s.Decider = classify.Decide(s.frames, rec, kind, a.notStarted(s, kind))
}

// LabelledBucket returns the bucket a sample's profile.LabelBucket label
// names. A Go execution trace decides it from the goroutine's recorded
// state and block reason, which say more than frame names, so the engine
// uses it instead of the frame rules. sched reports runnable time
// (scheduler latency), which is in no bucket; ok is false when the sample
// has no such label (or an unknown value).
func LabelledBucket(s *pprofile.Sample) (b rules.Bucket, sched, ok bool) {
	v := s.Label[profile.LabelBucket]
	if len(v) != 1 {
		return 0, false, false
	}
	return classify.LabelValue(v[0], profile.SchedLatency)
}

// ClassifyStack classifies a stack of frame names given leaf first and
// returns the bucket and the index of the deciding frame. It is the
// classifier the diff engine uses, for callers that hold names rather than
// profiles (tests, `profdiff rules --explain`).
func ClassifyStack(rs *rules.Set, stack []string, kind profile.Kind) (rules.Bucket, int) {
	frames := make([]frameRule, len(stack))
	for i, name := range stack {
		frames[i] = classify.RuleOf(rs, symbolize.Normalize(name), kind)
	}
	b, at, _ := classify.Stack(frames, kind)
	return b, at
}
