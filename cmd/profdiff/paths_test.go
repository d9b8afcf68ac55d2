package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// With inputs deep in a folder, diff, top, gate and series name each
// side by its short name (the folder every input shares left out) at
// --width 80 and 40; every line of stdout and stderr fits, in display
// columns, and none ends in a space; a warning names its file as the
// report does (TestWideNamesFitWidth: names and files of wide characters).
// --wide names the paths as given; an error (exit 2) names the path as
// typed, on one line.
func TestLongPathsFitWidth(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "very", "long", "directory", "name", "for", "profiles", "of", "the", "service", "under", "test", "2026-12-06")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(net10)
	if err != nil {
		t.Fatal(err)
	}
	// A line no reader takes: one warning that names the file.
	odd := filepath.Join(dir, "odd.folded")
	if err := os.WriteFile(odd, append(data, "a;b not-a-count\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(net11); err != nil {
		t.Fatal(err)
	}
	nw := filepath.Join(dir, "net11.folded")
	if err := os.WriteFile(nw, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string // line starts on stdout
	}{
		{[]string{"diff", odd, nw}, []string{"base: odd.folded (", "new:  net11.folded ("}},
		{[]string{"top", odd}, []string{"profile: odd.folded ("}},
		{[]string{"gate", odd, nw}, []string{"base: 1 profile (odd.folded), ", "new:  1 profile (net11.folded), "}},
		{[]string{"series", "a=" + odd, "b=" + nw}, []string{"a: 1 profile (odd.folded), ", "b: 1 profile (net11.folded), "}},
	} {
		for _, w := range []int{80, 40} {
			args := append([]string{c.args[0], "--width", strconv.Itoa(w)}, c.args[1:]...)
			out, stderr, code := profdiff(t, "", args...)
			if code != 0 && !(c.args[0] == "gate" && code == exitGateFail) {
				t.Fatalf("%q: exit %d: %s", args, code, stderr)
			}
			for _, s := range []string{out, stderr} {
				for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
					if n := displayWidth(l); n > w || strings.HasSuffix(l, " ") {
						t.Errorf("%s at %d: a line of %d columns or ending in a space: %q", c.args[0], w, n, l)
					}
				}
			}
			lines := strings.Split(out, "\n")
			for _, want := range c.want {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, want)
				}
				if !found {
					t.Errorf("%s at %d: no line starting %q:\n%s", c.args[0], w, want, out)
				}
			}
			if strings.Contains(out+stderr, "2026-12-06") {
				t.Errorf("%s at %d: the common folder is shown:\n%s\n%s", c.args[0], w, out, stderr)
			}
			if !strings.Contains(unwrapped(stderr), "warning: odd.folded: line ") {
				t.Errorf("%s at %d: no warning naming odd.folded:\n%s", c.args[0], w, stderr)
			}
		}
	}
	out, stderr, code := profdiff(t, "", "diff", "--width", "80", "--wide", odd, nw)
	if code != 0 || !strings.Contains(strings.ReplaceAll(out, "/\n", "/"), "base:\n"+odd+" (") {
		t.Errorf("diff --wide (exit %d) does not name the path as given:\n%s\n%s", code, out, stderr)
	}
	missing := filepath.Join(dir, "missing.folded")
	_, stderr, code = profdiff(t, "", "diff", "--width", "40", odd, missing)
	if code != 2 || !strings.Contains(stderr, "\nprofdiff: "+missing+": ") {
		t.Errorf("a missing file (exit %d): want exit 2 and the path as typed on one line:\n%s", code, stderr)
	}
}

// A path is shortened only where it stands whole: not inside a longer
// name that starts or ends with it.
func TestReplacePath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/d/a.pb: bad", "a.pb: bad"},
		{"read /d/a.pb.", "read a.pb."},
		{"(2 profiles: /d/a.pb, /d/b.pb)", "(2 profiles: a.pb, /d/b.pb)"},
		{"/d/a.pb.gz: bad", "/d/a.pb.gz: bad"},
		{"/x/d/a.pb: bad", "/x/d/a.pb: bad"},
		{"/d/a.pb.1 and /d/a.pb", "/d/a.pb.1 and a.pb"},
	} {
		if got := replacePath(c.in, "/d/a.pb", "a.pb"); got != c.want {
			t.Errorf("replacePath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
