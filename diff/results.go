package diff

import (
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

// The results are package diff/result: pure numbers, which a report is
// built from without the engine. These names keep the engine's API.
type (
	Analysis      = result.Analysis
	BucketRow     = result.BucketRow
	BucketSplit   = result.BucketSplit
	By            = result.By
	CallNode      = result.CallNode
	Caveat        = result.Caveat
	Meaning       = result.Meaning
	MethodRow     = result.MethodRow
	Normalize     = result.Normalize
	PeekEdge      = result.PeekEdge
	PeekRow       = result.PeekRow
	Result        = result.Result
	SchedRow      = result.SchedRow
	Side          = result.Side
	SideSummary   = result.SideSummary
	TopBucket     = result.TopBucket
	TopMethod     = result.TopMethod
	TopResult     = result.TopResult
	TopSched      = result.TopSched
	Values        = result.Values
	Verdict       = result.Verdict
	VerdictChange = result.VerdictChange
	VerdictFrame  = result.VerdictFrame
	VerdictSize   = result.VerdictSize
)

// The results' constants (package diff/result).
const (
	OtherName           = result.OtherName
	VerdictLeaders      = result.VerdictLeaders
	ByFrame             = result.ByFrame
	ByDecider           = result.ByDecider
	ByCaller            = result.ByCaller
	Base                = result.Base
	New                 = result.New
	NormalizeAuto       = result.NormalizeAuto
	NormalizeShare      = result.NormalizeShare
	NormalizeRate       = result.NormalizeRate
	NormalizeValue      = result.NormalizeValue
	MeaningState        = result.MeaningState
	MeaningCPU          = result.MeaningCPU
	MeaningDelay        = result.MeaningDelay
	MeaningMemory       = result.MeaningMemory
	CaveatSharesOnly    = result.CaveatSharesOnly
	CaveatKindUnknown   = result.CaveatKindUnknown
	CaveatKindsDiffer   = result.CaveatKindsDiffer
	CaveatMixedKinds    = result.CaveatMixedKinds
	CaveatTypesDiffer   = result.CaveatTypesDiffer
	CaveatEmptySide     = result.CaveatEmptySide
	CaveatFewSamples    = result.CaveatFewSamples
	CaveatSamplesDiffer = result.CaveatSamplesDiffer
	CaveatProducers     = result.CaveatProducers
	CaveatHeap          = result.CaveatHeap
	CaveatUnknown       = result.CaveatUnknown
)

// ParseBy reads an attribution (result.ParseBy).
func ParseBy(s string) (By, error) { return result.ParseBy(s) }

// DefaultBy is the attribution Options.By "" picks for a kind
// (result.DefaultBy).
func DefaultBy(k profile.Kind) By { return result.DefaultBy(k) }

// ParseNormalize reads a measure (result.ParseNormalize).
func ParseNormalize(s string) (Normalize, error) { return result.ParseNormalize(s) }
