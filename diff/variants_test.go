package diff

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/producertest"
)

// recordClones builds testdata/variants/clones.c with gcc -O2 (whose
// clones work.part.0, check.cold and sum.constprop.0.isra.0 are build
// variants of work, check and sum), records it with perf record -g for
// 0.3 s and loads perf script's output; the recording is made once per
// test binary (clones) and parsed anew for each caller. It skips when gcc
// or perf is missing, perf cannot record here, or gcc made no work.part.0.
func recordClones(t *testing.T) *profile.Loaded {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: records with perf")
	}
	script := clones.get(t, func(t *testing.T) [][]byte {
		for _, tool := range []string{"gcc", "perf"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s is not installed: no build variants recorded", tool)
			}
		}
		dir := t.TempDir()
		bin := filepath.Join(dir, "clones")
		if out, err := exec.Command("gcc", "-O2", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", "-o", bin,
			filepath.Join("testdata", "variants", "clones.c")).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		data := filepath.Join(dir, "perf.data")
		if out, err := exec.Command("perf", producertest.PerfRecord("perf", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, bin, "0.3")...).CombinedOutput(); err != nil {
			t.Skipf("perf cannot record here: %v: %.200s", err, out)
		}
		script, err := exec.Command("perf", "script", "-i", data).Output()
		if err != nil {
			t.Fatalf("perf script: %v", err)
		}
		if !strings.Contains(string(script), "work.part.0+") {
			t.Skip("gcc made no work.part.0 here, or perf sampled none")
		}
		return [][]byte{script}
	})[0]
	l, err := profile.Parse("clones.txt", script, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var clones recording

// A tree of frames (Options.TreeFrames) names every node by the name its
// profile gave the frame, a method tree by the method's label: work and
// work.part.0 are two nodes in the first, one node `work (2 variants)`
// in the second, and the method row is work with 2 variants.
func TestTreeFramesKeepVariants(t *testing.T) {
	l := recordClones(t)
	names := func(frames bool) map[string]bool {
		a := NewAnalyzer(Options{CallTree: true, TreeFrames: frames, Top: -1})
		if err := a.Add(result.Base, l); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		var walk func(n *result.CallNode)
		walk = func(n *result.CallNode) {
			out[n.Name] = true
			for _, c := range n.Children {
				walk(c)
			}
		}
		top := a.Top()
		walk(top.Tree)
		if !frames {
			for _, m := range top.Methods {
				if strings.HasPrefix(m.Name, "work") && (m.Name != "work" || m.Variants != 2) {
					t.Errorf("method row %q with %d variants, want work with 2", m.Name, m.Variants)
				}
			}
		}
		return out
	}
	byFrame, byMethod := names(true), names(false)
	if !byFrame["work.part.0"] || !byFrame["work"] {
		t.Skip("the recording has no sample through both work and work.part.0")
	}
	if byFrame["work (2 variants)"] || byMethod["work.part.0"] || byMethod["work"] || !byMethod["work (2 variants)"] {
		t.Errorf("tree of frames %v, tree of methods %v: want work and work.part.0 in the first, work (2 variants) alone in the second", byFrame, byMethod)
	}
}
