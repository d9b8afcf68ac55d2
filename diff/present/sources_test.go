package present

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
)

// Sources are shown without the directories all of them share, each with
// at least its file name; URLs and standard input stay whole.
func TestShortSources(t *testing.T) {
	for _, c := range []struct {
		in, want [][]string
	}{
		{[][]string{{"/home/runner/work/_temp/prof/block/base/run-1.pb.gz", "/home/runner/work/_temp/prof/block/base/run-2.pb.gz"},
			{"/home/runner/work/_temp/prof/block/new/run-1.pb.gz"}},
			[][]string{{"base/run-1.pb.gz", "base/run-2.pb.gz"}, {"new/run-1.pb.gz"}}},
		{[][]string{{"profdiff-out/20261206-012523-demo/baseline/wall.pb.gz"}, {"profdiff-out/20261206-012523-demo/global-lock/wall.pb.gz"}},
			[][]string{{"baseline/wall.pb.gz"}, {"global-lock/wall.pb.gz"}}},
		{[][]string{{"/tmp/x/cpu.pb.gz"}}, [][]string{{"cpu.pb.gz"}}},
		{[][]string{{"a.pb.gz"}, {"a.pb.gz"}}, [][]string{{"a.pb.gz"}, {"a.pb.gz"}}},
		{[][]string{{"/srv/p/a.pb.gz"}, {"/srv/q/a.pb.gz", "-", "http://h:6060/debug/pprof/profile"}},
			[][]string{{"p/a.pb.gz"}, {"q/a.pb.gz", "-", "http://h:6060/debug/pprof/profile"}}},
	} {
		if got := ShortSources(c.in...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ShortSources(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The terminal names each side by its short name at the start of a line at
// 80 and 40 columns, no line wider or ending in a space; with --wide
// (Options.Wide) it names the paths as given, wrapped; JSON keeps them.
func TestTerminalShortSources(t *testing.T) {
	const dir = "/tmp/very/long/directory/name/for/profiles/of/the/service/under/test/2026-12-06/"
	r := dotnetResult(t, diff.Options{})
	r.Base.Sources, r.New.Sources = []string{dir + "net10.folded"}, []string{dir + "net11.folded"}
	top := dotnetTop(t)
	top.Sources = []string{dir + "net11.folded"}
	for _, c := range []struct {
		name  string
		rep   *report.Report
		lines []string
	}{
		{"diff", Diff(r), []string{"base: net10.folded (10000 samples)", "new:  net11.folded (10000 samples)"}},
		{"top", Top(top), []string{"profile: net11.folded (10000 samples"}},
	} {
		for _, w := range []int{80, 40} {
			out := write(t, c.rep, render.Table, render.Options{Width: w})
			lines := strings.Split(out, "\n")
			for _, want := range c.lines {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
					t.Errorf("%s at %d: no line starting %q in:\n%s", c.name, w, want, out)
				}
			}
			for _, l := range lines {
				if n := utf8.RuneCountInString(l); n > w || strings.HasSuffix(l, " ") {
					t.Errorf("%s at %d: a line of %d columns or ending in a space: %q", c.name, w, n, l)
				}
			}
			if strings.Contains(out, "/tmp/") {
				t.Errorf("%s at %d: the common folder shown:\n%s", c.name, w, out)
			}
		}
		wide := write(t, c.rep, render.Table, render.Options{Width: 80, Wide: true})
		if !strings.Contains(strings.ReplaceAll(wide, "/\n", "/"), dir+"net1") {
			t.Errorf("%s --wide: no whole path in:\n%s", c.name, wide)
		}
	}
	if js := write(t, Diff(r), render.JSON, render.Options{Width: 40}); !strings.Contains(js, `"`+dir+`net10.folded"`) {
		t.Errorf("JSON without the path as given:\n%s", js)
	}
}
