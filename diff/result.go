package diff

import "github.com/profdiff/profdiff/profile"

// SideSummary describes one side of a comparison (or the one side of `top`).
// Total is in Unit; Samples counts samples (the sum of the profile's count
// column where it has one, else sample records).
type SideSummary struct {
	Sources       []string     `json:"sources"`
	Total         float64      `json:"total"`
	Unit          string       `json:"unit"`
	Samples       int64        `json:"samples"`
	Kind          profile.Kind `json:"kind"`
	Period        int64        `json:"period,omitempty"`
	PeriodType    string       `json:"period_type,omitempty"`
	DurationNanos int64        `json:"duration_nanos,omitempty"`
}

// BucketRow is one bucket's share (fraction 0..1 of its side's total) on
// each side. Noisy is set when |Delta| is within two standard errors of the
// sampling noise implied by the sample counts.
type BucketRow struct {
	Bucket Bucket  `json:"bucket"`
	Base   float64 `json:"base"`
	New    float64 `json:"new"`
	Delta  float64 `json:"delta"`
	Noisy  bool    `json:"noisy,omitempty"`
	// BaseValue and NewValue are the bucket's raw values in the result's
	// unit, the source the shares are derived from. (Not yet in the JSON
	// schema: absolute values and rates come to every output together.)
	BaseValue float64 `json:"-"`
	NewValue  float64 `json:"-"`
}

// MethodRow is one method's share on each side (self, or inclusive with
// Options.Cum), as fractions 0..1, with raw values in the result's unit.
type MethodRow struct {
	Name      string  `json:"name"`
	Bucket    Bucket  `json:"bucket"`
	Base      float64 `json:"base"`
	New       float64 `json:"new"`
	Delta     float64 `json:"delta"`
	Note      string  `json:"note"`
	Noisy     bool    `json:"noisy,omitempty"`
	BaseValue float64 `json:"base_value"`
	NewValue  float64 `json:"new_value"`
	Module    string  `json:"module,omitempty"`
}

// Analysis says what an analysis measured and how: the header every result
// starts with.
type Analysis struct {
	SampleType string       `json:"sample_type"` // "type/unit"
	Kind       profile.Kind `json:"kind"`
	By         By           `json:"by"`
	Cum        bool         `json:"cum"` // inclusive method values instead of self
}

// Result is a comparison of two sides. Numbers only: renderers format them.
// Warnings are for the user's stderr and never part of rendered data.
type Result struct {
	Analysis
	Base    SideSummary `json:"base"`
	New     SideSummary `json:"new"`
	Buckets []BucketRow `json:"buckets"`
	// Sched is scheduler latency, when a side has any (Go execution
	// traces: time goroutines spent runnable, waiting for a P).
	Sched   *SchedRow   `json:"sched_latency,omitempty"`
	Methods []MethodRow `json:"methods"`
	// Tree is the merged call tree, built only when Options.CallTree asks.
	Tree     *CallNode `json:"tree,omitempty"`
	Warnings []string  `json:"-"`
}

// SchedRow is scheduler latency on each side: runnable time as a share of
// all goroutine time including it (runnable/(runnable+bucketed)). It is in
// none of the buckets, whose shares are of the bucketed time alone, so a
// change in scheduling delay does not shift the bucket shares. Values are
// in the result's unit.
type SchedRow struct {
	Base      float64 `json:"base"`
	New       float64 `json:"new"`
	Delta     float64 `json:"delta"`
	BaseValue float64 `json:"base_value"`
	NewValue  float64 `json:"new_value"`
}

// SyncShare returns the "total wait/synchronization" share of each side:
// everything but cpu.
func (r *Result) SyncShare() (base, new float64) {
	for _, b := range r.Buckets {
		if b.Bucket != CPU {
			base += b.Base
			new += b.New
		}
	}
	return base, new
}

// TopBucket is one bucket of a single side: share (0..1) and value in Unit.
type TopBucket struct {
	Bucket Bucket  `json:"bucket"`
	Share  float64 `json:"share"`
	Value  float64 `json:"value"`
}

// TopMethod is one method of a single side.
type TopMethod struct {
	Name   string  `json:"name"`
	Bucket Bucket  `json:"bucket"`
	Share  float64 `json:"share"`
	Value  float64 `json:"value"`
	Module string  `json:"module,omitempty"`
}

// TopResult is the analysis of one side (`profdiff top`).
type TopResult struct {
	Analysis
	Sources []string    `json:"sources"`
	Total   float64     `json:"total"`
	Unit    string      `json:"unit"`
	Samples int64       `json:"samples"`
	Buckets []TopBucket `json:"buckets"`
	// Sched is scheduler latency, when the profile has any (see SchedRow).
	Sched   *TopSched   `json:"sched_latency,omitempty"`
	Methods []TopMethod `json:"methods"`
	// Tree is the call tree (base side), built only when Options.CallTree asks.
	Tree     *CallNode `json:"tree,omitempty"`
	Warnings []string  `json:"-"`
}

// TopSched is scheduler latency of a single side: runnable time as a share
// of all goroutine time including it, and its value in Unit.
type TopSched struct {
	Share float64 `json:"share"`
	Value float64 `json:"value"`
}

// SyncShare is the share of everything but cpu.
func (t *TopResult) SyncShare() float64 {
	s := 0.0
	for _, b := range t.Buckets {
		if b.Bucket != CPU {
			s += b.Share
		}
	}
	return s
}
