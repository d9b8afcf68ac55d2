package rules

import (
	"math/rand"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// TestRuleFilter checks that the literal pre-filter inside Set.Match never hides
// a rule that matches: for strings generated from every rule's pattern (and
// for synthetic Go frame names), matching only the candidate rules gives
// what Set.Match gives.
func TestRuleFilter(t *testing.T) {
	extra, err := Parse("test.rules", strings.NewReader(strings.Join([]string{
		"user\tlock-contention\tstrong\t(?i)mutex",
		"user\twait\tstrong\t\\bWait\\b",
		"user\tio\tweak\t[Rr]ead(er)?$|^$",
		"user\tcpu\tctx\t(?m)^hot\\.",
		"user\tgc\tstrong\tx{2,}y|.*gcAll$",
		"user\tsyscall\tstrong,kind=block\tfoo(bar)+baz|qux(quux)*",
		"user\t-\tskip\t^(a|b)c|^(?:d|e)+f",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	rs := Default().WithUserRules(extra)
	f := newRuleFilter(rs)
	r := rand.New(rand.NewSource(1))
	var corpus []string
	matched := 0
	for i, rule := range rs.Rules {
		re, err := syntax.Parse(rule.Pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for range 60 {
			var b strings.Builder
			if r.Intn(3) == 0 {
				b.WriteString("pkg.(*T).")
			}
			genMatch(&b, re, r)
			if r.Intn(3) == 0 {
				b.WriteString(".func1")
			}
			s := b.String()
			corpus = append(corpus, s)
			if !rule.regexp().MatchString(s) {
				continue // an anchor the prefix or suffix broke
			}
			matched++
			if !f.rules[i].pass(s) || !f.any.pass(s) {
				t.Errorf("%s: pattern %q matches %q but the filter drops it", rule.Source, rule.Pattern, s)
			}
		}
	}
	if matched < len(corpus)/2 {
		t.Errorf("only %d of %d generated strings match their pattern", matched, len(corpus))
	}
	p := synth.Generate(synth.Config{Seed: 3, Stacks: 2000, MinDepth: 5, MaxDepth: 30, Functions: 2000})
	skipped, builtin := 0, newRuleFilter(Default())
	for _, fn := range p.Function {
		corpus = append(corpus, fn.Name)
		if !builtin.any.pass(fn.Name) {
			skipped++
		}
	}
	if skipped < len(p.Function)/2 {
		t.Errorf("the built-in rules' filter skips only %d of %d synthetic function names", skipped, len(p.Function))
	}
	// Each asked twice: the second answer comes from Match's memo. Names
	// whose rule differs by kind are asked for both kinds in turn, and for
	// a native frame, a script's frame and the native rules' naming.
	for _, s := range corpus {
		checkMatch(t, rs, s, profile.KindCPU, profile.KindBlock)
	}
	if rs.filter.Load().memoN.Load() == 0 {
		t.Error("Match memoized nothing")
	}
}

// checkMatch checks that Match, MatchScript and NativeNamed answer for a
// name as the unfiltered scan does, in profiles of kinds ks, twice (the
// second answer from the memo).
func checkMatch(t *testing.T, rs *Set, s string, ks ...profile.Kind) {
	t.Helper()
	type ask struct {
		what string
		k    profile.Kind
		q    question
		want *Rule
	}
	var asks []ask
	for _, k := range ks {
		asks = append(asks, ask{"match", k, forNative, rs.matchUnfiltered(s, k, forNative)},
			ask{"script match", k, forScript, rs.matchUnfiltered(s, k, forScript)})
	}
	wantNamed := rs.matchUnfiltered(s, "", forNaming) != nil
	for range 2 {
		for _, a := range asks {
			got := rs.Match(s, a.k)
			if a.q == forScript {
				got = rs.MatchScript(s, a.k)
			}
			if got != a.want {
				t.Fatalf("%q (%s): filtered %s %v, want %v", s, a.k, a.what, got, a.want)
			}
		}
		if got := rs.NativeNamed(s); got != wantNamed {
			t.Fatalf("%q: NativeNamed %v, want %v", s, got, wantNamed)
		}
	}
}

// genMatch writes a random string that re matches, if re's anchors allow.
func genMatch(b *strings.Builder, re *syntax.Regexp, r *rand.Rand) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && r.Intn(2) == 0 {
				c = unicode.SimpleFold(c)
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return
		}
		i := r.Intn(len(re.Rune)/2) * 2
		lo, hi := re.Rune[i], re.Rune[i+1]
		b.WriteRune(lo + rune(r.Intn(int(min(hi-lo, 200))+1)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte("aZ._:/()*$ 09"[r.Intn(13)])
	case syntax.OpCapture:
		genMatch(b, re.Sub[0], r)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 2
		switch re.Op {
		case syntax.OpPlus:
			lo, hi = 1, 3
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 2
			}
		}
		for range lo + r.Intn(hi-lo+1) {
			genMatch(b, re.Sub[0], r)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			genMatch(b, sub, r)
		}
	case syntax.OpAlternate:
		genMatch(b, re.Sub[r.Intn(len(re.Sub))], r)
	}
}

// The substring index answers as a strings.Contains per substring does,
// on the built-in rules' substrings and on names that hold them at
// either end, in the middle, cut short by a byte, or not at all.
func TestSubIndex(t *testing.T) {
	f := newRuleFilter(Default())
	subs := f.any.substrs
	x := newSubIndex(subs)
	if x == nil || f.any.subs == nil {
		t.Fatalf("no index for the built-in rules' %d substrings", len(subs))
	}
	r := rand.New(rand.NewSource(1))
	names := []string{"", "a", "main.main", "runtime.futex"}
	p := synth.Generate(synth.Config{Seed: 5, Stacks: 500, MinDepth: 5, MaxDepth: 20, Functions: 1000})
	for _, fn := range p.Function {
		names = append(names, fn.Name)
	}
	for _, sub := range subs {
		pad := names[r.Intn(len(names))]
		names = append(names, sub, pad+sub, sub+pad, pad+sub+pad, sub[:len(sub)-1], pad+sub[1:])
	}
	hits := 0
	for _, s := range names {
		want := containsAny(s, subs)
		if got := x.in(s); got != want {
			t.Errorf("%q: index %v, Contains %v", s, got, want)
		}
		if want {
			hits++
		}
	}
	if hits == 0 || hits == len(names) {
		t.Errorf("%d of %d names hold a substring: the test asks nothing", hits, len(names))
	}
}

// BenchmarkLitFilter is the built-in rules' pre-check on synthetic
// function names, by a strings.Contains per substring and by the index.
//
//	go test ./diff -run '^$' -bench LitFilter
func BenchmarkLitFilter(b *testing.B) {
	f := newRuleFilter(Default())
	p := synth.Generate(synth.Config{Seed: 5, Stacks: 500, MinDepth: 5, MaxDepth: 20, Functions: 1000})
	var names []string
	for _, fn := range p.Function {
		names = append(names, fn.Name)
	}
	b.Run("contains", func(b *testing.B) {
		for b.Loop() {
			for _, s := range names {
				containsAny(s, f.any.substrs)
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			for _, s := range names {
				f.any.subs.in(s)
			}
		}
	})
}
