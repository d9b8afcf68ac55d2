package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSampleTypeNoInputHas: a --sample-index, or a --kind, that no input
// has exits 2 listing each input's sample types, with the flag that picks
// one; never a warning with an empty type name and an empty table.
func TestSampleTypeNoInputHas(t *testing.T) {
	jfr := corpusFile(t, "speedscope/sample__profiles__java-flight-recorder__heavy.jfr")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.folded"), filepath.Join(dir, "b.folded")
	os.WriteFile(a, []byte("main;f 30\nmain;g 10\n"), 0o644)
	os.WriteFile(b, []byte("main;f 10\nmain;g 30\n"), 0o644)
	jfrTypes := "thread-time/nanoseconds, execution-samples/count"
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		// JFR's types are events, of which a recording may have none; a
		// type that no input has is an error all the same.
		{[]string{"top", "--sample-index", "cpu", jfr}, 2, []string{`no input has sample type "cpu": ` + jfr + " has " + jfrTypes, "--sample-index takes"}},
		{[]string{"diff", "--sample-index", "nosuch", jfr, a}, 2, []string{`no input has sample type "nosuch"`, jfr + " has " + jfrTypes, a + " has samples/count"}},
		{[]string{"diff", "--sample-index", "cpu", a, b}, 2, []string{`no input has sample type "cpu": ` + a + ", " + b + " have samples/count"}},
		{[]string{"gate", "--sample-index", "cpu", "--base", a, "--new", b}, 2, []string{`no input has sample type "cpu"`}},
		// One input has it: the other's own error, as before.
		{[]string{"diff", "--sample-index", "execution-samples", jfr, a}, 2, []string{a + `: no sample type "execution-samples" (it has samples/count)`}},
		{[]string{"top", "--kind", "heap", jfr}, 2, []string{"no input's selected sample type can be read as kind heap: " + jfr + " has " + jfrTypes, "alloc-sample/bytes"}},
		{[]string{"diff", "--kind", "goroutine", jfr, a}, 2, []string{"sample type thread-time/nanoseconds cannot be read as kind goroutine"}},
		{[]string{"top", "--kind", "heap", "--sample-index", "alloc-sample", jfr}, 0, nil},
		{[]string{"top", "--kind", "goroutine", a}, 0, nil}, // folded stacks' counts fit any kind
	} {
		out, stderr, code := profdiff(t, "", c.args...)
		name := strings.Join(c.args, " ")
		if code != c.code {
			t.Errorf("profdiff %s: exit %d, want %d\n%s", name, code, c.code, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("profdiff %s: stderr lacks %q:\n%s", name, w, stderr)
			}
		}
		if strings.Contains(stderr, "non-zero )") || c.code == 2 && out != "" {
			t.Errorf("profdiff %s: an empty report or type name:\n%s\n%s", name, out, stderr)
		}
	}
}
