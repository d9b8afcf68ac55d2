package diff

import (
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// classify takes a run of frames no rule matched in one step: each still
// counts as a callee for a notleaf rule above it and ends an external
// marker's reach, and a preemption trampoline with no rule of its own is
// not such a frame (it is not a real callee).
func TestClassifyRunsOfPlainFrames(t *testing.T) {
	user := parseRuleLines(t,
		"t\tlock-contention\tstrong,notleaf\t^lk$",
		"t\t-\tskip,external\t^EXT$",
		"t\tio\tstrong,external\t^sock$",
		"t\twait\tweak\t^park$",
		"t\tlock-contention\tstrong,leaf\t^sync$",
		"t\t-\tskip\t^hop$")
	rs := (&rules.Set{}).WithUserRules(user)
	for _, c := range []struct {
		stack []string
		want  rules.Bucket
		at    int
	}{
		{[]string{"f", "lk", "main"}, rules.LockContention, 1},         // f is lk's callee
		{[]string{"lk", "main"}, rules.CPU, 0},                         // a notleaf leaf does not count
		{[]string{"runtime.asyncPreempt", "lk", "main"}, rules.CPU, 0}, // nor one interrupted, not calling
		{[]string{"a", "b", "c", "d", "lk", "e", "f"}, rules.LockContention, 4},
		{[]string{"a", "b", "park", "c", "lk"}, rules.LockContention, 4}, // strong beats weak, past the runs
		{[]string{"a", "b", "park", "c", "d"}, rules.Wait, 2},
		{[]string{"EXT", "sock", "main"}, rules.IO, 1}, // the frame that called out
		{[]string{"EXT", "f", "sock"}, rules.CPU, 1},   // f called sock, not native code
		{[]string{"EXT", "f", "g", "EXT", "sock", "h"}, rules.IO, 4},
		{[]string{"sync", "main"}, rules.LockContention, 0},        // a leaf rule at the leaf counts
		{[]string{"hop", "sync", "main"}, rules.LockContention, 1}, // below it only skip frames
		{[]string{"f", "sync", "main"}, rules.CPU, 0},              // running the block below it
		{[]string{"park", "sync", "main"}, rules.Wait, 0},          // a weak callee decides then
	} {
		b, at := ClassifyStack(rs, c.stack, profile.KindCPU)
		if b != c.want || at != c.at {
			t.Errorf("%v: %s at %d, want %s at %d", c.stack, b, at, c.want, c.at)
		}
	}
}

// parseRuleLines parses rule file lines (rules.Parse's columns).
func parseRuleLines(t *testing.T, lines ...string) []*rules.Rule {
	t.Helper()
	rs, err := rules.Parse("test.rules", strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
