package present

import (
	"reflect"
	"testing"
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
