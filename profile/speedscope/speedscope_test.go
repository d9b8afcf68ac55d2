package speedscope

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/readertest"
)

// stackValues sums the values of index idx by "thread|root;...;leaf".
func stackValues(p *pprofile.Profile, idx int) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		names := make([]string, len(s.Location))
		for i, l := range s.Location {
			names[len(s.Location)-1-i] = l.Line[0].Function.Name
		}
		out[s.Label["thread"][0]+"|"+strings.Join(names, ";")] += s.Value[idx]
	}
	return out
}

func mustParse(t testing.TB, js string) (*pprofile.Profile, []string) {
	t.Helper()
	if !Looks([]byte(js)) {
		t.Errorf("Looks = false for a speedscope file")
	}
	p, warns, err := Parse([]byte(js))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("CheckValid: %v", err)
	}
	// The profile survives pprof's encoding.
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if _, err := pprofile.Parse(&buf); err != nil {
		t.Fatalf("re-parse: %v", err)
	}
	return p, warns
}

func sampleTypes(p *pprofile.Profile) string {
	var s []string
	for _, st := range p.SampleType {
		s = append(s, st.Type+"/"+st.Unit)
	}
	return strings.Join(s, ",")
}

func checkValues(t *testing.T, got, want map[string]int64) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("unexpected %s = %d", k, v)
		}
	}
}

const schema = `"$schema": "https://www.speedscope.app/file-format-schema.json"`

// sampledJSON is a py-spy-like file: two threads, seconds.
const sampledJSON = `{` + schema + `,
 "shared": {"frames": [
   {"name": "main", "file": "app.py", "line": 3},
   {"name": "work", "file": "app.py", "line": 10},
   {"name": "System.Private.CoreLib!System.Threading.Monitor.Enter"},
   {"name": "sleep", "file": "time.py"},
   {"name": "Unused!never"}]},
 "profiles": [
  {"type": "sampled", "name": "Thread 1 \"MainThread\"", "unit": "seconds", "startValue": 0, "endValue": 0.04,
   "samples": [[0, 1], [0, 1], [0, 2], [0]], "weights": [0.01, 0.01, 0.01, 0.01]},
  {"type": "sampled", "name": "Thread 2 \"worker\"", "unit": "seconds", "startValue": 0, "endValue": 0.02,
   "samples": [[0, 3], [0, 3]], "weights": [0.01, 0.01]}
 ]}`

func TestSampled(t *testing.T) {
	p, warns := mustParse(t, sampledJSON)
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	if got := sampleTypes(p); got != "samples/count,wall/nanoseconds" {
		t.Errorf("sample types %s", got)
	}
	if p.DefaultSampleType != "wall" || p.PeriodType.Type != "wall" || p.PeriodType.Unit != "nanoseconds" {
		t.Errorf("default %q, period type %v", p.DefaultSampleType, p.PeriodType)
	}
	if p.Period != 10e6 {
		t.Errorf("period %d, want 10ms (the common weight)", p.Period)
	}
	if p.DurationNanos != 40e6 {
		t.Errorf("duration %d, want 40ms (the longest profile)", p.DurationNanos)
	}
	checkValues(t, stackValues(p, 1), map[string]int64{
		`Thread 1 "MainThread"|main;work`:                           20e6,
		`Thread 1 "MainThread"|main;System.Threading.Monitor.Enter`: 10e6,
		`Thread 1 "MainThread"|main`:                                10e6,
		`Thread 2 "worker"|main;sleep`:                              20e6,
	})
	checkValues(t, stackValues(p, 0), map[string]int64{
		`Thread 1 "MainThread"|main;work`:                           2,
		`Thread 1 "MainThread"|main;System.Threading.Monitor.Enter`: 1,
		`Thread 1 "MainThread"|main`:                                1,
		`Thread 2 "worker"|main;sleep`:                              2,
	})
	// Module!Function: the module is the mapping; file and line are kept.
	var found bool
	for _, l := range p.Location {
		fn := l.Line[0].Function
		switch fn.Name {
		case "System.Threading.Monitor.Enter":
			found = true
			if l.Mapping == nil || l.Mapping.File != "System.Private.CoreLib" {
				t.Errorf("Monitor.Enter mapping %v", l.Mapping)
			}
		case "work":
			if fn.Filename != "app.py" || l.Line[0].Line != 10 || l.Mapping != nil {
				t.Errorf("work: file %q line %d mapping %v", fn.Filename, l.Line[0].Line, l.Mapping)
			}
		}
	}
	if !found {
		t.Error("no Monitor.Enter function")
	}
	// "main" is one function and one location in both threads.
	n := 0
	for _, f := range p.Function {
		if f.Name == "main" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d functions named main", n)
	}
	// Frames no sample uses are left out.
	if len(p.Function) != 4 || len(p.Location) != 4 || len(p.Mapping) != 1 {
		t.Errorf("%d functions, %d locations, %d mappings; want 4, 4, 1", len(p.Function), len(p.Location), len(p.Mapping))
	}
}

func TestLimits(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{` + schema + `, "shared": {"frames": [{"name": "f"}]}, "profiles": [{"type": "evented", "name": "t", "unit": "none", "events": [`)
	for i := 0; i <= MaxDepth; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"type":"O","frame":0,"at":0}`)
	}
	sb.WriteString(`]}]}`)
	_, _, err := Parse([]byte(sb.String()))
	if err == nil || !strings.Contains(err.Error(), "profiles[0].events[65536]: stack deeper than 65536 frames") {
		t.Errorf("error %v", err)
	}

	// Many events stay fast: 100000 alternating stacks.
	sb.Reset()
	sb.WriteString(`{` + schema + `, "shared": {"frames": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}, "profiles": [{"type": "evented", "name": "t", "unit": "microseconds", "events": [{"type":"O","frame":0,"at":0}`)
	for i := 0; i < 100000; i++ {
		f := 1 + i%2
		fmt.Fprintf(&sb, `,{"type":"O","frame":%d,"at":%d},{"type":"C","frame":%d,"at":%d}`, f, i, f, i+1)
	}
	sb.WriteString(`,{"type":"C","frame":0,"at":100000}]}]}`)
	p, _, err := Parse([]byte(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	checkValues(t, stackValues(p, 0), map[string]int64{"t|a;b": 50000e3, "t|a;c": 50000e3})
}

// eventedJSON is a dotnet-trace-like file: evented, milliseconds, startValue
// and endValue as strings (TraceEvent writes them so), pseudo-frames.
const eventedJSON = `{"exporter": "speedscope@1.3.2", "name": "trace", "activeProfileIndex": 0, ` + schema + `,
 "shared": {"frames": [
   {"name": "Process64 app (42)"}, {"name": "Thread (7)"},
   {"name": "App!Hot.Outer()"}, {"name": "App!Hot.Inner()"}, {"name": "CPU_TIME"}, {"name": "UNMANAGED_CODE_TIME"}]},
 "profiles": [
  {"type": "evented", "name": "Thread (7)", "unit": "milliseconds", "startValue": "0", "endValue": "10",
   "events": [
    {"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 0}, {"type": "O", "frame": 2, "at": 0},
    {"type": "O", "frame": 3, "at": 0}, {"type": "O", "frame": 4, "at": 0},
    {"type": "C", "frame": 4, "at": 4}, {"type": "C", "frame": 3, "at": 4},
    {"type": "O", "frame": 5, "at": 4}, {"type": "C", "frame": 5, "at": 6.5},
    {"type": "C", "frame": 2, "at": 8},
    {"type": "C", "frame": 1, "at": 10}, {"type": "C", "frame": 0, "at": 10}]},
  {"type": "evented", "name": "Thread (8)", "unit": "microseconds", "startValue": 0, "endValue": 3000,
   "events": [{"type": "O", "frame": 0, "at": 1000}, {"type": "O", "frame": 2, "at": 1000},
    {"type": "C", "frame": 2, "at": 3000}, {"type": "C", "frame": 0, "at": 3000}]}
 ]}`

func TestEvented(t *testing.T) {
	p, _ := mustParse(t, eventedJSON)
	if got := sampleTypes(p); got != "wall/nanoseconds" {
		t.Errorf("sample types %s", got)
	}
	if p.DefaultSampleType != "wall" || p.PeriodType.Type+"/"+p.PeriodType.Unit != "wall/nanoseconds" {
		t.Errorf("default %q, period type %v", p.DefaultSampleType, p.PeriodType)
	}
	if p.DurationNanos != 10e6 {
		t.Errorf("duration %d", p.DurationNanos)
	}
	root := "Process64 app (42);Thread (7);Hot.Outer()"
	checkValues(t, stackValues(p, 0), map[string]int64{
		"Thread (7)|" + root + ";Hot.Inner();CPU_TIME": 4e6,
		"Thread (7)|" + root + ";UNMANAGED_CODE_TIME":  2.5e6,
		"Thread (7)|" + root:                           1.5e6,
		"Thread (7)|Process64 app (42);Thread (7)":     2e6,
		"Thread (8)|Process64 app (42);Hot.Outer()":    2e6,
	})
}

func TestMergeSameThreadName(t *testing.T) {
	js := `{` + schema + `, "shared": {"frames": [{"name": "a"}, {"name": "b"}]}, "profiles": [
	 {"type": "sampled", "name": "py-spy", "unit": "none", "samples": [[0, 1]], "weights": [2]},
	 {"type": "sampled", "name": "py-spy", "unit": "none", "samples": [[0, 1], [0]], "weights": [3, 1]},
	 {"type": "sampled", "unit": "none", "samples": [[1]], "weights": [1]}]}`
	p, _ := mustParse(t, js)
	if got := sampleTypes(p); got != "samples/count" {
		t.Errorf("sample types %s", got)
	}
	if p.DefaultSampleType != "" || p.PeriodType.Type != "samples" || p.Period != 1 {
		t.Errorf("default %q period %v %d", p.DefaultSampleType, p.PeriodType, p.Period)
	}
	checkValues(t, stackValues(p, 0), map[string]int64{
		"py-spy|a;b":    5,
		"py-spy|a":      1,
		"profiles[2]|b": 1,
	})
	if len(p.Sample) != 3 {
		t.Errorf("%d samples, want identical stacks merged into 3", len(p.Sample))
	}
}

func TestUnits(t *testing.T) {
	for _, tc := range []struct {
		unit   string
		weight string
		types  string
		want   int64
	}{
		{"nanoseconds", "1500", "samples/count,wall/nanoseconds", 1500},
		{"microseconds", "1.5", "samples/count,wall/nanoseconds", 1500},
		{"milliseconds", "1.5", "samples/count,wall/nanoseconds", 1500000},
		{"seconds", "1.5", "samples/count,wall/nanoseconds", 1500000000},
		{"none", "7", "samples/count", 7},
		{"bytes", "4096", "space/bytes", 4096},
	} {
		t.Run(tc.unit, func(t *testing.T) {
			js := `{` + schema + `, "shared": {"frames": [{"name": "f"}]}, "profiles": [
			 {"type": "sampled", "name": "t", "unit": "` + tc.unit + `", "samples": [[0]], "weights": [` + tc.weight + `]}]}`
			p, _ := mustParse(t, js)
			if got := sampleTypes(p); got != tc.types {
				t.Errorf("sample types %s, want %s", got, tc.types)
			}
			last := len(p.SampleType) - 1
			if got := p.Sample[0].Value[last]; got != tc.want {
				t.Errorf("value %d, want %d", got, tc.want)
			}
			if p.PeriodType.Type != p.SampleType[last].Type {
				t.Errorf("period type %v", p.PeriodType)
			}
		})
	}
	// Different time units in one file convert to nanoseconds each.
	js := `{` + schema + `, "shared": {"frames": [{"name": "f"}]}, "profiles": [
	 {"type": "sampled", "name": "a", "unit": "seconds", "samples": [[0]], "weights": [1]},
	 {"type": "sampled", "name": "b", "unit": "milliseconds", "samples": [[0]], "weights": [1]}]}`
	p, _ := mustParse(t, js)
	checkValues(t, stackValues(p, 1), map[string]int64{"a|f": 1e9, "b|f": 1e6})
	if p.Period != 1 {
		t.Errorf("period %d, want 1 for differing weights", p.Period)
	}
	// Fractional counts are rounded, with a warning.
	js = `{` + schema + `, "shared": {"frames": [{"name": "f"}]}, "profiles": [
	 {"type": "sampled", "name": "a", "unit": "none", "samples": [[0], [0]], "weights": [0.75, 0.75]}]}`
	p, warns := mustParse(t, js)
	if p.Sample[0].Value[0] != 2 || len(warns) != 1 || !strings.Contains(warns[0], "rounded") {
		t.Errorf("value %d, warnings %q", p.Sample[0].Value[0], warns)
	}
}

func TestWarnings(t *testing.T) {
	js := `{` + schema + `, "shared": {"frames": [{"name": "f"}]}, "profiles": [
	 {"type": "sampled", "name": "a", "unit": "none", "samples": [[0], []], "weights": [1, 1]},
	 {"type": "evented", "name": "b", "unit": "none", "events": []}]}`
	_, warns := mustParse(t, js)
	if len(warns) != 1 || !strings.Contains(warns[0], "profiles[0]: skipped 1 sample(s) with an empty stack") {
		t.Errorf("warnings %q", warns)
	}
	// One profile per thread, each with empty stacks: one warning for all.
	js = `{` + schema + `, "shared": {"frames": [{"name": "f"}]}, "profiles": [
	 {"type": "sampled", "name": "t1", "unit": "none", "samples": [[0], []], "weights": [1, 1]},
	 {"type": "sampled", "name": "t2", "unit": "none", "samples": [[], [0], []], "weights": [1, 1, 1]},
	 {"type": "sampled", "name": "t3", "unit": "none", "samples": [[0]], "weights": [1]},
	 {"type": "sampled", "name": "t4", "unit": "none", "samples": [[]], "weights": [1]},
	 {"type": "sampled", "name": "t5", "unit": "none", "samples": [[], [0]], "weights": [1, 1]},
	 {"type": "sampled", "name": "t6", "unit": "none", "samples": [[], [0]], "weights": [1, 1]}]}`
	_, warns = mustParse(t, js)
	want := "skipped 6 sample(s) with an empty stack in 5 profiles (profiles[0], profiles[1], profiles[3], …)"
	if len(warns) != 1 || warns[0] != want {
		t.Errorf("warnings %q, want [%q]", warns, want)
	}
}

// errorCases are files Parse must reject, with what the error must say.
var errorCases = []struct {
	name, js, want string
}{
	{"empty", ``, "empty file"},
	{"array", `[{"ph": "X"}]`, "top level is a JSON array"},
	{"not json", `{"shared": `, "invalid JSON at line 1"},
	{"truncated", "{" + schema + `,` + "\n" + `"shared": {"frames": [{"name": "a"}]}, "profiles": [{"type": "sampled", "unit": "none", "samples": [[0`, "truncated"},
	{"no shared", `{` + schema + `, "profiles": []}`, `missing "shared"`},
	{"no frames", `{` + schema + `, "shared": {}, "profiles": []}`, `missing "shared.frames"`},
	{"shared wrong type", `{` + schema + `, "shared": [], "profiles": []}`, "shared: expected an object, got array"},
	{"frames wrong type", `{` + schema + `, "shared": {"frames": {}}, "profiles": []}`, "shared.frames: expected an array, got object"},
	{"no profiles", `{` + schema + `, "shared": {"frames": []}}`, `missing "profiles"`},
	{"empty profiles", `{` + schema + `, "shared": {"frames": []}, "profiles": []}`, "no profiles"},
	{"profiles wrong type", `{` + schema + `, "shared": {"frames": []}, "profiles": 3}`, "profiles: expected an array, got number"},
	{"frame not object", `{` + schema + `, "shared": {"frames": [{"name": "a"}, "b"]}, "profiles": []}`, "shared.frames[1]: expected an object, got a string"},
	{"frame no name", `{` + schema + `, "shared": {"frames": [{"file": "x"}]}, "profiles": []}`, "shared.frames[0]: missing name"},
	{"frame name number", `{` + schema + `, "shared": {"frames": [{"name": 3}]}, "profiles": []}`, "shared.frames[0].name: expected a string, got a number"},
	{"frame bad line", `{` + schema + `, "shared": {"frames": [{"name": "a", "line": 2.5}]}, "profiles": []}`, "shared.frames[0].line: 2.5 is not a valid line"},
	{"frame line string", `{` + schema + `, "shared": {"frames": [{"name": "a", "line": "7"}]}, "profiles": []}`, "shared.frames[0].line: expected a number, got a string"},
	{"profile not object", `{` + schema + `, "shared": {"frames": [{"name": "a"}]}, "profiles": [[]]}`, "profiles[0]: expected an object, got an array"},
	{"no type", sampled(`"unit": "none", "samples": [[0]], "weights": [1]`), "profiles[0].type: missing"},
	{"bad type", sampled(`"type": "timeline", "unit": "none", "samples": [[0]], "weights": [1]`), `unknown profile type "timeline"`},
	{"no unit", sampled(`"type": "sampled", "samples": [[0]], "weights": [1]`), "profiles[0].unit: missing"},
	{"bad unit", sampled(`"type": "sampled", "unit": "furlongs", "samples": [[0]], "weights": [1]`), `unknown unit "furlongs"`},
	{"unit number", sampled(`"type": "sampled", "unit": 1, "samples": [[0]], "weights": [1]`), "profiles[0].unit: expected a string, got a number"},
	{"name number", sampled(`"type": "sampled", "name": 5, "unit": "none", "samples": [[0]], "weights": [1]`), "profiles[0].name: expected a string"},
	{"bad startValue", sampled(`"type": "sampled", "unit": "none", "startValue": "soon", "samples": [[0]], "weights": [1]`), `profiles[0].startValue: "soon" is not a finite number`},
	{"no samples", sampled(`"type": "sampled", "unit": "none", "weights": [1]`), `profiles[0]: sampled profile has no "samples"`},
	{"no weights", sampled(`"type": "sampled", "unit": "none", "samples": [[0]]`), `profiles[0]: sampled profile has no "weights"`},
	{"samples object", sampled(`"type": "sampled", "unit": "none", "samples": {}, "weights": [1]`), "profiles[0].samples: expected an array, got an object"},
	{"length mismatch", sampled(`"type": "sampled", "unit": "none", "samples": [[0], [0]], "weights": [1]`), "profiles[0]: 2 samples but 1 weights"},
	{"index out of range", sampled(`"type": "sampled", "unit": "none", "samples": [[0], [0, 9041]], "weights": [1, 1]`), "profiles[0].samples[1][1]: frame index 9041 out of range (1 frames)"},
	{"negative index", sampled(`"type": "sampled", "unit": "none", "samples": [[-1]], "weights": [1]`), "profiles[0].samples[0][0]: frame index -1 out of range"},
	{"fractional index", sampled(`"type": "sampled", "unit": "none", "samples": [[0.5]], "weights": [1]`), "frame index 0.5 is not an integer"},
	{"string index", sampled(`"type": "sampled", "unit": "none", "samples": [["0"]], "weights": [1]`), "profiles[0].samples[0][0]: frame index: expected a number, got a string"},
	{"null index", sampled(`"type": "sampled", "unit": "none", "samples": [[null]], "weights": [1]`), "expected a number, got null"},
	{"sample not array", sampled(`"type": "sampled", "unit": "none", "samples": [0], "weights": [1]`), "profiles[0].samples[0]: expected an array of frame indexes, got a number"},
	{"negative weight", sampled(`"type": "sampled", "unit": "none", "samples": [[0]], "weights": [-1]`), "profiles[0].weights[0]: negative weight -1"},
	{"huge weight", sampled(`"type": "sampled", "unit": "none", "samples": [[0]], "weights": [1e400]`), "profiles[0].weights[0]: 1e400 is not a finite number"},
	{"string weight", sampled(`"type": "sampled", "unit": "none", "samples": [[0]], "weights": ["1"]`), "profiles[0].weights[0]: expected a number, got a string"},
	// 4e9 s is 4e18 ns, which fits an int64; twice that does not.
	{"overflow", sampled(`"type": "sampled", "unit": "seconds", "samples": [[0], [0]], "weights": [4e9, 4e9]`), "profiles[0].weights[1]: weights add up to more than a 64-bit integer holds (8e+18 nanoseconds)"},
	{"overflow across profiles", `{` + schema + `, "shared": {"frames": [{"name": "a"}]}, "profiles": [
	  {"type": "sampled", "unit": "none", "samples": [[0]], "weights": [4e18]},
	  {"type": "sampled", "unit": "none", "samples": [[0], [0]], "weights": [1, 4e18]}]}`, "profiles[1].weights[1]: weights add up to more than a 64-bit integer holds (8e+18 samples)"},
	{"evented overflow", evented(`"events": [{"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 4e12}, {"type": "C", "frame": 1, "at": 8e12}, {"type": "C", "frame": 0, "at": 9e12}]`),
		"profiles[0].events[2]: weights add up to more than a 64-bit integer holds (8e+18 nanoseconds)"},
	{"all zero", sampled(`"type": "sampled", "unit": "none", "samples": [[0]], "weights": [0]`), "no samples"},
	{"all empty", sampled(`"type": "sampled", "unit": "none", "samples": [], "weights": []`), "no samples"},
	{"mixed units", `{` + schema + `, "shared": {"frames": [{"name": "a"}]}, "profiles": [
	  {"type": "sampled", "unit": "seconds", "samples": [[0]], "weights": [1]},
	  {"type": "sampled", "unit": "bytes", "samples": [[0]], "weights": [1]}]}`, `profiles[1].unit: "bytes" does not go with profiles[0]'s "seconds"`},
	{"no events", evented(``), `profiles[0]: evented profile has no "events"`},
	{"event not object", evented(`"events": [{"type": "O", "frame": 0, "at": 0}, 5]`), "profiles[0].events[1]: expected an object, got a number"},
	{"event bad type", evented(`"events": [{"type": "B", "frame": 0, "at": 0}]`), `profiles[0].events[0].type: "B" is not "O"`},
	{"event no type", evented(`"events": [{"frame": 0, "at": 0}]`), "profiles[0].events[0].type: missing"},
	{"event no frame", evented(`"events": [{"type": "O", "at": 0}]`), "profiles[0].events[0]: missing frame"},
	{"event frame range", evented(`"events": [{"type": "O", "frame": 3, "at": 0}]`), "profiles[0].events[0]: frame index 3 out of range (2 frames)"},
	{"event no at", evented(`"events": [{"type": "O", "frame": 0}]`), "profiles[0].events[0]: missing at"},
	{"event at string", evented(`"events": [{"type": "O", "frame": 0, "at": "1"}]`), "profiles[0].events[0].at: expected a number, got a string"},
	{"close not open", evented(`"events": [{"type": "O", "frame": 0, "at": 0}, {"type": "C", "frame": 0, "at": 1}, {"type": "C", "frame": 1, "at": 2}]`),
		`profiles[0].events[2]: close of frame 1 ("b"), which is not open`},
	{"close wrong frame", evented(`"events": [{"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 1}, {"type": "C", "frame": 0, "at": 2}]`),
		`profiles[0].events[2]: close of frame 0 ("a"), which is not the innermost open frame 1 ("b")`},
	{"unclosed", evented(`"events": [{"type": "O", "frame": 0, "at": 0}]`), "profiles[0]: 1 frame(s) still open after the last event"},
	{"unsorted", evented(`"events": [{"type": "O", "frame": 0, "at": 5}, {"type": "C", "frame": 0, "at": 4}]`), "profiles[0].events[1]: at 4 is before the previous event's 5"},
}

func sampled(fields string) string {
	return `{` + schema + `, "shared": {"frames": [{"name": "a"}]}, "profiles": [{` + fields + `}]}`
}

func evented(fields string) string {
	if fields != "" {
		fields = ", " + fields
	}
	return `{` + schema + `, "shared": {"frames": [{"name": "a"}, {"name": "b"}]}, "profiles": [{"type": "evented", "name": "t", "unit": "milliseconds"` + fields + `}]}`
}

func TestErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := Parse([]byte(tc.js))
			if err == nil {
				t.Fatalf("Parse succeeded with %d samples, want an error with %q", len(p.Sample), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error %q spans lines", err)
			}
		})
	}
}

func TestLooks(t *testing.T) {
	for _, tc := range []struct {
		name string
		js   string
		want bool
	}{
		{"schema", `{"$schema": "https://www.speedscope.app/file-format-schema.json"}`, true},
		{"schema with BOM", "\uFEFF  {\"$schema\": \"https://www.speedscope.app/file-format-schema.json\", \"profiles\": [", true},
		{"schema last", `{"exporter": "x", "name": {"a": [1, "]"]}, "$schema": "speedscope"}`, true},
		{"shape", `{"shared": {"frames": []}, "profiles": []}`, true},
		{"shape reversed", `{"profiles": [], "x": 1, "shared": {"frames": [{"name": "a"}]}}`, true},
		{"shape without frames", `{"shared": {}, "profiles": []}`, false},
		{"profiles not array", `{"shared": {"frames": []}, "profiles": {}}`, false},
		{"other schema", `{"$schema": "https://json-schema.org/draft-07/schema"}`, false},
		{"chrome trace array", `[{"pid": 1, "tid": 1, "ph": "X", "name": "a", "ts": 0, "dur": 1}]`, false},
		{"chrome trace object", `{"traceEvents": [{"ph": "B", "name": "a"}], "displayTimeUnit": "ms"}`, false},
		{"cpuprofile", `{"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}}], "startTime": 0, "endTime": 1, "samples": [1], "timeDeltas": [0]}`, false},
		{"folded", "a;b;c 3\n", false},
		{"empty", "", false},
		{"garbage", "{\"shared\": \x00", false},
	} {
		if got := Looks([]byte(tc.js)); got != tc.want {
			t.Errorf("%s: Looks = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestErrorCaseNames keeps the error table free of duplicate names.
func TestErrorCaseNames(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range errorCases {
		if seen[tc.name] {
			t.Errorf("duplicate case %q", tc.name)
		}
		seen[tc.name] = true
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sampledJSON))
	f.Add([]byte(eventedJSON))
	for _, tc := range errorCases {
		f.Add([]byte(tc.js))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		Looks(data)
		p, _, err := Parse(data)
		if err != nil {
			if p != nil {
				t.Fatal("profile and error")
			}
			readertest.NotRecovered(t, "Parse", err)
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
		if len(p.Sample) == 0 {
			t.Fatal("no samples without an error")
		}
	})
}

// BenchmarkParseEvented parses a 9 MB dotnet-trace-like evented file.
func BenchmarkParseEvented(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{` + schema + `, "shared": {"frames": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}, "profiles": [{"type": "evented", "name": "t", "unit": "microseconds", "events": [{"type":"O","frame":0,"at":0}`)
	for i := 0; i < 100000; i++ {
		f := 1 + i%2
		fmt.Fprintf(&sb, `, { "type": "O", "frame": %d, "at": %d.123 }, { "type": "C", "frame": %d, "at": %d.123 }`, f, i, f, i+1)
	}
	sb.WriteString(`,{"type":"C","frame":0,"at":100001}]}]}`)
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
