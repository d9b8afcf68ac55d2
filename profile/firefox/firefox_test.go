package firefox

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/labels"
	"github.com/profdiff/profdiff/profile/internal/readertest"
)

func parseFile(t *testing.T, path string) ([]byte, *pprofile.Profile, []string) {
	t.Helper()
	return readertest.ParseFile(t, path, Looks, Parse)
}

// counted is what a Gecko profile holds, counted here without the
// reader: the samples with a stack, per thread name and process type,
// and the sampling interval in ms (the top profile's).
func counted(t *testing.T, data []byte) (map[string]int64, float64) {
	t.Helper()
	type prof struct {
		Meta    struct{ Interval float64 }
		Threads []struct {
			Name, ProcessType string
			Samples           struct {
				Schema map[string]int
				Data   [][]any
			}
		}
		Processes []json.RawMessage
		Profile   json.RawMessage
	}
	out := map[string]int64{}
	var walk func(raw []byte) float64
	walk = func(raw []byte) float64 {
		var p prof
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		if p.Profile != nil {
			return walk(p.Profile)
		}
		for _, th := range p.Threads {
			name := th.Name
			if th.ProcessType != "" {
				name += " (" + th.ProcessType + ")"
			}
			for _, row := range th.Samples.Data {
				if row[th.Samples.Schema["stack"]] != nil {
					out[name]++
				}
			}
		}
		for _, sub := range p.Processes {
			walk(sub)
		}
		return p.Meta.Interval
	}
	return out, walk(data)
}

// perThread sums a profile's samples and time per thread label.
func perThread(p *pprofile.Profile) (map[string]int64, map[string]int64) {
	n, v := map[string]int64{}, map[string]int64{}
	for _, s := range p.Sample {
		th := s.Label[labels.Thread][0]
		n[th] += s.Value[0]
		v[th] += s.Value[1]
	}
	return n, v
}

// TestRecording reads Firefox ESR 153's own profile of a headless start
// that loads testdata/busy.html (see testdata/README.md): every sample
// of every thread of every process is read, each weighing the 1 ms
// interval; the page's 300 ms busy loop is on the tab's main thread; the
// Idle category is wait, and addresses are named by library.
func TestRecording(t *testing.T) {
	data, p, _ := parseFile(t, "testdata/headless.json.gz")
	want, interval := counted(t, data)
	n, v := perThread(p)
	if len(want) < 2 {
		t.Fatalf("threads %v: want the parent's and a tab's main thread", want)
	}
	for th, c := range want {
		if n[th] != c || v[th] != c*int64(interval*1e6) {
			t.Errorf("%s: %d samples, %d ns; want %d samples of %g ms", th, n[th], v[th], c, interval)
		}
	}
	var page, idle int64
	libs := map[string]bool{}
	files := map[string]bool{}
	for _, s := range p.Sample {
		for _, l := range s.Location {
			fn := l.Line[0].Function
			// Firefox 153 writes JavaScript frames
			// "name (url:line:column)[source]": each is read as the
			// function name with its file.
			if unread.MatchString(fn.Name) {
				t.Errorf("JavaScript frame %q read as a label", fn.Name)
			}
			if fn.Filename != "" {
				scheme, _, _ := strings.Cut(fn.Filename, ":")
				files[scheme] = true
			}
			// The page's script runs under the label frame Firefox names
			// after its URL ("file:///tmp/ff/busy.html[10]").
			if strings.Contains(fn.Name, "busy.html[") && s.Label[labels.Thread][0] == "GeckoMain (tab)" {
				page += s.Value[1]
				break
			}
			if strings.HasPrefix(fn.Name, "0x") {
				t.Errorf("address frame %s not named by its library", fn.Name)
			}
			if strings.HasPrefix(fn.Name, "[lib") {
				libs[fn.Name] = true
			}
		}
		if f := s.Label[labels.Fallback]; len(f) == 1 && f[0] == "wait" {
			idle += s.Value[1]
		}
	}
	if page < 150e6 {
		t.Errorf("busy.html's script has %d ns on the tab's main thread, want most of its 300 ms loop", page)
	}
	if idle == 0 || !libs["[libxul.so]"] {
		t.Errorf("idle time %d ns, libraries %v: want Idle samples in wait and frames in libxul.so", idle, libs)
	}
	for _, scheme := range []string{"resource", "chrome", "moz-extension", "self-hosted"} {
		if !files[scheme] {
			t.Errorf("no JavaScript function in a %s: file (files' schemes %v)", scheme, files)
		}
	}
	if p.DurationNanos <= 0 {
		t.Errorf("duration %d", p.DurationNanos)
	}
}

// unread matches a JavaScript location left whole as a name.
var unread = regexp.MustCompile(`\(.*:[0-9]+(:[0-9]+)?\)(\[[0-9]+\])?$`)

// TestLocations: location strings (of the recording and the corpus, and
// the native function's shape the Firefox Profiler's processing reads)
// are named as that processing names them.
func TestLocations(t *testing.T) {
	libs := []lib{{Start: 0x1000, End: 0x2000, Name: "libxul.so"}}
	for _, c := range []struct {
		in   string
		want frameName
	}{
		{"#checkInterventionPref (moz-extension://9a310967-e580-48bf-b3e8-4eafebbc122d/lib/interventions.js:436:25)[28]",
			frameName{name: "#checkInterventionPref", file: "moz-extension://9a310967-e580-48bf-b3e8-4eafebbc122d/lib/interventions.js", line: 436}},
		{"AsyncFunctionNext (self-hosted:780:27)[1]", frameName{name: "AsyncFunctionNext", file: "self-hosted", line: 780}},
		{"d (file:///Users/jlfwong/code/speedscope/sample/simple.js:20)", frameName{name: "d", file: "file:///Users/jlfwong/code/speedscope/sample/simple.js", line: 20}},
		{"exports.makeInfallible/< (resource://devtools/shared/base-loader.js -> resource://devtools/shared/ThreadSafeDevToolsUtils.js:107)",
			frameName{name: "exports.makeInfallible/<", file: "resource://devtools/shared/ThreadSafeDevToolsUtils.js", line: 107}},
		{"moz-extension://19877706-10e4-4fec-b493-82ae86131b14/bg.js:19:3[48]",
			frameName{name: "(root scope) moz-extension://19877706-10e4-4fec-b493-82ae86131b14/bg.js", file: "moz-extension://19877706-10e4-4fec-b493-82ae86131b14/bg.js", line: 19}},
		{"CC (Free Snow White)", frameName{name: "CC (Free Snow White)"}},
		{"file:///tmp/ff/busy.html[10]", frameName{name: "file:///tmp/ff/busy.html[10]"}},
		{"nsObserverService::NotifyObservers console-api-profiler", frameName{name: "nsObserverService::NotifyObservers console-api-profiler"}},
		{"non-virtual thunk to nsThread::ProcessNextEvent(bool, bool*) (in libxul.so) + 1234", frameName{name: "nsThread::ProcessNextEvent(bool, bool*)", module: "libxul.so"}},
		{"0x1800", frameName{name: "[libxul.so]", module: "libxul.so", address: true}},
		{"0x3000", frameName{name: "[native]", address: true}},
	} {
		if got := parseLocation(c.in, libs); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestCorpus reads the corpus's Firefox 59 exports of the DevTools
// performance panel ({"profile": …}, version 9, categories as bit
// masks): all samples of every thread, and simple-firefox.json's
// JavaScript frames with their file and line.
func TestCorpus(t *testing.T) {
	dir := filepath.Join(corpus.Need(t), "speedscope")
	for _, f := range []string{"sample__profiles__Firefox__59__simple-firefox.json", "sample__profiles__Firefox__59__firefox.json"} {
		data, p, _ := parseFile(t, filepath.Join(dir, f))
		want, interval := counted(t, data)
		n, v := perThread(p)
		for th, c := range want {
			if n[th] != c || v[th] != c*int64(interval*1e6) {
				t.Errorf("%s: %s: %d samples, %d ns; want %d samples of %g ms", f, th, n[th], v[th], c, interval)
			}
		}
		if !strings.Contains(f, "simple") {
			// Firefox 59's categories are bit masks: GC (0x80) and CC
			// (0x100) frames are gc.
			var gc int64
			for _, s := range p.Sample {
				if fb := s.Label[labels.Fallback]; len(fb) == 1 && fb[0] == "gc" {
					gc += s.Value[0]
				}
			}
			if gc == 0 {
				t.Errorf("%s: no sample of a GC or CC frame is gc", f)
			}
			continue
		}
		found := false
		for _, s := range p.Sample {
			if fn := s.Location[0].Line[0].Function; fn.Name == "d" {
				found = strings.HasSuffix(fn.Filename, "simple.js") && s.Location[0].Line[0].Line == 20
			}
		}
		if !found {
			t.Errorf("%s: no leaf d at simple.js:20", f)
		}
	}
}

// TestMalformed: broken profiles fail with ErrShape saying where.
func TestMalformed(t *testing.T) {
	const frames = `"frameTable":{"schema":{"location":0},"data":[[0]]},"stringTable":["f"]`
	// One function f, one frame, one stack, shared by the threads.
	const pShared = `"shared":{"stringArray":["f"],"funcTable":{"name":[0]},"frameTable":{"func":[0]},"stackTable":{"frame":[0],"prefixOffset":[0]}},`
	for _, c := range []struct {
		in   string
		want error
		says string
	}{
		{`{"meta":{"interval":0},"threads":[],"stackTable":1,"frameTable":1}`, ErrShape, "meta.interval"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","samples":{"schema":{"stack":0},"data":[[3]]},"stackTable":{"schema":{"frame":0},"data":[[0]]},` + frames + `}]}`, ErrShape, "threads[0] (T).samples.data[0]: stack 3"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","stackTable":{"schema":{"prefix":0,"frame":1},"data":[[0,0]]},` + frames + `}]}`, ErrShape, "prefix 0 is not an earlier stack"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","stackTable":{"schema":{"frame":0},"data":[[5]]},` + frames + `}]}`, ErrShape, "frame is no row"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","stackTable":{"schema":{"frame":0},"data":[]},"frameTable":{"schema":{"location":0},"data":[[9]]},"stringTable":[]}]}`, ErrShape, "no string of the stringTable"},
		{`{"meta":{"interval":1},"threads":{},"stackTable":1,"frameTable":1}`, ErrShape, "threads"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","samples":{"weightType":"bytes","schema":{"stack":0,"weight":1},"data":[[0,64]]},"stackTable":{"schema":{"frame":0},"data":[[0]]},` + frames + `}]}`, ErrShape, `weightType "bytes"`},
		// The processed format.
		{`{"meta":{"preprocessedProfileVersion":70,"interval":0},"threads":[]}`, ErrShape, "meta.interval"},
		{`{"meta":{"preprocessedProfileVersion":70,"interval":1,"sampleUnits":{"time":"bytes"}},"threads":[]}`, ErrShape, "sampleUnits.time"},
		{`{"meta":{"preprocessedProfileVersion":70,"interval":1},"threads":[{"name":"T","stackTable":{"frame":[0],"prefixOffset":[0]}}]}`, ErrShape, "threads[0] (T): no stackTable, frameTable or funcTable"},
		{`{"meta":{"preprocessedProfileVersion":70,"interval":1},` + pShared + `"threads":[{"name":"T","samples":{"stack":[2]}}]}`, ErrShape, "threads[0] (T).samples[0]: stack 2 is no row"},
		{`{"meta":{"preprocessedProfileVersion":70,"interval":1},` + pShared + `"threads":[{"name":"T","stackTable":{"frame":[0,0],"prefixOffset":[0,3]}}]}`, ErrShape, "threads[0] (T).stackTable[1]: prefix -2 is not an earlier stack"},
		{`{"meta":{"preprocessedProfileVersion":57,"interval":1},` + pShared + `"threads":[{"name":"T","stackTable":{"frame":[0],"prefix":[0]}}]}`, ErrShape, "stackTable[0]: prefix 0 is not an earlier stack"},
		{`{"meta":{"preprocessedProfileVersion":70,"interval":1},` + pShared + `"threads":[{"name":"T","frameTable":{"func":[4]}}]}`, ErrShape, "frameTable.func[0] is no row of the funcTable"},
		{`{"meta":{"preprocessedProfileVersion":70,"interval":1},` + pShared + `"threads":[{"name":"T","funcTable":{"name":[9]}}]}`, ErrShape, "funcTable.name[0] is no string"},
		{`{"meta":{"preprocessedProfileVersion":70,"interval":1},` + pShared + `"threads":[{"name":"T","samples":{"stack":[0],"weight":[1],"weightType":"bytes"}}]}`, ErrShape, `weightType "bytes"`},
		{`{"meta":{"preprocessedProfileVersion":70,"interval":1},"threads":{}}`, ErrShape, "threads"},
	} {
		_, _, err := Parse([]byte(c.in))
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.in, err, c.want, c.says)
		}
	}
}

// stackKeys lists a profile's samples, each as its thread, its fallback
// bucket, its values and its frames (name, file, module, line), sorted.
func stackKeys(p *pprofile.Profile) []string {
	var out []string
	for _, s := range p.Sample {
		k := fmt.Sprintf("%s|%s|%v", s.Label[labels.Thread], s.Label[labels.Fallback], s.Value)
		for _, l := range s.Location {
			module := ""
			if l.Mapping != nil {
				module = l.Mapping.File
			}
			k += fmt.Sprintf(";%s@%s@%s:%d", l.Line[0].Function.Name, l.Line[0].Function.Filename, module, l.Line[0].Line)
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestProcessed reads testdata/processed/processed.json.gz, the Firefox
// Profiler's processing of testdata/headless.json.gz (see
// testdata/processed/README.md), and finds every sample as the Gecko
// profile has it: its thread, its category's bucket, its weight, and
// each frame's name, file, library and line.
func TestProcessed(t *testing.T) {
	_, raw, _ := parseFile(t, "testdata/headless.json.gz")
	_, proc, _ := parseFile(t, "testdata/processed/processed.json.gz")
	if !strings.Contains(proc.Comments[0], "processed profile (format version 70") {
		t.Errorf("comment %q", proc.Comments[0])
	}
	want, got := stackKeys(raw), stackKeys(proc)
	if len(want) < 1000 {
		t.Fatalf("%d stacks in the Gecko profile", len(want))
	}
	for _, d := range diffLines(want, got, 10) {
		t.Errorf("processed stacks differ from the Gecko profile's: %s", d)
	}
	if raw.DurationNanos != proc.DurationNanos || raw.Period != proc.Period {
		t.Errorf("duration %d, period %d; the Gecko profile's %d, %d", proc.DurationNanos, proc.Period, raw.DurationNanos, raw.Period)
	}
}

// diffLines lists, at most n, the lines of two sorted lists that only one
// has ("-" want's, "+" got's).
func diffLines(want, got []string, n int) []string {
	var out []string
	i, j := 0, 0
	for (i < len(want) || j < len(got)) && len(out) < n {
		switch {
		case j == len(got) || i < len(want) && want[i] < got[j]:
			out = append(out, "-"+want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			out = append(out, "+"+got[j])
			j++
		default:
			i++
			j++
		}
	}
	return out
}

// olderLayout rewrites a processed profile of version 66 or later in the
// layout of versions before 56, as the Firefox Profiler's upgraders
// describe it (processed-profile-versioning.ts, 56, 58, 60, 66 read
// backwards): each thread with its own stackTable (a "prefix" column, null
// for a root), frameTable, funcTable (the file as "fileName", a string),
// resourceTable and stringArray; no "shared".
func olderLayout(t *testing.T, data []byte) []byte {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	shared := p["shared"].(map[string]any)
	stacks := shared["stackTable"].(map[string]any)
	offsets := stacks["prefixOffset"].([]any)
	prefix := make([]any, len(offsets))
	for i, o := range offsets {
		if off := int(o.(float64)); off > 0 {
			prefix[i] = i - off
		}
	}
	funcs := shared["funcTable"].(map[string]any)
	filenames := shared["sources"].(map[string]any)["filename"].([]any)
	sources := funcs["source"].([]any)
	fileName := make([]any, len(sources))
	for i, src := range sources {
		if src != nil {
			fileName[i] = filenames[int(src.(float64))]
		}
	}
	oldStacks := map[string]any{"frame": stacks["frame"], "prefix": prefix, "length": stacks["length"]}
	oldFuncs := map[string]any{"fileName": fileName}
	for k, v := range funcs {
		if k != "source" {
			oldFuncs[k] = v
		}
	}
	for _, th := range p["threads"].([]any) {
		th := th.(map[string]any)
		th["stackTable"], th["funcTable"] = oldStacks, oldFuncs
		for _, k := range []string{"frameTable", "resourceTable", "stringArray"} {
			th[k] = shared[k]
		}
	}
	delete(p, "shared")
	p["meta"].(map[string]any)["preprocessedProfileVersion"] = 55
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProcessedLayouts: the processed recording rewritten in the layout
// of versions before 56 (tables and strings per thread, "prefix",
// "fileName") reads as it does in its own.
func TestProcessedLayouts(t *testing.T) {
	data, proc, _ := parseFile(t, "testdata/processed/processed.json.gz")
	old, _, err := Parse(olderLayout(t, data))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffLines(stackKeys(proc), stackKeys(old), 10) {
		t.Errorf("the older layout's stacks differ (-version 70 +older): %s", d)
	}
}

// A processed profile whose timeDeltas column is shorter than its stack
// column (cut by hand from the Firefox Profiler's own file) is refused,
// naming the thread and both lengths, rather than read past its end.
func TestProcessedShortTimeDeltas(t *testing.T) {
	data, _, _ := parseFile(t, "testdata/processed/processed.json.gz")
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	cut := false
	for _, th := range p["threads"].([]any) {
		s := th.(map[string]any)["samples"].(map[string]any)
		if d, ok := s["timeDeltas"].([]any); ok && len(d) > 1 && !cut {
			s["timeDeltas"], cut = d[:len(d)-1], true
		}
	}
	if !cut {
		t.Skip("no thread with timeDeltas in the processed file")
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Parse(out)
	if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), ".samples: timeDeltas has ") || !strings.Contains(err.Error(), "threads[") {
		t.Errorf("got %v; want a shape error naming the thread and timeDeltas", err)
	}
}
