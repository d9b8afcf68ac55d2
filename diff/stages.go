package diff

import (
	"io"

	"github.com/profdiff/profdiff/diff/rules"
)

// The rules stage is package diff/rules: the bucket names, the rule
// tables per runtime and their matching. These names keep the engine's
// API: the classifier (classify.go) reads a rule set through them.
type (
	Bucket   = rules.Bucket
	Strength = rules.Strength
	Rule     = rules.Rule
	RuleSet  = rules.Set
)

// The buckets (rules.Bucket) and rule strengths (rules.Strength).
const (
	CPU            = rules.CPU
	Wait           = rules.Wait
	LockContention = rules.LockContention
	GC             = rules.GC
	IO             = rules.IO
	Syscall        = rules.Syscall
	NumBuckets     = rules.NumBuckets

	Strong = rules.Strong
	Weak   = rules.Weak
	Ctx    = rules.Ctx
	Skip   = rules.Skip
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
