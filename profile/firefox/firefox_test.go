package firefox

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
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

// TestMalformed: broken profiles fail with ErrShape saying where, and the
// processed format with ErrProcessed.
func TestMalformed(t *testing.T) {
	const frames = `"frameTable":{"schema":{"location":0},"data":[[0]]},"stringTable":["f"]`
	for _, c := range []struct {
		in   string
		want error
		says string
	}{
		{`{"meta":{"preprocessedProfileVersion":47,"interval":1},"threads":[{"stackTable":{},"frameTable":{}}]}`, ErrProcessed, "processed"},
		{`{"meta":{"interval":0},"threads":[],"stackTable":1,"frameTable":1}`, ErrShape, "meta.interval"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","samples":{"schema":{"stack":0},"data":[[3]]},"stackTable":{"schema":{"frame":0},"data":[[0]]},` + frames + `}]}`, ErrShape, "threads[0] (T).samples.data[0]: stack 3"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","stackTable":{"schema":{"prefix":0,"frame":1},"data":[[0,0]]},` + frames + `}]}`, ErrShape, "prefix 0 is not an earlier stack"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","stackTable":{"schema":{"frame":0},"data":[[5]]},` + frames + `}]}`, ErrShape, "frame is no row"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","stackTable":{"schema":{"frame":0},"data":[]},"frameTable":{"schema":{"location":0},"data":[[9]]},"stringTable":[]}]}`, ErrShape, "no string of the stringTable"},
		{`{"meta":{"interval":1},"threads":{},"stackTable":1,"frameTable":1}`, ErrShape, "threads"},
		{`{"meta":{"interval":1},"threads":[{"name":"T","samples":{"weightType":"bytes","schema":{"stack":0,"weight":1},"data":[[0,64]]},"stackTable":{"schema":{"frame":0},"data":[[0]]},` + frames + `}]}`, ErrShape, `weightType "bytes"`},
	} {
		_, _, err := Parse([]byte(c.in))
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.in, err, c.want, c.says)
		}
	}
}
