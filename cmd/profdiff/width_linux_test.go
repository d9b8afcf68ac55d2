package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
)

// method is the part of a name that every width must show: its last
// segment without parameters or type arguments (WaitAndAcquire, serve,
// g__PollGCWorker|74_0).
func method(name string) string {
	if strings.HasSuffix(name, ")") {
		depth := 0
		for i := len(name) - 1; i >= 0; i-- {
			switch name[i] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				if i > 0 {
					name = name[:i]
				}
				break
			}
		}
	}
	if i := strings.LastIndexAny(name, ".:>/"); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	return name
}

// checkFits fails for each line of out wider than w, and for each method
// of the JSON report js that no single line of out shows.
func checkFits(t *testing.T, what string, out string, w int, js string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		if n := displayWidth(l); n > w {
			t.Errorf("%s: line %d is %d wide (> %d): %q", what, i+1, n, w, l)
		}
	}
	var doc struct {
		Methods []struct{ Name string } `json:"methods"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(doc.Methods) == 0 {
		t.Fatalf("%s: no methods", what)
	}
	for _, m := range doc.Methods {
		if !strings.Contains(out, method(m.Name)) {
			t.Errorf("%s: method %q (%s) shown on no line:\n%s", what, method(m.Name), m.Name, out)
		}
	}
}

// ptyRun runs profdiff with a pseudo-terminal of cols columns as its
// standard output and returns what the terminal received.
func ptyRun(t *testing.T, cols uint16, args ...string) string {
	t.Helper()
	ptmx, pts := openPtyPair(t, cols)
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&got, ptmx) // ends with EIO once the terminal side closes
	}()
	var errb bytes.Buffer
	t.Setenv("NO_COLOR", "1")
	err := run(context.Background(), args, strings.NewReader(""), pts, &errb)
	if code := exitCode(err, &errb); code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, errb.String())
	}
	pts.Close()
	<-done
	return strings.ReplaceAll(got.String(), "\r\n", "\n")
}

// At 80 columns, whether a terminal's or --width's, no line of diff or
// top is wider, and every method row shows its method's name, for .NET
// names and for Go names recorded here; at 40 the tables become lists
// with a note saying so, under the same two rules.
func TestOutputFitsWidth(t *testing.T) {
	goBase, goNew := goroutineProfiles(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"dotnet diff", []string{"diff", net10, net11}},
		{"dotnet top", []string{"top", net11}},
		{"go diff", []string{"diff", goBase, goNew}},
		{"go top", []string{"top", goNew}},
	} {
		// The rows the table shows: its default --top.
		js, stderr, code := profdiff(t, "", append([]string{c.args[0], "--format", "json", "--top", "20"}, c.args[1:]...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
		}
		for _, w := range []int{80, 40} {
			args := append([]string{c.args[0], "--width", strconv.Itoa(w)}, c.args[1:]...)
			out, stderr, code := profdiff(t, "", args...)
			if code != 0 {
				t.Fatalf("%q: exit %d: %s", args, code, stderr)
			}
			checkFits(t, c.name+" --width "+args[2], out, w, js)
			// The Go profiles are of this test process, so they may hold
			// a goroutine of a test running beside this one whose method
			// alone is long (net/http's startDialConnForLocked.func1): then
			// a list at 80 is right too. The .NET fixtures are fixed.
			list := strings.Contains(out, "so each row is listed)")
			if mayList := w == 80 && strings.HasPrefix(c.name, "go "); list != (w == 40) && !(list && mayList) {
				t.Errorf("%s at %d: a list note %v:\n%s", c.name, w, list, out)
			}
		}
		checkFits(t, c.name+" on an 80-column terminal", ptyRun(t, 80, c.args...), 80, js)
	}
}

// With --wide the names are whole, wrapped at their separators, and the
// lines still fit.
func TestWideKeepsNamesWhole(t *testing.T) {
	out, stderr, code := profdiff(t, "", "diff", "--width", "80", "--wide", net10, net11)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"│ System.Threading.LowLevelLock.", "│ WaitAndAcquire "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("%d wide: %q", len([]rune(l)), l)
		}
	}
	if strings.Contains(out, "…") {
		t.Errorf("--wide elided a name:\n%s", out)
	}
}

// On a terminal, help wraps to its width.
func TestHelpWrapsToTerminal(t *testing.T) {
	out := ptyRun(t, 60, "gate", "--help")
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > 60 {
			t.Errorf("a line of %d columns on a 60-column terminal: %q", n, l)
		}
	}
	if !strings.Contains(out, "Output flags:") {
		t.Errorf("no help:\n%s", out)
	}
}
