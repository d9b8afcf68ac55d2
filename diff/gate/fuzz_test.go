package gate

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzConfig: ParseConfig on any gate configuration fails with one line
// naming the file, or returns checks that print as flags (Check.String)
// which parse back to the same checks, and a config that, written out as
// JSON again, gives the same checks. Seeds: the manual's gate.json and the
// error cases' shapes.
func FuzzConfig(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "docs", "gate.json")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"alpha": 0.01, "max": {"sync": "+5pp", "io": "0.5pp"}, "max_method": {"a=b": "+10%"}}`))
	f.Add([]byte(`{"max": {"lock-contention": "2"}}`))
	f.Add([]byte(`{"max_method": {"sync\.Mutex": "+1pp"}}`))
	f.Add([]byte(`{"maxx": {}} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, checks, err := ParseConfig("fuzz.json", data)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "fuzz.json: ") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error %q is not one line naming the file", msg)
			}
			return
		}
		if c.Alpha != nil && !(*c.Alpha > 0 && *c.Alpha < 1) {
			t.Errorf("alpha %v accepted", *c.Alpha)
		}
		for _, ch := range checks {
			checkLimit(t, ch.Max)
			parse := ParseMax
			if ch.Target == TargetMethod {
				parse = ParseMaxMethod
			}
			back, err := parse(ch.String())
			if err != nil {
				t.Fatalf("check %q does not parse back: %v", ch.String(), err)
			}
			if back.key() != ch.key() || back.Max != ch.Max {
				t.Errorf("check %q parses back as %q", ch.String(), back.String())
			}
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("config does not marshal: %v", err)
		}
		_, again, err := ParseConfig("again.json", out)
		if err != nil {
			t.Fatalf("config written out does not parse: %v\n%s", err, out)
		}
		if a, b := flags(checks), flags(again); a != b {
			t.Errorf("checks %s read back as %s", a, b)
		}
	})
}

// checkLimit: a limit is a finite growth that prints as "+N" (pp or %)
// and parses back to itself.
func checkLimit(t *testing.T, l Limit) {
	t.Helper()
	s := l.String()
	if math.IsNaN(l.Amount) || math.IsInf(l.Amount, 0) || l.Amount < 0 || strings.HasPrefix(s, "+-") {
		t.Errorf("limit %s (amount %v) accepted", s, l.Amount)
	}
	back, err := ParseLimit(s)
	if err != nil || back != l {
		t.Errorf("limit %s parses back as %v, %v", s, back, err)
	}
}

func flags(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.String() + " ")
	}
	return b.String()
}
