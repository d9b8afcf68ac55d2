package gate

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/rules"
)

// Target says what a check measures.
type Target string

const (
	TargetBucket Target = "bucket" // one bucket's share of the profile
	TargetSync   Target = "sync"   // everything but cpu ("total wait/synchronization")
	TargetMethod Target = "method" // share of samples with a frame matching a regexp (inclusive)
)

// SyncName is the check name of the "everything but cpu" share.
const SyncName = "sync"

// Limit is the largest growth a check allows: Amount percentage points of
// share ("+2pp"), or, when Relative, Amount percent of the base value
// ("+25%"), or, when Factor, Amount times the base value ("2x"). Amount is
// kept in the unit it was written in, so it prints back exactly. Relative
// and factor limits also apply to absolute values (a delay per second or
// per run), which the gate compares where shares cannot move.
type Limit struct {
	Amount   float64 `json:"amount"`
	Relative bool    `json:"relative"`
	Factor   bool    `json:"factor"`
}

// ParseLimit reads "+2pp", "2pp", "+0.5pp", "+25%", "25%" or "2x". The
// sign is optional; a limit is a growth, so negative limits (and factors
// below 1) are rejected.
func ParseLimit(s string) (Limit, error) {
	t := strings.TrimSpace(s)
	var l Limit
	switch {
	case strings.HasSuffix(t, "pp"):
		t = strings.TrimSuffix(t, "pp")
	case strings.HasSuffix(t, "%"):
		t = strings.TrimSuffix(t, "%")
		l.Relative = true
	case strings.HasSuffix(t, "x"):
		t = strings.TrimSuffix(t, "x")
		l.Factor = true
	default:
		return l, fmt.Errorf("threshold %q has no unit: write +Npp (percentage points of share, e.g. +2pp), +N%% (relative to base, e.g. +25%%) or Nx (times base, e.g. 2x)", s)
	}
	t = strings.TrimPrefix(t, "+")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.HasPrefix(t, "+") {
		return l, fmt.Errorf("threshold %q is not a number with a unit: write e.g. +2pp, +25%% or 2x", s)
	}
	switch {
	case l.Factor && v < 1:
		return l, fmt.Errorf("threshold %q is a factor below 1: a threshold is the growth allowed, e.g. 1x to fail on any significant growth", s)
	case v < 0 || v == 0 && math.Signbit(v):
		return l, fmt.Errorf("threshold %q is negative: a threshold is the growth allowed, e.g. +0pp to fail on any significant growth", s)
	case !l.Relative && !l.Factor && v > 100:
		return l, fmt.Errorf("threshold %q is more than 100 percentage points: a share cannot grow that much", s)
	}
	l.Amount = v
	return l, nil
}

// Points reports whether the limit is in percentage points of share, the
// one form that applies to shares alone.
func (l Limit) Points() bool { return !l.Relative && !l.Factor }

// String prints the limit as it is written on the command line: "+2pp",
// "+25%", "2x".
func (l Limit) String() string {
	n := strconv.FormatFloat(l.Amount, 'f', -1, 64)
	switch {
	case l.Factor:
		return n + "x"
	case l.Relative:
		return "+" + n + "%"
	}
	return "+" + n + "pp"
}

// MarshalText writes the limit as String does.
func (l Limit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a limit as ParseLimit does.
func (l *Limit) UnmarshalText(b []byte) error {
	v, err := ParseLimit(string(b))
	*l = v
	return err
}

// Exceeded reports whether the change from base to new is more growth
// than the limit allows: shares (fractions 0..1) for a points limit, any
// non-negative values for relative and factor limits. Growth from a zero
// base is infinite in relative terms, so a relative or factor limit is
// exceeded by any new value there.
func (l Limit) Exceeded(base, new float64) bool {
	// eps absorbs float rounding of values that are equal in the data
	// (e.g. 3/7 computed from different totals).
	const eps = 1e-9
	switch {
	case (l.Relative || l.Factor) && base <= 0:
		return new > eps
	case l.Factor:
		return new/base > l.Amount+eps
	case l.Relative:
		return (new-base)/base*100 > l.Amount+eps
	}
	return (new-base)*100 > l.Amount+eps
}

// Ceiling is the value the merged new side may reach from base before
// the limit is exceeded.
func (l Limit) Ceiling(base float64) float64 {
	switch {
	case l.Factor:
		return base * l.Amount
	case l.Relative:
		return base * (1 + l.Amount/100)
	}
	return base + l.Amount/100
}

// Check is one gate condition: a share and the most it may grow.
type Check struct {
	Target  Target         `json:"target"`
	Bucket  rules.Bucket   `json:"-"`                 // TargetBucket
	Pattern string         `json:"pattern,omitempty"` // TargetMethod: the regexp as written
	Method  *regexp.Regexp `json:"-"`                 // TargetMethod: compiled Pattern
	Max     Limit          `json:"threshold"`
}

// Name is the check's name as the user writes it before "=": a bucket name,
// "sync", or the method regexp.
func (c Check) Name() string {
	switch c.Target {
	case TargetBucket:
		return c.Bucket.String()
	case TargetSync:
		return SyncName
	}
	return c.Pattern
}

// Label names the check in reports: "lock-contention", "sync", or
// "method ~ REGEXP".
func (c Check) Label() string {
	if c.Target == TargetMethod {
		return "method ~ " + c.Pattern
	}
	return c.Name()
}

// key identifies a check for overriding: a flag replaces the config entry
// with the same key.
func (c Check) key() string { return string(c.Target) + ":" + c.Name() }

// String is the check as a flag value: "lock-contention=+2pp".
func (c Check) String() string { return c.Name() + "=" + c.Max.String() }

// ParseMax reads a bucket check: NAME=LIMIT, where NAME is a bucket (cpu,
// wait, lock-contention, gc, io, syscall) or sync (everything but cpu).
func ParseMax(s string) (Check, error) {
	name, lim, ok := strings.Cut(s, "=")
	if !ok {
		return Check{}, fmt.Errorf("want BUCKET=THRESHOLD, e.g. lock-contention=+2pp or gc=+25%%")
	}
	return bucketCheck(strings.TrimSpace(name), lim)
}

func bucketCheck(name, lim string) (Check, error) {
	var c Check
	if name == SyncName {
		c.Target = TargetSync
	} else {
		b, err := rules.ParseBucket(name)
		if err != nil {
			return c, fmt.Errorf("unknown bucket %q in threshold (want cpu, wait, lock-contention, gc, io, syscall or sync)", name)
		}
		c.Target, c.Bucket = TargetBucket, b
	}
	l, err := ParseLimit(lim)
	if err != nil {
		return c, fmt.Errorf("%s: %v", name, err)
	}
	c.Max = l
	return c, nil
}

// ParseMaxMethod reads a method check: REGEXP=LIMIT. The regexp is
// matched against frame names (RE2 syntax, unanchored); the value is split
// at its last "=", so the regexp may contain "=".
func ParseMaxMethod(s string) (Check, error) {
	i := strings.LastIndex(s, "=")
	if i < 0 {
		return Check{}, fmt.Errorf("want REGEXP=THRESHOLD, e.g. 'sync\\.\\(\\*Mutex\\)\\.Lock=+1pp'")
	}
	return methodCheck(s[:i], s[i+1:])
}

// oneLine escapes the line breaks of text quoted in an error message.
var oneLine = strings.NewReplacer("\r", `\r`, "\n", `\n`)

func methodCheck(pattern, lim string) (Check, error) {
	c := Check{Target: TargetMethod, Pattern: pattern}
	if pattern == "" {
		return c, fmt.Errorf("method threshold %q: the regexp before '=' is empty", pattern+"="+lim)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return c, fmt.Errorf("method regexp %q: %s (escape ( ) * . with a backslash, e.g. sync\\.\\(\\*Mutex\\)\\.Lock)", pattern, oneLine.Replace(err.Error()))
	}
	c.Method = re
	l, err := ParseLimit(lim)
	if err != nil {
		return c, fmt.Errorf("%q: %v", pattern, err)
	}
	c.Max = l
	return c, nil
}

// DefaultChecks are the checks used when neither flags nor a config file
// give any. They target lock contention:
//
//   - lock-contention=+1pp: the share of samples waiting for (or spinning
//     on) a lock may not grow by more than one percentage point;
//   - sync=+5pp: a backstop for contention the rules file under another
//     waiting bucket (a mutex replaced by a channel hand-off shows as wait):
//     everything but cpu may not grow by more than five points.
//
// Both fail only when the growth is also significant (see Evaluate).
func DefaultChecks() []Check {
	lc, _ := ParseMax("lock-contention=+1pp")
	sy, _ := ParseMax("sync=+5pp")
	return []Check{lc, sy}
}

// Merge returns the checks of base with those of over added; an entry of
// over replaces the base entry with the same name (a flag overrides the
// config file). Checks come out in a fixed order: buckets in report order,
// then sync, then methods in the order given.
func Merge(base, over []Check) []Check {
	idx := map[string]int{}
	var out []Check
	for _, list := range [][]Check{base, over} {
		for _, c := range list {
			if i, ok := idx[c.key()]; ok {
				out[i] = c
				continue
			}
			idx[c.key()] = len(out)
			out = append(out, c)
		}
	}
	sortChecks(out)
	return out
}

func sortChecks(cs []Check) {
	rank := func(c Check) int {
		switch c.Target {
		case TargetBucket:
			return int(c.Bucket)
		case TargetSync:
			return rules.NumBuckets
		}
		return rules.NumBuckets + 1
	}
	sort.SliceStable(cs, func(i, j int) bool { return rank(cs[i]) < rank(cs[j]) })
}

// Duplicates returns an error naming the first check given twice in cs
// (the same bucket or regexp in one source of thresholds).
func Duplicates(cs []Check, source string) error {
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.key()] {
			return fmt.Errorf("%s: threshold for %s given twice; keep one", source, c.Label())
		}
		seen[c.key()] = true
	}
	return nil
}
