package rules

import (
	"math"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// ruleFilter is a conservative pre-check inside Set.Match. From each rule's
// pattern it takes literals one of which every match must start with or
// contain; a rule whose literals a name lacks cannot match it, so its
// regexp is skipped. Most frames of a profile match no rule, and running
// every rule's regexp on them was most of Add's time on large profiles.
type ruleFilter struct {
	src []*Rule   // the rules it was built from
	any litFilter // a name passing no rule's filter fails this one
	// native is any of the rules marked native (Rule.Native) alone: a
	// name failing it is no native rule's (Set.NativeNamed).
	native litFilter
	rules  []litFilter // per rule
	memo   sync.Map    // matchKey → *Rule (nil: none): what Match found, at most matchMemoCap
	memoN  atomic.Int64
}

// litFilter passes names that start with one of prefixes (bucketed by first
// byte) or contain one of substrs; all passes every name.
type litFilter struct {
	all      bool
	prefixes map[byte][]string
	substrs  []string
	subs     *subIndex // substrs indexed, when there are many (nil: a loop)
}

// subIndex finds whether a name contains one of many substrings (each
// two bytes or more) in one pass over the name: a bit per pair of bytes
// that starts a substring says where to look, and only there are the
// substrings starting with that pair compared.
type subIndex struct {
	pairs [1 << 16 / 64]uint64
	by    map[uint16][]string
}

// subIndexMin is the number of substrings from which the index beats a
// strings.Contains per substring (BenchmarkLitFilter).
const subIndexMin = 8

func newSubIndex(subs []string) *subIndex {
	x := &subIndex{by: map[uint16][]string{}}
	for _, sub := range subs {
		if len(sub) < 2 {
			return nil
		}
		k := uint16(sub[0])<<8 | uint16(sub[1])
		x.pairs[k>>6] |= 1 << (k & 63)
		x.by[k] = append(x.by[k], sub)
	}
	return x
}

func (x *subIndex) in(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		k := uint16(s[i])<<8 | uint16(s[i+1])
		if x.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, sub := range x.by[k] {
			if strings.HasPrefix(s[i:], sub) {
				return true
			}
		}
	}
	return false
}

func newRuleFilter(rs *Set) *ruleFilter {
	f := &ruleFilter{src: rs.Rules, rules: make([]litFilter, len(rs.Rules))}
	var all, native []lit
	for i, r := range rs.Rules {
		var lits []lit
		re, err := r.syn, error(nil)
		if re == nil { // a rule not made by Parse
			re, err = syntax.Parse(r.Pattern, syntax.Perl)
		}
		ok := err == nil
		if ok {
			lits, ok = needLits(re)
		}
		if !ok {
			f.rules[i].all = true
			f.any.all = true
			f.native.all = f.native.all || r.Native
			continue
		}
		f.rules[i] = makeLitFilter(lits)
		all = append(all, lits...)
		if r.Native {
			native = append(native, lits...)
		}
	}
	if !f.any.all {
		f.any = makeLitFilter(all)
	}
	if !f.native.all {
		f.native = makeLitFilter(native) // no native rule: passes nothing
	}
	return f
}

// validFor reports whether f was built from rs's current rules.
func (f *ruleFilter) validFor(rs *Set) bool {
	return f != nil && len(f.src) == len(rs.Rules) && (len(f.src) == 0 || &f.src[0] == &rs.Rules[0])
}

// makeLitFilter keeps only the weakest conditions: a substring containing a
// kept substring, or a prefix starting with a kept prefix or containing a
// kept substring, adds nothing.
func makeLitFilter(lits []lit) litFilter {
	var pre, sub []string
	for _, l := range lits {
		if l.prefix {
			pre = append(pre, l.s)
		} else {
			sub = append(sub, l.s)
		}
	}
	var f litFilter
	sort.Slice(sub, func(i, j int) bool { return len(sub[i]) < len(sub[j]) })
	for _, s := range sub {
		if !containsAny(s, f.substrs) {
			f.substrs = append(f.substrs, s)
		}
	}
	sort.Slice(pre, func(i, j int) bool { return len(pre[i]) < len(pre[j]) })
	for _, p := range pre {
		if !hasAnyPrefix(p, f.prefixes[p[0]]) && !containsAny(p, f.substrs) {
			if f.prefixes == nil {
				f.prefixes = map[byte][]string{}
			}
			f.prefixes[p[0]] = append(f.prefixes[p[0]], p)
		}
	}
	if len(f.substrs) >= subIndexMin {
		f.subs = newSubIndex(f.substrs)
	}
	return f
}

func (f *litFilter) pass(name string) bool {
	if f.all {
		return true
	}
	if name != "" && f.prefixes != nil && hasAnyPrefix(name, f.prefixes[name[0]]) {
		return true
	}
	if f.subs != nil {
		return f.subs.in(name)
	}
	return containsAny(name, f.substrs)
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// lit is a literal that a regexp match must contain, or start with when
// prefix is set (the match then starts at the beginning of the text).
type lit struct {
	s      string
	prefix bool
}

// needLits returns literals one of which every match of re holds (see lit);
// ok is false when no such set is known. It only looks at literal runs,
// captures, alternations, concatenations, x+ and x{n,} with n ≥ 1, and
// `^` followed by such a piece; anything else yields nothing, which keeps
// it conservative.
func needLits(re *syntax.Regexp) ([]lit, bool) { return requiredLits(re, false) }

// prefixLits returns literals one of which every match of re starts with.
func prefixLits(re *syntax.Regexp) ([]lit, bool) { return requiredLits(re, true) }

// requiredLits is needLits, or prefixLits when prefix is set: the two
// differ only in what a concatenation requires.
func requiredLits(re *syntax.Regexp, prefix bool) ([]lit, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 {
			return nil, false
		}
		return []lit{{s: string(re.Rune), prefix: prefix}}, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLits(re.Sub[0], prefix)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLits(re.Sub[0], prefix)
		}
	case syntax.OpAlternate:
		var all []lit
		for _, sub := range re.Sub {
			l, ok := requiredLits(sub, prefix)
			if !ok {
				return nil, false
			}
			all = append(all, l...)
		}
		return all, len(all) > 0
	case syntax.OpConcat:
		if prefix {
			// The first piece that matches text.
			for _, sub := range re.Sub {
				if sub.Op != syntax.OpBeginText && sub.Op != syntax.OpEmptyMatch {
					return prefixLits(sub)
				}
			}
			return nil, false
		}
		return concatLits(re)
	}
	return nil, false
}

// concatLits is needLits of a concatenation: the most selective literal
// set of any piece (a piece after `^` gives prefixes).
func concatLits(re *syntax.Regexp) ([]lit, bool) {
	var best []lit
	for i, sub := range re.Sub {
		var l []lit
		var ok bool
		if sub.Op == syntax.OpBeginText && i+1 < len(re.Sub) {
			l, ok = prefixLits(re.Sub[i+1])
		} else {
			l, ok = needLits(sub)
		}
		if ok && (best == nil || litScore(l) > litScore(best)) {
			best = l
		}
	}
	return best, best != nil
}

// litScore ranks literal sets by selectivity: the shortest literal's
// length, with a bonus for prefixes (cheaper and stricter to check).
func litScore(ls []lit) int {
	score := math.MaxInt
	for _, l := range ls {
		n := len(l.s)
		if l.prefix {
			n += 2
		}
		score = min(score, n)
	}
	return score
}
