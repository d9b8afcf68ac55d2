package rules

import (
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile"
)

// A rule marked native counts for a native frame (Match) and not for a
// script's frame (MatchScript), where the next rule that matches, if
// any, is the frame's; NativeNamed says which names a native rule
// matches, whatever the kind.
func TestNativeModifier(t *testing.T) {
	const file = "user\tio\tweak,native,kind=wall\t^_*read$\tlibc read\n" +
		"user\twait\tstrong\t^read$\tthe program's own read\n" +
		"user\t-\tskip,native\t^syscall$\tlibc's syscall\n"
	rules, err := Parse("user.rules", strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if !rules[0].Native || rules[1].Native || !rules[2].Native {
		t.Fatalf("native flags %v %v %v, want true false true", rules[0].Native, rules[1].Native, rules[2].Native)
	}
	if got := rules[0].Modifiers(); got != "weak,native,kind=wall" {
		t.Errorf("modifiers written %q, want weak,native,kind=wall", got)
	}
	rs := &Set{Rules: rules}
	for _, c := range []struct {
		name           string
		k              profile.Kind
		native, script *Rule
		named          bool
	}{
		{"read", profile.KindWall, rules[0], rules[1], true},
		{"__read", profile.KindWall, rules[0], nil, true},
		{"read", profile.KindCPU, rules[1], rules[1], true}, // the native rule is for wall profiles only
		{"__read", profile.KindCPU, nil, nil, true},
		{"syscall", profile.KindCPU, rules[2], nil, true},
		{"reader", profile.KindWall, nil, nil, false},
	} {
		if got := rs.Match(c.name, c.k); got != c.native {
			t.Errorf("Match(%q, %s) = %v, want %v", c.name, c.k, got, c.native)
		}
		if got := rs.MatchScript(c.name, c.k); got != c.script {
			t.Errorf("MatchScript(%q, %s) = %v, want %v", c.name, c.k, got, c.script)
		}
		if got := rs.NativeNamed(c.name); got != c.named {
			t.Errorf("NativeNamed(%q) = %v, want %v", c.name, got, c.named)
		}
	}
	if _, err := Parse("bad.rules", strings.NewReader("x\tio\tweak,natve\t^read$\n")); err == nil ||
		!strings.Contains(err.Error(), `bad.rules:1: unknown modifier "natve"`) {
		t.Errorf("misspelt modifier: error %v", err)
	}
}
