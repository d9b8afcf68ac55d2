package stackprof

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/readertest"
)

func totals(p *pprofile.Profile) (n, v int64) {
	for _, s := range p.Sample {
		n += s.Value[0]
		v += s.Value[1]
	}
	return n, v
}

func parse(t *testing.T, data []byte) (*pprofile.Profile, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, p, warns := readertest.ParseFile(t, path, Looks, Parse)
	return p, warns
}

// TestCorpus reads the corpus's stackprof dumps (speedscope's examples,
// stackprof 0.2 in cpu, wall and object modes): every sample of "raw" is
// counted, the file's "samples" where it agrees with raw; a wall sample
// weighs its timestamp delta, a cpu sample the interval, an object
// sample one allocation; GC samples keep their own stacks.
func TestCorpus(t *testing.T) {
	dir := filepath.Join(corpus.Need(t), "speedscope")
	for _, c := range []struct {
		file    string
		samples int64
		value   int64 // ns, or allocations
		gc      string
	}{
		{"sample__profiles__stackprof__simple-cpu-stackprof.json", 489, 489e6, "(garbage collection);(marking)"},
		{"sample__profiles__stackprof__simple-stackprof.json", 1554, 1551604e3, "(garbage collection)"},
		{"sample__profiles__stackprof__ruby-stackprof.json", 1034, 565290e3, "(garbage collection)"},
		{"sample__profiles__stackprof__object-stackprof.json", 103, 103, ""},
		{"sample__profiles__stackprof__stackprof-last-frame-no-name.json", 103, 103, ""},
	} {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		p, _ := parse(t, data)
		if n, v := totals(p); n != c.samples || v != c.value {
			t.Errorf("%s: %d samples, value %d; want %d, %d", c.file, n, v, c.samples, c.value)
		}
		if c.gc != "" && readertest.Stacks(p)[c.gc][0] == 0 {
			t.Errorf("%s: no samples on the GC stack %s", c.file, c.gc)
		}
	}
}

// record runs a Ruby program under StackProf.run(opts) and returns the
// JSON of its result; it skips the test where ruby or stackprof is
// missing.
func record(t *testing.T, opts string) []byte {
	t.Helper()
	ruby, err := exec.LookPath("ruby")
	if err != nil {
		t.Skip("ruby not installed")
	}
	if exec.Command(ruby, "-rstackprof", "-e", "").Run() != nil {
		t.Skip("ruby has no stackprof (apt-get install ruby-stackprof)")
	}
	out := filepath.Join(t.TempDir(), "x.json")
	prog := `require 'stackprof'; require 'json'
def leaf(n) = n.times.map { |i| "s#{i}" }.size
def a = leaf(60_000)
def b = leaf(30_000)
File.write(ARGV[0], JSON.generate(StackProf.run(` + opts + `) { i = 0; while i < 3; a; b; GC.start; sleep 0.02; i += 1; end }))`
	if msg, err := exec.Command(ruby, "-e", prog, out).CombinedOutput(); err != nil {
		t.Fatalf("ruby: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRecordedModes records one program in each mode with Debian's
// ruby-stackprof and checks the sample types, the totals against the
// file's own counts, and that GC ran on stackprof's GC frames.
func TestRecordedModes(t *testing.T) {
	for _, c := range []struct{ mode, typ, opts string }{
		{"cpu", "cpu", "mode: :cpu, raw: true, interval: 1000"},
		{"wall", "wall", "mode: :wall, raw: true, interval: 1000"},
		{"object", "alloc_objects", "mode: :object, raw: true, interval: 10"},
	} {
		data := record(t, c.opts)
		p, _ := parse(t, data)
		var f struct {
			Interval float64   `json:"interval"`
			Deltas   []float64 `json:"raw_timestamp_deltas"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatal(err)
		}
		if p.SampleType[1].Type != c.typ || p.DefaultSampleType != c.typ {
			t.Errorf("%s: sample types %v, default %s; want %s", c.mode, p.SampleType, p.DefaultSampleType, c.typ)
		}
		n, v := totals(p)
		want := float64(n) * f.Interval
		switch c.mode {
		case "cpu":
			want *= 1e3
		case "wall":
			want = 0
			for _, d := range f.Deltas {
				want += d * 1e3
			}
		}
		// stackprof writes a timestamp delta per sample.
		if n != int64(len(f.Deltas)) || math.Abs(float64(v)-want) > float64(n) {
			t.Errorf("%s: %d samples, value %d; want the file's %d samples, %.0f", c.mode, n, v, len(f.Deltas), want)
		}
		if c.mode != "object" {
			var gc int64
			for k, s := range readertest.Stacks(p) {
				if strings.HasPrefix(k, "(garbage collection)") {
					gc += s[0]
				}
			}
			if gc == 0 {
				t.Errorf("%s: no GC samples after 3 GC.start", c.mode)
			}
		}
	}
}

// TestWithoutRaw reads a recording without its "raw" stacks (the same
// file with the key removed, as StackProf.run without raw: true writes
// it): the stacks rebuilt from the frames' edges give each frame its own
// samples and add up to the raw stacks' total, and a warning says
// the call tree is approximate.
func TestWithoutRaw(t *testing.T) {
	data := record(t, "mode: :wall, raw: true, interval: 1000")
	withRaw, warns := parse(t, data)
	if approximate(warns) != 0 {
		t.Errorf("warnings %q on a raw recording", warns)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "raw")
	noRaw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p, warns := parse(t, noRaw)
	if approximate(warns) != 1 {
		t.Errorf("warnings %q, want one saying the call tree is approximate", warns)
	}
	// Each frame has the time of its own samples ("samples" in
	// "frames", 1 ms each), wherever the rebuilt tree puts them, give or
	// take a few: the shares of recursive paths below a thousandth of a
	// sample stay on their caller (the program's blocks recurse through
	// Enumerable#map; measured: 2 ms at most).
	var f struct {
		Frames map[string]struct {
			Name    string `json:"name"`
			Samples int64  `json:"samples"`
		} `json:"frames"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	own := map[string]int64{}
	for _, fr := range f.Frames {
		own[fr.Name] += fr.Samples
	}
	got := map[string]int64{}
	for _, s := range p.Sample {
		got[s.Location[0].Line[0].Function.Name] += s.Value[1]
	}
	for fn, n := range own {
		if math.Abs(float64(n*1e6-got[fn])) > 3e6 {
			t.Errorf("%s: %d ns in the rebuilt stacks, want its %d samples' %d ns", fn, got[fn], n, n*1e6)
		}
	}
	n, _ := totals(p)
	want, _ := totals(withRaw)
	if n != want {
		t.Errorf("rebuilt stacks hold %d samples, the raw ones %d", n, want)
	}
}

// TestMalformed: broken dumps fail with ErrShape, saying where.
func TestMalformed(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"mode":"cpu","interval":1000,"gc_samples":0,"frames":{},"raw":[1,5,1]}`, "frame 5 is not in"},
		{`{"mode":"cpu","interval":1000,"gc_samples":0,"frames":{"5":{"name":"a"}},"raw":[3,5,1]}`, "runs past the end"},
		{`{"mode":"cpu","interval":1000,"gc_samples":0,"frames":{"5":{"name":"a"}},"raw":[1,5,-1]}`, "sample count -1"},
		{`{"mode":"heap","interval":1000,"gc_samples":0,"frames":{}}`, `mode "heap"`},
		{`{"mode":"cpu","interval":0,"gc_samples":0,"frames":{}}`, "interval 0"},
		{`{"mode":"cpu","interval":1000,"gc_samples":0,"frames":{"x":{"samples":1}}}`, `frame id "x"`},
		{`{"mode":"cpu","interval":1000,"gc_samples":0,"frames":[]}`, "frames at byte"},
		{`{"mode":"cpu","gc_samples":0,"frames":{`, "invalid JSON"},
	} {
		_, _, err := Parse([]byte(c.in))
		if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrShape saying %q", c.in, err, c.want)
		}
	}
}

// approximate counts the warnings that say the call tree is approximate
// (stackprof may also have missed samples).
func approximate(warns []string) int {
	n := 0
	for _, w := range warns {
		if strings.Contains(w, "approximate") {
			n++
		}
	}
	return n
}
