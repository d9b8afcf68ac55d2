package gate

import (
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/symbolize"
)

// scanner makes one pass over each profile's samples for the numbers the
// gate needs per profile: the bucket values (one observation per profile),
// the inclusive share of each method check (samples with any frame matching
// the regexp, each sample counted once), and, on the merged sides, which
// frames the samples selected by each check were decided by and called
// from. It classifies stacks with the engine's own classifier
// (RuleSet.ClassifyStack) and applies --focus/--ignore, the sample type and
// the kind as the engine does, so its bucket shares equal a per-profile
// Analyzer's (TestScannerMatchesEngine) while rule matches and verdicts are
// memoized across all profiles instead of rebuilt for each.
type scanner struct {
	opts   diff.Options
	rules  *diff.RuleSet
	checks []Check

	total [2]float64
	// Per check, per frame name: value on each side of the samples the
	// check selects, attributed to the deciding frame and to the caller.
	dec, call []map[string]*[2]float64

	ruled     map[profile.Kind]map[string]bool // frame name has a rule (machinery)
	classes   map[string]classified            // compressed stack → verdict
	placebo   map[profile.Kind]bool            // placeholder is rule-free for the kind
	goStd     map[string]bool                  // frame name is in the Go standard library
	focus     map[string]diff.FilterClass      // frame name → what --focus/--ignore say
	methodHit []map[string]bool                // per check: frame name matches the method regexp
}

type classified struct {
	b  diff.Bucket
	at int // index in the compressed stack, -1 for none
}

// placeholder stands for a run of frames no rule matches. It must itself
// match no rule (checked per kind; compression is off otherwise).
const placeholder = "zzprofdiffgatecodeframe"

func newScanner(opts diff.Options, rules *diff.RuleSet, checks []Check) *scanner {
	s := &scanner{
		opts: opts, rules: rules, checks: checks,
		dec: make([]map[string]*[2]float64, len(checks)), call: make([]map[string]*[2]float64, len(checks)),
		ruled: map[profile.Kind]map[string]bool{}, classes: map[string]classified{},
		placebo: map[profile.Kind]bool{}, goStd: map[string]bool{}, focus: map[string]diff.FilterClass{},
		methodHit: make([]map[string]bool, len(checks)),
	}
	for i := range checks {
		s.dec[i], s.call[i] = map[string]*[2]float64{}, map[string]*[2]float64{}
		s.methodHit[i] = map[string]bool{}
	}
	return s
}

// profileScan is what one profile contributed: its kept total, its value
// per bucket, and, per check, the value of the samples with a frame
// matching the check's method regexp (0 for non-method checks).
type profileScan struct {
	total   float64
	buckets [diff.NumBuckets]float64
	matched []float64
}

// add scans l into side. The sample type was validated by the Analyzer.
func (s *scanner) add(side diff.Side, l *profile.Loaded) (profileScan, error) {
	ps := profileScan{matched: make([]float64, len(s.checks))}
	p := l.Profile
	idx, err := diff.SampleTypeIndex(p, s.opts.SampleIndex)
	if err != nil {
		return ps, err
	}
	kind := s.opts.Kind
	if kind == "" {
		kind = l.Kind
	}
	if kind == "" {
		kind = profile.DetectKind(p)
	}
	locNames := map[*pprofile.Location][]string{}
	var buf []symbolize.Frame
	var names []string
	hit := make([]bool, len(s.checks))
	for _, smp := range p.Sample {
		v := float64(smp.Value[idx])
		if v == 0 {
			continue
		}
		lb, lsched, lok := diff.SampleBucket(smp, kind)
		names = names[:0]
		for _, loc := range smp.Location {
			n, ok := locNames[loc]
			if !ok {
				buf = symbolize.LocationFrames(buf[:0], loc)
				n = make([]string, len(buf))
				for i, f := range buf {
					n[i] = f.Name
				}
				locNames[loc] = n
			}
			names = append(names, n...)
		}
		if !s.keep(names) {
			continue
		}
		if lsched {
			continue // scheduler latency (runnable time, goroutines not yet started) is in no bucket
		}
		ps.total += v
		s.total[side] += v
		for i, c := range s.checks {
			hit[i] = c.Target == TargetMethod && s.matches(i, names)
			if hit[i] {
				ps.matched[i] += v
			}
		}
		b, at := s.classify(names, kind)
		if lok {
			// A Go execution trace decided it from the goroutine's state
			// and block reason; the deciding frame is the first real one
			// (not "[running]").
			b, at = lb, 0
			for i, n := range names {
				if !(strings.HasPrefix(n, "[") && strings.HasSuffix(n, "]")) {
					at = i
					break
				}
			}
		}
		ps.buckets[b] += v
		if len(names) == 0 {
			continue
		}
		if at < 0 {
			at = 0
		}
		var caller string
		for i, c := range s.checks {
			if !selects(c, b, hit[i]) {
				continue
			}
			if caller == "" {
				caller = s.caller(names, at, kind)
			}
			credit(s.dec[i], names[at], side, v)
			credit(s.call[i], caller, side, v)
		}
	}
	return ps, nil
}

func credit(m map[string]*[2]float64, name string, side diff.Side, v float64) {
	a := m[name]
	if a == nil {
		a = &[2]float64{}
		m[name] = a
	}
	a[side] += v
}

// selects reports whether check c counts a sample of bucket b (hit: the
// sample has a frame matching c's method regexp).
func selects(c Check, b diff.Bucket, hit bool) bool {
	switch c.Target {
	case TargetBucket:
		return b == c.Bucket
	case TargetSync:
		return b != diff.CPU
	}
	return hit
}

func (s *scanner) matches(i int, names []string) bool {
	re, memo := s.checks[i].Method, s.methodHit[i]
	for _, n := range names {
		hit, ok := memo[n]
		if !ok {
			hit = re.MatchString(n)
			memo[n] = hit
		}
		if hit {
			return true
		}
	}
	return false
}

// keep applies --focus and --ignore with the engine's semantics: a sample is
// dropped if any frame matches ignore, and kept only if some frame matches
// focus.
func (s *scanner) keep(names []string) bool {
	if s.opts.Focus == nil && s.opts.Ignore == nil {
		return true
	}
	focused := s.opts.Focus == nil
	for _, n := range names {
		f, ok := s.focus[n]
		if !ok {
			f = s.opts.FilterClass(n)
			s.focus[n] = f
		}
		switch f {
		case diff.Ignored:
			return false
		case diff.Focused:
			focused = true
		}
	}
	return focused
}

func (s *scanner) isRuled(name string, kind profile.Kind) bool {
	m := s.ruled[kind]
	if m == nil {
		m = map[string]bool{}
		s.ruled[kind] = m
	}
	r, ok := m[name]
	if !ok {
		norm := symbolize.Normalize(name)
		// asyncPreempt frames are special to the classifier whether or not
		// a rule names them, so they are never folded into a placeholder.
		r = s.rules.Match(norm, kind) != nil || strings.HasPrefix(norm, "runtime.asyncPreempt")
		m[name] = r
	}
	return r
}

// classify returns the bucket of a stack (leaf first) and the index of its
// deciding frame, as the engine decides them. Only frames that match a rule
// take part in a decision beyond their position, so each run of rule-free
// frames is replaced by one placeholder and verdicts are memoized on the
// compressed stack: the classifier then runs once per distinct pattern of
// machinery rather than once per sample.
func (s *scanner) classify(names []string, kind profile.Kind) (diff.Bucket, int) {
	if len(names) == 0 {
		return s.rules.ClassifyStack(nil, kind)
	}
	ok, seen := s.placebo[kind]
	if !seen {
		ok = s.rules.Match(symbolize.Normalize(placeholder), kind) == nil
		s.placebo[kind] = ok
	}
	if !ok {
		return s.rules.ClassifyStack(names, kind)
	}
	var key strings.Builder
	key.WriteString(string(kind))
	parts := make([]string, 0, len(names))
	pos := make([]int, 0, len(names))
	prevFree := false
	for i, n := range names {
		if s.isRuled(n, kind) {
			parts, pos = append(parts, n), append(pos, i)
			prevFree = false
		} else if !prevFree {
			parts, pos = append(parts, placeholder), append(pos, i)
			prevFree = true
		} else {
			continue
		}
		key.WriteByte(0)
		key.WriteString(parts[len(parts)-1])
	}
	k := key.String()
	c, hit := s.classes[k]
	if !hit {
		c.b, c.at = s.rules.ClassifyStack(parts, kind)
		s.classes[k] = c
	}
	if c.at < 0 {
		return c.b, -1
	}
	return c.b, pos[c.at]
}

// caller is the frame a sample is charged to in the "callers" list: from the
// deciding frame towards the root, the first frame that is the program's own
// code (no rule matches it and it is not in the Go standard library), so a
// lock-contention sample names the function that called Lock rather than
// the runtime's semaphore. Failing that, the first rule-free frame; failing
// that, the deciding frame.
func (s *scanner) caller(names []string, at int, kind profile.Kind) string {
	free := -1
	for i := at; i < len(names); i++ {
		if s.isRuled(names[i], kind) {
			continue
		}
		if free < 0 {
			free = i
		}
		if !s.isGoStd(names[i]) {
			return names[i]
		}
	}
	if free >= 0 {
		return names[free]
	}
	return names[at]
}

// isGoStd reports whether a frame name is a Go standard-library function
// ("sync.(*Mutex).Lock", "internal/sync.runtime_SemacquireMutex",
// "net/http.(*conn).serve"): its import path's first element is a standard
// root. Names of other runtimes ("System.Threading.Monitor.Enter") never are.
func (s *scanner) isGoStd(name string) bool {
	r, ok := s.goStd[name]
	if !ok {
		r = symbolize.IsGoStd(name)
		s.goStd[name] = r
	}
	return r
}
