package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

// wideProfiles writes a base and a new profile with n methods each, more
// than a table shows by default.
func wideProfiles(t *testing.T, n int) (base, nw string) {
	dir := t.TempDir()
	base, nw = filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "new.pb.gz")
	b, w := map[string]int64{}, map[string]int64{}
	for i := range n {
		b[fmt.Sprintf("main.f%02d;main.main", i)] = int64(10 + i)
		w[fmt.Sprintf("main.f%02d;main.main", i)] = int64(40 - i)
	}
	writeTinyProfile(t, base, "cpu", "nanoseconds", b)
	writeTinyProfile(t, nw, "cpu", "nanoseconds", w)
	return base, nw
}

// CSV and JSON hold every method row unless --top is given; tables keep
// diff.DefaultTop.
func TestDataFormatsHoldEveryRow(t *testing.T) {
	const n = 30
	base, nw := wideProfiles(t, n)
	jsonRows := func(args ...string) int {
		out, stderr, code := profdiff(t, "", args...)
		var v struct{ Methods []json.RawMessage }
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		return len(v.Methods)
	}
	csvRows := func(args ...string) int {
		out, stderr, code := profdiff(t, "", args...)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if code != 0 || err != nil {
			t.Fatalf("%q: exit %d: %s %v", args, code, stderr, err)
		}
		k := 0
		for _, r := range recs {
			if r[0] == "method" {
				k++
			}
		}
		return k
	}
	for _, c := range []struct {
		got, want int
		what      string
	}{
		{jsonRows("diff", "--format", "json", base, nw), n, "diff json"},
		{jsonRows("diff", "--format", "json", "--top", "7", base, nw), 7, "diff json --top 7"},
		{jsonRows("diff", "--format", "json", "--top", "20", base, nw), 20, "diff json --top 20"},
		{jsonRows("top", "--format", "JSON", base), n, "top json"},
		{jsonRows("top", "--format", "json", "--top", "3", base), 3, "top json --top 3"},
		{csvRows("diff", "--format", "csv", base, nw), n, "diff csv"},
		{csvRows("diff", "--format", "csv", "--top", "4", base, nw), 4, "diff csv --top 4"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d method rows, want %d", c.what, c.got, c.want)
		}
	}
	out, _, _ := profdiff(t, "", "diff", "--format", "markdown", base, nw)
	if k := strings.Count(out, "| `main.f"); k != diff.DefaultTop {
		t.Errorf("markdown: %d method rows, want %d:\n%s", k, diff.DefaultTop, out)
	}
}

// --by, --normalize, --peek and --allow-remote reach the analysis and the
// resolver; "" is the kind's default attribution and the automatic
// measure.
func TestViewFlags(t *testing.T) {
	parse := func(cmd string, args ...string) (common, diff.Options, error) {
		var c common
		fs, _ := (&command{name: cmd, flags: func(fs2 *flag.FlagSet) runFunc {
			c.register(fs2, render.Formats...)
			c.registerView(fs2, cmd == "diff")
			return nil
		}}).flagSet(nil)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		o, err := c.analysis()
		return c, o, err
	}
	c, o, err := parse("diff")
	if err != nil || o.By != "" || o.Normalize != result.NormalizeAuto || o.Peek != nil || c.sources(profile.Options{}).AllowRemote {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	c, o, err = parse("diff", "--by", "caller", "--normalize", "value", "--peek", `sync\.\(\*Mutex\)`, "--allow-remote")
	if err != nil || o.By != result.ByCaller || o.Normalize != result.NormalizeValue || o.Peek == nil || !o.Peek.MatchString("sync.(*Mutex).Lock") ||
		!c.sources(profile.Options{}).AllowRemote {
		t.Errorf("set: %+v, %v", o, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--normalize", "percent", net10, net11}, `--normalize: unknown measure "percent" (want share, rate or value)`},
		{[]string{"top", "--peek", "(", net10}, "--peek: invalid regexp"},
		{[]string{"top", "--normalize", "share", net10}, "unknown flag: --normalize"},
		{[]string{"gate", "--peek", "x", net10, net11}, "unknown flag: --peek"},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
