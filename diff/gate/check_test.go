package gate

import (
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/rules"
)

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]Limit{
		"+2pp": {Amount: 2}, "2pp": {Amount: 2}, "+0.5pp": {Amount: 0.5}, "+0pp": {},
		"+25%": {Amount: 25, Relative: true}, "25%": {Amount: 25, Relative: true}, " +1pp ": {Amount: 1},
		"+200%": {Amount: 200, Relative: true}, "2x": {Amount: 2, Factor: true}, "1.5x": {Amount: 1.5, Factor: true},
		"1x": {Amount: 1, Factor: true}, "+3x": {Amount: 3, Factor: true}, "200x": {Amount: 200, Factor: true},
	} {
		got, err := ParseLimit(in)
		if err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"2":      "has no unit",
		"+2":     "has no unit",
		"abcpp":  "not a number",
		"-1pp":   "is negative",
		"++1pp":  "not a number",
		"+101pp": "more than 100 percentage points",
		"NaN%":   "not a number",
		"":       "has no unit",
		"0.5x":   "factor below 1",
		"-2x":    "factor below 1",
		"x":      "not a number",
	} {
		if _, err := ParseLimit(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseLimit(%q) = %v, want an error with %q", in, err, msg)
		}
	}
	for _, s := range []string{"+2pp", "+0.5pp", "+25%", "2x", "1.5x"} {
		l, _ := ParseLimit(s)
		if l.String() != s {
			t.Errorf("%q prints as %q", s, l)
		}
	}
}

func TestLimitExceeded(t *testing.T) {
	pp, _ := ParseLimit("+2pp")
	rel, _ := ParseLimit("+25%")
	x2, _ := ParseLimit("2x")
	for _, c := range []struct {
		l         Limit
		base, new float64
		want      bool
	}{
		{pp, 0.10, 0.12, false}, // exactly the limit passes
		{pp, 0.10, 0.1201, true},
		{pp, 0.10, 0.05, false},
		{rel, 0.04, 0.05, false}, // +25% exactly
		{rel, 0.04, 0.0501, true},
		{rel, 0, 0.001, true}, // growth from nothing
		{rel, 0, 0, false},
		// Factors compare values of any size: 1.42 s of delay to 2.84 s
		// is exactly 2x, to 18.8 s 13x.
		{x2, 1.42e9, 2.84e9, false},
		{x2, 1.42e9, 2.85e9, true},
		{x2, 1.42e9, 18.8e9, true},
		{x2, 1.42e9, 0.5e9, false},
		{x2, 0, 1, true},
		{x2, 0, 0, false},
	} {
		if got := c.l.Exceeded(c.base, c.new); got != c.want {
			t.Errorf("%s: %v → %v exceeded = %v, want %v", c.l, c.base, c.new, got, c.want)
		}
	}
}

func TestParseChecks(t *testing.T) {
	c, err := ParseMax("lock-contention=+2pp")
	if err != nil || c.Target != TargetBucket || c.Bucket != rules.LockContention || c.String() != "lock-contention=+2pp" {
		t.Errorf("ParseMax = %+v, %v", c, err)
	}
	c, err = ParseMax("sync=+5pp")
	if err != nil || c.Target != TargetSync || c.Label() != "sync" {
		t.Errorf("sync = %+v, %v", c, err)
	}
	c, err = ParseMaxMethod(`sync\.\(\*Mutex\)\.Lock=+1pp`)
	if err != nil || c.Target != TargetMethod || !c.Method.MatchString("sync.(*Mutex).Lock") || c.Label() != `method ~ sync\.\(\*Mutex\)\.Lock` {
		t.Errorf("ParseMaxMethod = %+v, %v", c, err)
	}
	// The value is split at the last '=', so a regexp may hold one.
	if c, err := ParseMaxMethod(`a=b=+1pp`); err != nil || c.Pattern != "a=b" {
		t.Errorf("a=b: %+v, %v", c, err)
	}
	for in, msg := range map[string]string{
		"locks=+2pp":        `unknown bucket "locks"`,
		"lock-contention":   "want BUCKET=THRESHOLD",
		"lock-contention=2": "has no unit",
		"gc=+x%":            "not a number",
	} {
		if _, err := ParseMax(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseMax(%q) = %v, want %q", in, err, msg)
		}
	}
	for in, msg := range map[string]string{
		"(=+1pp":          "escape ( ) * . with a backslash",
		"=+1pp":           "regexp before '=' is empty",
		"Lock":            "want REGEXP=THRESHOLD",
		"Lock=+1":         "has no unit",
		`a\.b=+1 pp`:      "not a number",
		`sync.Mutex=-1pp`: "is negative",
	} {
		if _, err := ParseMaxMethod(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseMaxMethod(%q) = %v, want %q", in, err, msg)
		}
	}
}

func TestMergeAndDuplicates(t *testing.T) {
	cfg := mustChecks("gc=+25%", "lock-contention=+2pp", `Lock=+1pp`)
	flags := mustChecks("lock-contention=+1pp", "wait=+5pp")
	got := Merge(cfg, flags)
	var s []string
	for _, c := range got {
		s = append(s, c.String())
	}
	if strings.Join(s, " ") != "wait=+5pp lock-contention=+1pp gc=+25% Lock=+1pp" {
		t.Errorf("Merge = %v", s)
	}
	if err := Duplicates(mustCheckList("gc=+1pp", "gc=+2pp"), "flags"); err == nil || !strings.Contains(err.Error(), "threshold for gc given twice") {
		t.Errorf("Duplicates = %v", err)
	}
	if err := Duplicates(flags, "flags"); err != nil {
		t.Error(err)
	}
	if d := DefaultChecks(); len(d) != 2 || d[0].String() != "lock-contention=+1pp" || d[1].String() != "sync=+5pp" {
		t.Errorf("DefaultChecks = %v", d)
	}
}

// mustCheckList parses checks without merging duplicates.
func mustCheckList(specs ...string) []Check {
	var cs []Check
	for _, s := range specs {
		c, err := ParseMax(s)
		if err != nil {
			panic(err)
		}
		cs = append(cs, c)
	}
	return cs
}
