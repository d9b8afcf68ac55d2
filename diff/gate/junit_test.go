package gate

import (
	"bytes"
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"

	"github.com/profdiff/profdiff/diff/render"
)

// The JUnit report of the golden scenario (5 checks, 2 failed) is read
// back by an independent JUnit parser with every check a test case in
// order, the failed ones failed with their verdict sentence as the
// message and their figures and frames as the text, the passing ones
// passed with their figures, and the suite's counts and time.
func TestJUnitReadBack(t *testing.T) {
	r := scenario(t, 5)
	var buf bytes.Buffer
	if err := r.JUnit(&buf, 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	golden(t, "gate.synth-lock+3pp.5v5.junit.golden", buf.Bytes())

	suites, err := junit.Ingest(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != 1 {
		t.Fatalf("%d suites, want 1", len(suites))
	}
	s := suites[0]
	if s.Name != JUnitSuite || s.Totals.Tests != 5 || s.Totals.Failed != 2 || s.Totals.Passed != 3 {
		t.Errorf("suite %q, totals %+v; want %q, 5 tests, 2 failed, 3 passed", s.Name, s.Totals, JUnitSuite)
	}
	// The parser sums its cases' times (each 0: the checks are decided
	// together); the suite's own time is the run's.
	if !bytes.Contains(buf.Bytes(), []byte(`<testsuite name="profdiff gate" tests="5" failures="2" errors="0" skipped="0" time="1.500">`)) {
		t.Errorf("no suite element with the counts and time 1.500:\n%s", buf.Bytes())
	}
	if s.Properties["mode"] != string(ModeUTest) || s.Properties["base_profiles"] != "5" || s.Properties["kind"] != string(r.Kind) {
		t.Errorf("properties %v", s.Properties)
	}
	if len(s.Tests) != len(r.Checks) {
		t.Fatalf("%d test cases, want %d", len(s.Tests), len(r.Checks))
	}
	for i, c := range r.Checks {
		tc := s.Tests[i]
		if tc.Name != c.Check || tc.Classname != JUnitSuite {
			t.Errorf("test case %d: %q (class %q), want %q", i, tc.Name, tc.Classname, c.Check)
		}
		figures := render.String(c.value(c.Base)) + ", new " + render.String(c.value(c.New))
		if c.Verdict != Fail {
			if tc.Status != junit.StatusPassed || !strings.Contains(tc.SystemOut, figures) {
				t.Errorf("%s: status %s, stdout %q; want passed with %q", c.Check, tc.Status, tc.SystemOut, figures)
			}
			continue
		}
		var e junit.Error
		if tc.Error != nil {
			e, _ = tc.Error.(junit.Error)
		}
		if tc.Status != junit.StatusFailed || e.Message != render.Plain(failedLine(c)) {
			t.Errorf("%s: status %s, message %q; want failed with %q", c.Check, tc.Status, e.Message, render.Plain(failedLine(c)))
		}
		if !strings.Contains(e.Body, figures) || !strings.Contains(e.Body, "threshold "+c.Threshold.String()) ||
			!strings.Contains(e.Body, c.Behind.Callers[0].Name) {
			t.Errorf("%s: failure text lacks its figures (%q) or its first caller:\n%s", c.Check, figures, e.Body)
		}
	}
}

// The github format of the gate: the golden scenario's report, fitted.
func TestGitHubGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, scenario(t, 5), render.GitHub); err != nil {
		t.Fatal(err)
	}
	golden(t, "gate.synth-lock+3pp.5v5.github.golden", buf.Bytes())
}

// Frame names come from profiles: control characters, markup and a CDATA
// end in one still give XML that the parser reads, the name's text back
// with its escapes as the terminal shows them (render's sink) and no
// control character.
func TestJUnitHostileNames(t *testing.T) {
	r := scenario(t, 5)
	r.Checks[0].Behind.Callers[0].Name = "main.evil\x1b[2J<img src=x>]]>&\x00\u202e"
	var buf bytes.Buffer
	if err := r.JUnit(&buf, time.Second); err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Ingest(buf.Bytes())
	if err != nil || len(suites) != 1 || len(suites[0].Tests) != 5 {
		t.Fatalf("read back: %v, %d suites", err, len(suites))
	}
	e, _ := suites[0].Tests[0].Error.(junit.Error)
	if !strings.Contains(e.Body, `main.evil\x1b[2J<img src=x>]]>&\x00\u202e`) {
		t.Errorf("the hostile caller is not in the failure text, escaped as the terminal shows it:\n%s", e.Body)
	}
	for _, r := range e.Message + e.Body {
		if r < 0x20 && r != '\n' || r == 0x7f || r == '\u202e' {
			t.Errorf("a control character %U in the failure", r)
		}
	}
}
