package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// statedTime finds a time the manual states for running something: "takes
// 11 s", "took 33 s", "start in 0.2 s", "~8 s", "62 s of CPU"; group 1 is
// what follows the figure's "s".
var statedTime = regexp.MustCompile(`(?:(?:takes|took|start in)\s+|~\s*)[0-9][0-9.]* s\b|[0-9][0-9.]* s\b(?:\s+of (?:wall time|CPU))`)

// docTimeMarker is the marker .ci/doctimes rewrites the figure before.
var docTimeMarker = regexp.MustCompile(`([0-9][0-9.]* s)?<!-- doctime:([a-z-]+) -->`)

// checkDocTimes lists what is wrong in text (name names it): a stated time
// without a marker right after its figure, a marker not right after a
// figure, or a marker naming no measurement of known.
func checkDocTimes(name, text string, known map[string]bool) []string {
	var bad []string
	line := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
	for _, m := range statedTime.FindAllStringIndex(text, -1) {
		figEnd := strings.Index(text[m[0]:], " s") + m[0] + 2
		if !strings.HasPrefix(text[figEnd:], "<!-- doctime:") {
			bad = append(bad, name+":"+strconv.Itoa(line(m[0]))+": "+strings.Join(strings.Fields(text[m[0]:m[1]]), " ")+" is not marked as measured by .ci/doctimes")
		}
	}
	for _, m := range docTimeMarker.FindAllStringSubmatchIndex(text, -1) {
		if m[2] < 0 {
			bad = append(bad, name+":"+strconv.Itoa(line(m[0]))+": a doctime marker that follows no figure")
		}
		if n := text[m[4]:m[5]]; !known[n] {
			bad = append(bad, name+":"+strconv.Itoa(line(m[0]))+": doctime:"+n+" is no measurement of .ci/doctimes")
		}
	}
	return bad
}

// Every time the manual states for running profdiff (the demo, the wasm
// sweep, the build, the start) was written by .ci/doctimes, which
// measures it: it carries that script's marker, and every marker names a
// measurement the script makes. No time is measured here. README.md's
// Tests section is left out: its figures are the suite's own, from .ci/run
// and go test -json, as it says.
func TestDocTimes(t *testing.T) {
	script, err := os.ReadFile("../../.ci/doctimes")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^all=\(([^)]*)\)`).FindSubmatch(script)
	if m == nil {
		t.Fatal(".ci/doctimes has no all=(...) list of measurements")
	}
	known := map[string]bool{}
	for _, n := range strings.Fields(string(m[1])) {
		known[n] = true
	}
	for _, f := range []string{"README.md", "workloads/README.md"} {
		b, err := os.ReadFile("../../" + f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if f == "README.md" {
			text, _, _ = strings.Cut(text, "\n## Tests")
		}
		for _, msg := range checkDocTimes(f, text, known) {
			t.Error(msg)
		}
	}
}

// The checker finds an unmarked time, a marker without a figure and an
// unknown measurement.
func TestCheckDocTimes(t *testing.T) {
	known := map[string]bool{"demo": true}
	text := "The demo takes 11 s<!-- doctime:demo -->.\nIt took\n33 s of wall time.\n# ~8 s: a demo\nsee <!-- doctime:demo --> and 2 s<!-- doctime:wasm -->\n"
	got := strings.Join(checkDocTimes("x.md", text, known), "\n")
	for _, want := range []string{"x.md:2: took 33 s is not marked", "x.md:4: ~8 s is not marked", "x.md:5: a doctime marker that follows no figure", "x.md:5: doctime:wasm is no measurement"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "x.md:1:") {
		t.Errorf("the marked time is reported:\n%s", got)
	}
}
