package rules

import (
	"bufio"
	"embed"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/profdiff/profdiff/profile/kind"
)

// Strength says how a rule's frame takes part in deciding a sample's bucket
// (see Classify).
type Strength uint8

const (
	Strong Strength = iota // a semantic API frame: the strong frame nearest the leaf decides
	Weak                   // a mechanism frame: decides only when no strong frame exists
	Ctx                    // a thread-loop or scheduler context: decides only if nothing else did
	Skip                   // transparent: never matched, the caller decides
)

var strengthNames = []string{"strong", "weak", "ctx", "skip"}

func (s Strength) String() string { return strengthNames[s] }

// Rule is one row of a rule pack: frames whose normalized name matches
// Pattern are evidence for Bucket with the given Strength.
type Rule struct {
	Runtime  string   // rule pack: go, dotnet, jvm, node, ruby, native, rust, or a user file's name
	Bucket   Bucket   // ignored for Skip rules
	Strength Strength //
	NotLeaf  bool     // only counts when the frame has a callee (runtime.lock2)
	// Leaf: only counts when the frame has no callee, nothing below it but
	// skip frames: a method that blocks when it is the leaf and runs the
	// caller's block when it is not (Ruby's Thread::Mutex#synchronize).
	Leaf bool
	// External: on a skip rule, the frame marks the sample as spent in
	// native code or blocked in the OS (TraceEvent's UNMANAGED_CODE_TIME);
	// on any other rule, the rule counts only in such a sample, for the
	// frame that made the native call (the first non-skip frame).
	External bool
	// Fallback is set on a skip rule that names a bucket: the frame stays
	// transparent, but when no other rule decides the sample, its bucket
	// does instead of cpu (a libc futex wait with no caller that says why).
	Fallback bool
	// Native: the rule is about a C library or kernel function, and
	// counts only for a frame that can be native code, not for a
	// script's function of the same name (a JavaScript send, a Python
	// read), which the classifier tells by its source file and matches
	// with MatchScript.
	Native  bool
	Kinds   []kind.Kind           // only in profiles of these kinds (nil: every kind)
	Pattern string                // RE2, matched against symbolize.Normalize(name)
	Note    string                // why the rule exists
	Source  string                // file:line the rule came from
	syn     *syntax.Regexp        // Pattern parsed (Parse), for the literal pre-filter
	re      func() *regexp.Regexp // Pattern compiled when first asked (Parse)
}

// regexp returns the rule's compiled pattern. Parse compiles it when
// it is first asked for (sync.OnceValue: walks of several profiles may
// ask at once): most rules' regexps never run, the literal pre-filter in
// Match ruling them out for every name of a profile, and compiling the
// built-in packs' 80 patterns up front would be most of a command's
// start. Parse has parsed the pattern, and regexp.Compile fails only
// where syntax.Parse does. A rule made by hand, without Parse,
// compiles it at each call.
func (r *Rule) regexp() *regexp.Regexp {
	if r.re == nil {
		return regexp.MustCompile(r.Pattern)
	}
	return r.re()
}

// Modifiers renders the strength column as written in rule files.
func (r *Rule) Modifiers() string {
	s := r.Strength.String()
	if r.NotLeaf {
		s += ",notleaf"
	}
	if r.Leaf {
		s += ",leaf"
	}
	if r.External {
		s += ",external"
	}
	if r.Native {
		s += ",native"
	}
	if len(r.Kinds) > 0 {
		ks := make([]string, len(r.Kinds))
		for i, k := range r.Kinds {
			ks[i] = string(k)
		}
		s += ",kind=" + strings.Join(ks, "|")
	}
	return s
}

// BucketName is the bucket column as written in rule files ("-" for skip
// rules that name no fallback bucket).
func (r *Rule) BucketName() string {
	if r.Strength == Skip && !r.Fallback {
		return "-"
	}
	return r.Bucket.String()
}

func (r *Rule) appliesTo(k kind.Kind) bool {
	if len(r.Kinds) == 0 {
		return true
	}
	for _, x := range r.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Set is an ordered list of rules; for each frame the first rule that
// matches (and applies to the profile's kind) is the frame's rule. User rules
// come first so they override the built-in packs.
type Set struct {
	Rules []*Rule

	// filter lets Match skip rules whose literals a name lacks; rebuilt
	// when Rules changes.
	filter atomic.Pointer[ruleFilter]
}

//go:embed *.rules
var builtinFS embed.FS

// PackOrder is the order of the built-in packs. Go comes first because its
// names are the most specific; native frames come last because every
// managed runtime calls into them.
var PackOrder = []string{"go", "dotnet", "jvm", "node", "python", "ruby", "rust", "native"}

// Default returns the built-in rule packs.
func Default() *Set {
	rs := &Set{}
	for _, name := range PackOrder {
		f, err := builtinFS.Open(name + ".rules")
		if err != nil {
			panic(err) // embedded at build time
		}
		rules, err := Parse("rules/"+name+".rules", f)
		f.Close()
		if err != nil {
			panic(err) // a broken built-in pack is caught by the tests
		}
		rs.Rules = append(rs.Rules, rules...)
	}
	return rs
}

// WithUserRules returns a rule set with user rules ahead of rs's rules.
func (rs *Set) WithUserRules(user []*Rule) *Set {
	return &Set{Rules: append(append([]*Rule{}, user...), rs.Rules...)}
}

// oneLine escapes the line breaks of text quoted in an error message.
var oneLine = strings.NewReplacer("\r", `\r`, "\n", `\n`)

// Parse reads a rule file. Each non-blank line that does not start with
// '#' holds tab-separated columns:
//
//	runtime  bucket  strength[,notleaf|,leaf][,external][,native][,kind=K1|K2]  pattern  [note]
//
// bucket is cpu, wait, lock-contention, gc, io, syscall, or "-" for skip
// (a skip rule that names a bucket is a fallback, see Rule.Fallback);
// strength is strong, weak, ctx or skip; pattern is an RE2 regular
// expression matched against the normalized frame name. Errors name the file
// and line.
func Parse(name string, r io.Reader) ([]*Rule, error) {
	var rules []*Rule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		var cols []string
		for _, c := range strings.Split(text, "\t") {
			if c = strings.TrimSpace(c); c != "" {
				cols = append(cols, c)
			}
		}
		bad := func(format string, a ...any) error {
			// One line, whatever the pattern held (a carriage return).
			return fmt.Errorf("%s:%d: %s", name, line, oneLine.Replace(fmt.Sprintf(format, a...)))
		}
		if len(cols) < 4 {
			return nil, bad("want 4 or 5 tab-separated columns (runtime, bucket, strength, pattern, note), got %d", len(cols))
		}
		rule := &Rule{Runtime: cols[0], Pattern: cols[3], Source: fmt.Sprintf("%s:%d", name, line)}
		if len(cols) > 4 {
			rule.Note = strings.Join(cols[4:], " ")
		}
		mods := strings.Split(cols[2], ",")
		found := false
		for i, n := range strengthNames {
			if mods[0] == n {
				rule.Strength, found = Strength(i), true
			}
		}
		if !found {
			return nil, bad("unknown strength %q (want strong, weak, ctx or skip)", mods[0])
		}
		for _, m := range mods[1:] {
			switch {
			case m == "notleaf":
				rule.NotLeaf = true
			case m == "leaf":
				rule.Leaf = true
			case m == "external":
				rule.External = true
			case m == "native":
				rule.Native = true
			case strings.HasPrefix(m, "kind="):
				for _, k := range strings.Split(strings.TrimPrefix(m, "kind="), "|") {
					pk, err := kind.Parse(k)
					if err != nil {
						return nil, bad("%v", err)
					}
					rule.Kinds = append(rule.Kinds, pk)
				}
			default:
				return nil, bad("unknown modifier %q (want notleaf, leaf, external, native or kind=K)", m)
			}
		}
		if rule.Leaf && rule.NotLeaf {
			return nil, bad("leaf and notleaf exclude each other")
		}
		if cols[1] == "-" {
			if rule.Strength != Skip {
				return nil, bad("bucket \"-\" is only for skip rules")
			}
		} else {
			b, err := ParseBucket(cols[1])
			if err != nil {
				return nil, bad("%v", err)
			}
			rule.Bucket = b
			rule.Fallback = rule.Strength == Skip
		}
		// Parsed now, for its errors and the pre-filter; compiled when
		// first matched (Rule.regexp).
		syn, err := syntax.Parse(rule.Pattern, syntax.Perl)
		if err != nil {
			return nil, bad("bad pattern: %v", err)
		}
		rule.syn = syn
		rule.re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(rule.Pattern) })
		rules = append(rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%s: no rules", name)
	}
	return rules, nil
}

// Match returns the first rule that matches the normalized frame name in a
// profile of kind k, or nil.
//
// Most frames match no rule; a literal pre-filter (see ruleFilter) skips
// the regexps that cannot match, which makes classification of large
// profiles several times faster without changing any result.
func (rs *Set) Match(normalized string, k kind.Kind) *Rule {
	return rs.match(normalized, k, forNative)
}

// MatchScript is Match for a script's frame (a JavaScript, Python or Ruby
// function, by its source file): the rules marked native (Rule.Native)
// are passed over, so a function of the program named like a C library
// call (send, read) is not taken for it.
func (rs *Set) MatchScript(normalized string, k kind.Kind) *Rule {
	return rs.match(normalized, k, forScript)
}

// NativeNamed reports whether a rule marked native matches the name in a
// profile of some kind: only a script's frame of such a name can have
// another rule (MatchScript) than Match gives.
func (rs *Set) NativeNamed(normalized string) bool {
	f := rs.loadFilter()
	return f.native.pass(normalized) && rs.memoized(f, matchKey{normalized, "", forNaming}) != nil
}

// loadFilter returns the pre-filter of rs's current rules, built when
// they changed.
func (rs *Set) loadFilter() *ruleFilter {
	f := rs.filter.Load()
	if !f.validFor(rs) {
		f = newRuleFilter(rs)
		rs.filter.Store(f)
	}
	return f
}

func (rs *Set) match(normalized string, k kind.Kind, q question) *Rule {
	f := rs.loadFilter()
	if !f.any.pass(normalized) {
		return nil
	}
	return rs.memoized(f, matchKey{normalized, k, q})
}

// memoized answers a question about a name that passed the filter f
// (first) from the memo, or finds the answer and keeps it.
func (rs *Set) memoized(f *ruleFilter, key matchKey) *Rule {
	if r, ok := f.memo.Load(key); ok {
		return r.(*Rule)
	}
	var m *Rule
	for i, r := range rs.Rules {
		if key.q.asks(r, key.k) && f.rules[i].pass(key.name) && r.regexp().MatchString(key.name) {
			m = r
			break
		}
	}
	if f.memoN.Load() < matchMemoCap {
		if _, had := f.memo.LoadOrStore(key, m); !had {
			f.memoN.Add(1)
		}
	}
	return m
}

// question is what a matchKey asks of a name: its rule in a native
// frame (Match), in a script's frame (MatchScript), or its first native
// rule whatever the kind (NativeNamed).
type question uint8

const (
	forNative question = iota
	forScript
	forNaming
)

// asks reports whether rule r is one the question considers, in a
// profile of kind k.
func (q question) asks(r *Rule, k kind.Kind) bool {
	switch q {
	case forScript:
		return !r.Native && r.appliesTo(k)
	case forNaming:
		return r.Native
	}
	return r.appliesTo(k)
}

// matchKey is a name, kind and question Match, MatchScript or NativeNamed
// has answered (ruleFilter.memo): the shards of a parallel walk, and the
// profiles of one run, ask about mostly the same names.
type matchKey struct {
	name string
	k    kind.Kind
	q    question
}

const matchMemoCap = 1 << 20

// matchUnfiltered is Match, MatchScript or NativeNamed (q) without the
// pre-filter: the reference the filter's tests compare against.
func (rs *Set) matchUnfiltered(normalized string, k kind.Kind, q question) *Rule {
	for _, r := range rs.Rules {
		if q.asks(r, k) && r.regexp().MatchString(normalized) {
			return r
		}
	}
	return nil
}
