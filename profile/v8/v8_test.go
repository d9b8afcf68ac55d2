package v8

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/labels"
	"github.com/profdiff/profdiff/profile/internal/readertest"
)

// stacks sums a profile's samples (count, wall) by stack, leaf first,
// frames joined with ";".
func stacks(p *pprofile.Profile) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, s := range p.Sample {
		var names []string
		for _, l := range s.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		k := strings.Join(names, ";")
		v := out[k]
		out[k] = [2]int64{v[0] + s.Value[0], v[1] + s.Value[1]}
	}
	return out
}

func parseFile(t *testing.T, path string) *pprofile.Profile {
	t.Helper()
	_, p, _ := readertest.ParseFile(t, path, Looks, Parse)
	return p
}

// TestCorpusShapesAgree reads the corpus's .cpuprofile files. Node 10's
// example.cpuprofile (the older nested shape) and Chrome 65's
// simple.cpuprofile (the flat shape) hold the same recording, so they
// must give the same stacks with the same sample counts, and the same
// time on every stack but the one of the last sample, whose weight each
// shape knows differently (the flat one to its endTime, the nested one
// the median interval).
func TestCorpusShapesAgree(t *testing.T) {
	dir := filepath.Join(corpus.Need(t), "speedscope")
	nested := stacks(parseFile(t, filepath.Join(dir, "sample__profiles__node__10.11.0__example.cpuprofile")))
	flat := stacks(parseFile(t, filepath.Join(dir, "sample__profiles__Chrome__65__simple.cpuprofile")))
	if len(nested) != len(flat) || len(flat) != 3 {
		t.Fatalf("nested shape %v, flat shape %v: want the same 3 stacks", nested, flat)
	}
	const last = "d;c;a;(anonymous)" // the stack of the last sample
	for k, v := range flat {
		w := nested[k]
		if w[0] != v[0] || k != last && w[1] != v[1] {
			t.Errorf("%s: nested %v, flat %v (samples, ns)", k, w, v)
		}
	}
	if flat["d;b;a;(anonymous)"][0] != 14 || flat[last][0] != 14 {
		t.Errorf("stacks %v: want 14 samples in d under b and 14 under c", flat)
	}
	sucrase := parseFile(t, filepath.Join(dir, "sample__profiles__Chrome__65__sucrase.cpuprofile"))
	var gc int64
	for _, s := range sucrase.Sample {
		if s.Location[0].Line[0].Function.Name == "(garbage collector)" {
			if got := s.Label[labels.Bucket]; len(got) != 1 || got[0] != "gc" {
				t.Errorf("(garbage collector) sample labelled %v, want bucket gc", s.Label)
			}
			gc += s.Value[1]
		}
	}
	if gc == 0 {
		t.Error("sucrase.cpuprofile: no (garbage collector) time")
	}
}

// TestNodeCPUProf records a Node program with node --cpu-prof: a busy
// loop, garbage, and a timer the event loop waits for. The busy function
// is the largest JavaScript frame (its loop runs several times as long as
// the garbage loop: at a quarter of this length a loaded machine once
// gave the garbage loop 80 ms to its 71), the wait is (idle) labelled
// wait, the collector is (garbage collector) labelled gc, and the
// samples' time covers the recording.
func TestNodeCPUProf(t *testing.T) {
	p := recordNode(t, `
function busy(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sqrt(i); return x; }
function garbage(n) { let a = []; for (let i = 0; i < n; i++) { a.push({i, s: 'x' + i}); if (a.length > 1000) a = []; } return a.length; }
busy(1.6e8); garbage(1e6);
setTimeout(() => {}, 150);
`)
	self := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		name := s.Location[0].Line[0].Function.Name
		self[name] += s.Value[1]
		total += s.Value[1]
		want := map[string]string{"(idle)": "wait", "(garbage collector)": "gc"}[name]
		if got := s.Label[labels.Bucket]; want != "" && (len(got) != 1 || got[0] != want) {
			t.Errorf("%s sample labelled %v, want bucket %s", name, s.Label, want)
		}
		if name == "(program)" && s.Label[labels.Fallback] == nil {
			t.Errorf("(program) sample labelled %v, want fallback unknown", s.Label)
		}
	}
	for name, v := range self {
		if name != "busy" && !strings.HasPrefix(name, "(") && v >= self["busy"] {
			t.Errorf("%s has %d ns, busy %d: want busy the largest JavaScript frame", name, v, self["busy"])
		}
	}
	if self["(idle)"] < 100e6 {
		t.Errorf("(idle) %d ns, want at least the 100 ms of the 150 ms timer not spent elsewhere", self["(idle)"])
	}
	if self["(garbage collector)"] == 0 {
		t.Error("no (garbage collector) time")
	}
	if total > p.DurationNanos*11/10 || total < p.DurationNanos*8/10 {
		t.Errorf("samples hold %d ns of a %d ns recording", total, p.DurationNanos)
	}
	if p.Period <= 0 {
		t.Errorf("period %d", p.Period)
	}
}

// recordNode runs script with node --cpu-prof and returns the profile read.
func recordNode(t *testing.T, script string) *pprofile.Profile {
	t.Helper()
	return parseFile(t, recordNodeFile(t, script))
}

// recordNodeFile runs script with node --cpu-prof and returns the path of
// the .cpuprofile node wrote.
func recordNodeFile(t *testing.T, script string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	js := filepath.Join(dir, "main.js")
	if err := os.WriteFile(js, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "main.cpuprofile")
	cmd := exec.Command(node, "--cpu-prof", "--cpu-prof-dir="+dir, "--cpu-prof-name=main.cpuprofile", js)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --cpu-prof: %v\n%s", err, b)
	}
	return out
}

// TestCutShort: a .cpuprofile cut short before its samples (a copy or
// download that stopped) is still sniffed as one, so that Parse says
// where it ends rather than the loader calling it a format profdiff does
// not read: node --cpu-prof's own file (the flat shape) and, where the
// corpus is, Node 10's (the nested shape). A heap profile cut short is
// still no CPU profile.
func TestCutShort(t *testing.T) {
	data, err := os.ReadFile(recordNodeFile(t, "let x = 0; for (let i = 0; i < 1e6; i++) x += i;"))
	if err != nil {
		t.Fatal(err)
	}
	checkCutShort(t, "node's .cpuprofile", data, true)
	dir := corpus.Dir()
	if dir == "" {
		return
	}
	for file, cpu := range map[string]bool{"sample__profiles__node__10.11.0__example.cpuprofile": true, "sample__profiles__node__10.11.0__Heap-20181003T105432.heapprofile": false} {
		data, err := os.ReadFile(filepath.Join(dir, "speedscope", file))
		if err != nil {
			t.Fatal(err)
		}
		checkCutShort(t, file, data, cpu)
	}
}

// checkCutShort cuts data before its "samples" (its last byte without
// them), at half that and at 200 bytes (past the first node's
// "callFrame" or "hitCount"): each cut is sniffed as V8's and refused
// saying where it ends when cpu is set, and not sniffed otherwise.
func checkCutShort(t *testing.T, name string, data []byte, cpu bool) {
	t.Helper()
	end := bytes.Index(data, []byte(`"samples"`))
	if end < 0 {
		end = len(data) - 1
	}
	for _, n := range []int{end, end / 2, 200} {
		cut := data[:n]
		if Looks(cut) != cpu {
			t.Errorf("%s cut at byte %d: Looks %v, want %v", name, n, !cpu, cpu)
			continue
		}
		want := fmt.Sprintf("invalid JSON at byte %d: unexpected end of JSON input", n)
		if _, _, err := Parse(cut); cpu && (!errors.Is(err, ErrShape) || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s cut at byte %d: error %v, want ErrShape saying %q", name, n, err, want)
		}
	}
}

// TestNames checks how frames of Node's built-in modules are named, in
// today's node: URLs and Node 10's bare paths, and that a program's
// scripts and V8's builtins keep their function names.
func TestNames(t *testing.T) {
	for _, tc := range []struct{ fn, url, want string }{
		{"listOnTimeout", "node:internal/timers", "node:internal/timers.listOnTimeout"},
		{"listOnTimeout", "internal/timers.js", "node:internal/timers.listOnTimeout"},
		{"Module._compile", "module.js", "node:module.Module._compile"},
		{"", "node:fs", "node:fs.(anonymous)"},
		{"busy", "file:///tmp/x/main.js", "busy"},
		{"busy", "/tmp/x/main.js", "busy"},
		{"busy", "https://example.com/app.js", "busy"},
		{"read", "", "read"},
		{"", "", "(anonymous)"},
		{"(idle)", "", "(idle)"},
	} {
		if got := Name(tc.fn, tc.url); got != tc.want {
			t.Errorf("Name(%q, %q) = %q, want %q", tc.fn, tc.url, got, tc.want)
		}
	}
}

// TestMalformed checks that broken profiles give an ErrShape error saying
// what is wrong, and never a panic.
func TestMalformed(t *testing.T) {
	deep := strings.Repeat(`{"id":1,"children":[`, maxDepth+2) + strings.Repeat(`]}`, maxDepth+2)
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `{"nodes": [`, "invalid JSON at byte"},
		{"wrong type", `{"nodes": [], "samples": "x", "timeDeltas": []}`, "samples"},
		{"lengths", `{"nodes": [{"id": 1, "callFrame": {"functionName": "a"}}], "samples": [1, 1], "timeDeltas": [1]}`, "2 samples but 1 timeDeltas"},
		{"unknown node", `{"nodes": [{"id": 1, "callFrame": {"functionName": "a"}}], "samples": [7], "timeDeltas": [1]}`, "sample 0 names node 7"},
		{"unknown child", `{"nodes": [{"id": 1, "callFrame": {"functionName": "a"}, "children": [9]}], "samples": [1], "timeDeltas": [1]}`, "names child 9"},
		{"duplicate id", `{"nodes": [{"id": 1, "callFrame": {}}, {"id": 1, "callFrame": {}}], "samples": [1], "timeDeltas": [1]}`, "appears twice"},
		{"cycle", `{"nodes": [{"id": 1, "callFrame": {"functionName": "a"}, "children": [2]}, {"id": 2, "callFrame": {"functionName": "b"}, "children": [1]}], "samples": [1], "timeDeltas": [1]}`, "its own ancestor"},
		{"deep", `{"head": ` + deep + `, "samples": [], "timestamps": []}`, "exceeded max depth"},
		{"time out of range", `{"nodes": [{"id": 1, "callFrame": {}}], "startTime": 1e300, "samples": [1], "timeDeltas": [1]}`, "out of range"},
		{"neither shape", `{"samples": [], "timeDeltas": []}`, `neither "nodes" nor "head"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.in))
			if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrShape saying %q", err, tc.want)
			}
		})
	}
}
