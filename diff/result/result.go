package result

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile/kind"
)

// SideSummary describes one side of a comparison (or the one side of `top`).
// Total is in Unit; Samples counts samples (the sum of the profile's count
// column where it has one, else sample records).
type SideSummary struct {
	Sources       []string  `json:"sources"`
	Total         float64   `json:"total"`
	Unit          string    `json:"unit"`
	Samples       int64     `json:"samples"`
	Kind          kind.Kind `json:"kind"`
	Period        int64     `json:"period,omitempty"`
	PeriodType    string    `json:"period_type,omitempty"`
	DurationNanos int64     `json:"duration_nanos,omitempty"`
	// Records counts the sampled events noise is judged by: the count
	// column where the profile has one, else sample records.
	Records  int64 `json:"records"`
	Profiles int   `json:"profiles"`
	// TotalRate is Total per second of wall time (see Analysis.RateUnit).
	TotalRate *float64 `json:"total_rate,omitempty"`
	GoVersion string   `json:"go_version,omitempty"`
}

// Values are the absolute side of a row: both sides' raw values in the
// profile's unit and, where a side's rate is known (see Analysis.RateUnit),
// its rate. A nil rate is unknown (the side's duration is not).
type Values struct {
	BaseValue float64  `json:"base_value"`
	NewValue  float64  `json:"new_value"`
	BaseRate  *float64 `json:"base_rate,omitempty"`
	NewRate   *float64 `json:"new_rate,omitempty"`
	Unit      string   `json:"unit"`
	RateUnit  string   `json:"rate_unit,omitempty"`
}

// BucketRow is one bucket's share (fraction 0..1 of its side's total) on
// each side, with its raw values and rates. Noisy is set when the change
// is within two standard errors of the sampling noise implied by the
// sampled events (records, or the count column), never the summed values.
type BucketRow struct {
	Bucket Bucket  `json:"bucket"`
	Base   float64 `json:"base"`
	New    float64 `json:"new"`
	Delta  float64 `json:"delta"` // new − base in shares
	// Change is new − base in the result's measure (Analysis.Normalize):
	// shares, rates or values; the number rows are sorted and noted by.
	Change float64 `json:"change"`
	Noisy  bool    `json:"noisy,omitempty"`
	Values
}

// MethodRow is one method's share on each side (self, or inclusive with
// Options.Cum), as fractions 0..1, with raw values and rates. Note compares
// the two sides in Analysis.Normalize's measure and says which ("18x
// rate", "new", "gone"). Bucket is the method's dominant bucket;
// BucketShare the fraction of the method's value (both sides) in it, and
// Buckets the whole split when it spans more than one.
type MethodRow struct {
	Name        string  `json:"name"`
	Bucket      Bucket  `json:"bucket"`
	BucketShare float64 `json:"bucket_share"`
	Base        float64 `json:"base"`
	New         float64 `json:"new"`
	Delta       float64 `json:"delta"`  // new − base in shares
	Change      float64 `json:"change"` // new − base in Analysis.Normalize's measure (see BucketRow)
	Note        string  `json:"note"`
	Noisy       bool    `json:"noisy,omitempty"`
	Values
	Module  string                 `json:"module,omitempty"`
	Buckets map[Bucket]BucketSplit `json:"buckets,omitempty"`
	// RenumberedFrom is the base side's name of a Go closure that the new
	// build numbers differently (see closures.go); Name is the new one.
	RenumberedFrom string `json:"renumbered_from,omitempty"`
	// Variants, when above 1, is how many names the profiles gave the
	// frames merged into this row (build variants such as `f` and
	// `f.part.0`, Rust's `::h<hash>` instances, `Foo(int)` and `Foo`);
	// Name is then what they share, the normalized name (`f`).
	Variants int `json:"variants,omitempty"`
}

// VariantsSuffix is what a label adds to the name a merged row's or
// frame's variants share (MethodRow.Variants): " (5 variants)".
func VariantsSuffix(n int) string { return " (" + strconv.Itoa(n) + " variants)" }

// BucketSplit is the part of a method's value in one bucket, on each side.
type BucketSplit struct {
	BaseValue float64 `json:"base_value"`
	NewValue  float64 `json:"new_value"`
}

// Normalize is the measure method rows are sorted and noted by.
type Normalize string

const (
	// NormalizeAuto (the zero value) is NormalizeRate when both sides'
	// rates are known, else NormalizeShare; results name the one used.
	NormalizeAuto  Normalize = ""
	NormalizeShare Normalize = "share" // fraction of the side's total
	NormalizeRate  Normalize = "rate"  // value per second of wall time (see Analysis.RateUnit)
	NormalizeValue Normalize = "value" // raw value in the profile's unit
)

// ParseNormalize reads a measure, in any case: share, rate or value ("" is auto).
func ParseNormalize(s string) (Normalize, error) {
	switch n := Normalize(strings.ToLower(s)); n {
	case NormalizeAuto, NormalizeShare, NormalizeRate, NormalizeValue:
		return n, nil
	}
	return "", fmt.Errorf("unknown measure %q (want share, rate or value)", s)
}

// Meaning says what a profile's buckets measure, so a report can say it:
// only MeaningState has a "total wait/synchronization".
type Meaning string

const (
	MeaningState  Meaning = "state"  // time (threads, goroutines) spent in each state: wall, trace, goroutine, nettrace
	MeaningCPU    Meaning = "cpu"    // CPU time spent in each kind of machinery (locking, GC, I/O code)
	MeaningDelay  Meaning = "delay"  // off-CPU delay: mutex and block profiles
	MeaningMemory Meaning = "memory" // heap: bytes or objects, not time
)

// PeekRow is one frame matching Options.Peek: its inclusive values and
// the callers and callees they flow from and to (pprof's -peek).
//
// Values are inclusive: the samples whose stacks contain the frame, each
// counted once however often the frame recurs. A caller is the frame
// right above it (toward the root) in such a sample, a callee the frame
// right below; an edge's values are the samples through it. Rows and
// edges are sorted by |Δ| in Analysis.Normalize's measure, then by name;
// each row keeps its PeekEdges largest callers and callees and counts the
// rest in CallersOmitted and CalleesOmitted.
type PeekRow struct {
	Name string `json:"name"`
	Values
	Callers        []PeekEdge `json:"callers"`
	Callees        []PeekEdge `json:"callees"`
	CallersOmitted int        `json:"callers_omitted,omitempty"`
	CalleesOmitted int        `json:"callees_omitted,omitempty"`
}

// PeekEdge is a caller or callee of a peeked frame and the inclusive
// value of the samples through that edge.
type PeekEdge struct {
	Name string `json:"name"`
	Values
}

// Analysis says what an analysis measured and how: the header every result
// starts with.
type Analysis struct {
	SampleType string    `json:"sample_type"` // "type/unit"
	Kind       kind.Kind `json:"kind"`
	Meaning    Meaning   `json:"meaning"`
	By         By        `json:"by"`
	// ByDefault is set when By was chosen for the kind (Options.By empty).
	ByDefault bool `json:"by_default"`
	Cum       bool `json:"cum"` // inclusive method values instead of self
	// Normalize is the measure rows are sorted and noted by (never auto).
	Normalize Normalize `json:"normalize"`
	// Unit is the raw values' unit; RateUnit the rates' ("cores",
	// "threads", "goroutines", "s/s", "bytes", "objects", or "TYPE/s" for
	// counts such as "samples/s"), empty when no rate is known (see the
	// package comment, "Values, rates and measures").
	Unit     string `json:"unit"`
	RateUnit string `json:"rate_unit,omitempty"`
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
	Sched *SchedRow `json:"sched_latency,omitempty"`
	// Unknown is native-or-blocked time nothing can place, when a side has
	// any (.NET external samples under frames that name no wait), kept
	// apart like Sched, as a share of all the time recorded.
	Unknown *SchedRow   `json:"native_unknown,omitempty"`
	Methods []MethodRow `json:"methods"`
	Detail
	// Verdict is the comparison's conclusion (see Verdict).
	Verdict  *Verdict `json:"verdict,omitempty"`
	Warnings []string `json:"-"`
}

// SchedRow is time kept apart from the buckets on each side (scheduler
// latency: runnable time; or native-or-blocked time nothing can place) as
// a share of all the time recorded, apart time included
// (runnable/(runnable+unknown+bucketed)). It is in none of the buckets,
// whose shares are of the bucketed time alone, so a change in scheduling
// delay does not shift the bucket shares. Values are in the result's unit.
type SchedRow struct {
	Base  float64 `json:"base"`
	New   float64 `json:"new"`
	Delta float64 `json:"delta"`
	Values
}

// SyncShare returns the "total wait/synchronization" share of each side:
// everything but cpu.
func (r *Result) SyncShare() (base, new float64) {
	for _, b := range r.Buckets {
		if b.Bucket != rules.CPU {
			base += b.Base
			new += b.New
		}
	}
	return base, new
}

// TopBucket is one bucket of a single side: share (0..1), value in Unit
// and rate in RateUnit (nil when the duration is unknown).
type TopBucket struct {
	Bucket Bucket   `json:"bucket"`
	Share  float64  `json:"share"`
	Value  float64  `json:"value"`
	Rate   *float64 `json:"rate,omitempty"`
}

// TopMethod is one method of a single side.
// Buckets, only when the method spans more than one bucket, holds its
// value in each.
type TopMethod struct {
	Name        string             `json:"name"`
	Bucket      Bucket             `json:"bucket"`
	BucketShare float64            `json:"bucket_share"`
	Share       float64            `json:"share"`
	Value       float64            `json:"value"`
	Rate        *float64           `json:"rate,omitempty"`
	Module      string             `json:"module,omitempty"`
	Buckets     map[Bucket]float64 `json:"buckets,omitempty"`
	Variants    int                `json:"variants,omitempty"` // as MethodRow.Variants
}

// TopResult is the analysis of one side (`profdiff top`).
type TopResult struct {
	Analysis
	Sources []string `json:"sources"`
	Total   float64  `json:"total"`
	Unit    string   `json:"unit"`
	Samples int64    `json:"samples"`
	Records int64    `json:"records"`
	// DurationNanos is the summed duration of the profiles, when known;
	// TotalRate is Total per second of it.
	DurationNanos int64       `json:"duration_nanos,omitempty"`
	TotalRate     *float64    `json:"total_rate,omitempty"`
	Buckets       []TopBucket `json:"buckets"`
	// Sched is scheduler latency, when the profile has any (see SchedRow).
	Sched *TopSched `json:"sched_latency,omitempty"`
	// Unknown is native-or-blocked time nothing can place (see
	// Result.Unknown).
	Unknown  *TopSched   `json:"native_unknown,omitempty"`
	Methods  []TopMethod `json:"methods"`
	Detail               // the new side's values are zero in Peek; Tree is the base side's
	Warnings []string    `json:"-"`
}

// Detail is what a result holds beyond its tables when the options ask:
// a diff's and a top listing's alike (embedded, so its fields are the
// result's own in Go and in JSON).
type Detail struct {
	// Peek holds the frames matching Options.Peek (see PeekRow), at most
	// Options.Top of them; PeekOmitted counts the rest.
	Peek        []PeekRow `json:"peek,omitempty"`
	PeekOmitted int       `json:"peek_omitted,omitempty"`
	// Tree is the merged call tree, built only when Options.CallTree asks.
	Tree *CallNode `json:"tree,omitempty"`
	// Stacks are the call tree's stacks unmerged, in place of Tree when
	// Options.TreeStacks asks (the folded formats).
	Stacks Stacks `json:"-"`
}

// TopSched is time kept apart from the buckets on a single side
// (scheduler latency, or unknown native time) as a share of all the time
// recorded, and its value in Unit.
type TopSched struct {
	Share float64  `json:"share"`
	Value float64  `json:"value"`
	Rate  *float64 `json:"rate,omitempty"`
}

// SyncShare is the share of everything but cpu.
func (t *TopResult) SyncShare() float64 {
	s := 0.0
	for _, b := range t.Buckets {
		if b.Bucket != rules.CPU {
			s += b.Share
		}
	}
	return s
}
