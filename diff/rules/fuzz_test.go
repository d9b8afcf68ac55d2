package rules

import (
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile"
)

// FuzzRules: Parse on any rule file either fails with one line naming
// the file (and the line) or returns rules that read back the same when
// written out again; and Set.Match, with its literal pre-filter, finds
// what the unfiltered scan finds (as do MatchScript and NativeNamed) for the fuzzed frame name and for names
// generated from each fuzzed pattern. Seeds:
// the start of each built-in pack with a frame, and the manual's example.
func FuzzRules(f *testing.F) {
	files, err := fs.Glob(builtinFS, "*.rules")
	if err != nil || len(files) == 0 {
		f.Fatalf("no built-in packs: %v", err)
	}
	for _, name := range files {
		data, err := fs.ReadFile(builtinFS, name)
		if err != nil {
			f.Fatal(err)
		}
		// A dozen lines of each: a whole pack makes every mutation slow
		// and its minimization slower.
		lines := strings.SplitAfter(string(data), "\n")
		f.Add(strings.Join(lines[:min(len(lines), 12)], ""), "sync.(*Mutex).lockSlow")
	}
	if data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "docs", "myapp.rules")); err == nil {
		f.Add(string(data), "mycorp/pool.(*Pool).acquireSlow")
	}
	f.Add("x\tcpu\tstrong,kind=block|trace,notleaf\t(?i)^a+b{2,3}$\tnote with  spaces\n", "AAbbb")
	f.Add("x\tio\tweak,native\t^_*read$\ny\twait\tstrong\tread\n", "__read")
	f.Fuzz(func(t *testing.T, text, frame string) {
		rules, err := Parse("fuzz.rules", strings.NewReader(text))
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "fuzz.rules:") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error %q is not one line naming the file", msg)
			}
			return
		}
		checkRoundTrip(t, rules)
		rs := &Set{Rules: rules}
		names := []string{frame}
		r := rand.New(rand.NewSource(int64(len(text))))
		for _, rule := range rules {
			if strings.Contains(rule.Pattern, "{") {
				continue // counted repeats can generate huge names
			}
			re, err := syntax.Parse(rule.Pattern, syntax.Perl)
			if err != nil {
				t.Fatalf("%s: %q compiles but does not parse: %v", rule.Source, rule.Pattern, err)
			}
			var b strings.Builder
			genMatch(&b, re, r)
			names = append(names, b.String())
		}
		for _, s := range names {
			checkMatch(t, rs, s, profile.KindCPU, profile.KindBlock, profile.KindTrace)
		}
	})
}

// checkRoundTrip writes rules the way rule files hold them and parses
// them again: the same rules must come back.
func checkRoundTrip(t *testing.T, rules []*Rule) {
	t.Helper()
	var b strings.Builder
	for _, r := range rules {
		b.WriteString(strings.Join([]string{r.Runtime, r.BucketName(), r.Modifiers(), r.Pattern, r.Note}, "\t") + "\n")
	}
	back, err := Parse("again.rules", strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("rules written out do not read back: %v\n%s", err, b.String())
	}
	if len(back) != len(rules) {
		t.Fatalf("%d rules read back as %d", len(rules), len(back))
	}
	for i, r := range rules {
		g := back[i]
		if g.Runtime != r.Runtime || g.Bucket != r.Bucket || g.Strength != r.Strength || g.NotLeaf != r.NotLeaf ||
			g.Leaf != r.Leaf || g.External != r.External || g.Native != r.Native || g.Fallback != r.Fallback ||
			!slices.Equal(g.Kinds, r.Kinds) || g.Pattern != r.Pattern || g.Note != r.Note {
			t.Errorf("%s reads back as %s: %+v, want %+v", r.Source, g.Source, *g, *r)
		}
	}
}
