package diff

import (
	"io"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// The engine's stages are packages of their own: diff/rules (the bucket
// names, the rule tables per runtime and their matching), diff/classify
// (the classification, a pure function of a sample; classify.go), this
// package's Analyzer (resolution and aggregation), and diff/result (pure numbers:
// sides, buckets, methods, trees, peek rows, the verdict), which the
// Analyzer returns and a report is built from without the engine. These
// names keep the engine's API.
type (
	Bucket   = rules.Bucket
	Strength = rules.Strength
	Rule     = rules.Rule
	RuleSet  = rules.Set

	Analysis      = result.Analysis
	BucketRow     = result.BucketRow
	BucketSplit   = result.BucketSplit
	By            = result.By
	CallNode      = result.CallNode
	Detail        = result.Detail
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

// The buckets (diff/rules), and the results' constants (diff/result) that
// callers of the engine name; the rest are read from those packages.
const (
	CPU            = rules.CPU
	Wait           = rules.Wait
	LockContention = rules.LockContention
	GC             = rules.GC
	IO             = rules.IO
	Syscall        = rules.Syscall
	NumBuckets     = rules.NumBuckets

	ByFrame          = result.ByFrame
	ByDecider        = result.ByDecider
	ByCaller         = result.ByCaller
	Base             = result.Base
	New              = result.New
	NormalizeAuto    = result.NormalizeAuto
	NormalizeShare   = result.NormalizeShare
	NormalizeRate    = result.NormalizeRate
	NormalizeValue   = result.NormalizeValue
	MeaningState     = result.MeaningState
	MeaningCPU       = result.MeaningCPU
	MeaningDelay     = result.MeaningDelay
	MeaningMemory    = result.MeaningMemory
	CaveatFewSamples = result.CaveatFewSamples
)

// Buckets lists every bucket in report order (rules.Buckets).
var Buckets = rules.Buckets

// PackOrder is the order of the built-in rule packs (rules.PackOrder).
var PackOrder = rules.PackOrder

// DefaultRules returns the built-in rule packs (rules.Default).
func DefaultRules() *RuleSet { return rules.Default() }

// ParseRules reads a rule file (rules.Parse).
func ParseRules(name string, r io.Reader) ([]*Rule, error) { return rules.Parse(name, r) }

// ParseBucket reads a bucket name (rules.ParseBucket).
func ParseBucket(s string) (Bucket, error) { return rules.ParseBucket(s) }

// ParseBy reads an attribution (result.ParseBy).
func ParseBy(s string) (By, error) { return result.ParseBy(s) }

// DefaultBy is the attribution Options.By "" picks for a kind
// (result.DefaultBy).
func DefaultBy(k profile.Kind) By { return result.DefaultBy(k) }

// ParseNormalize reads a measure (result.ParseNormalize).
func ParseNormalize(s string) (Normalize, error) { return result.ParseNormalize(s) }
