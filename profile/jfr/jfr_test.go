package jfr

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// jdk returns the paths of javac, java and jfr, or skips the test.
func jdk(t testing.TB) (javac, java, jfr string) {
	t.Helper()
	var err error
	for _, p := range []*string{&javac, &java, &jfr} {
		name := map[*string]string{&javac: "javac", &java: "java", &jfr: "jfr"}[p]
		if *p, err = exec.LookPath(name); err != nil {
			t.Skipf("no JDK: %s is not installed", name)
		}
	}
	return javac, java, jfr
}

// jvmFlags are the flags every JVM here runs with (java, and javac's and
// jfr's through -J). C1 only: C2's compiler threads otherwise spend about a
// second of CPU on JFR's and javac's start-up code, which programs this short
// never recoup (2.0 s of wall time for a JVM starting a recording, 0.8 s
// without C2, on a loaded 2-core machine); no test reads anything that
// depends on which compiler ran the code.
var jvmFlags = []string{"-XX:TieredStopAtLevel=1"}

var (
	compileOnce sync.Once
	classDir    string
	compileErr  error
)

// compile compiles testdata/Busy.java, Shapes.java and Holders.java, once per test
// binary.
func compile() error {
	compileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "jfrbusy")
		if err != nil {
			compileErr = err
			return
		}
		classDir = dir
		args := []string{"-d", dir, "testdata/Busy.java", "testdata/Shapes.java", "testdata/Holders.java"}
		for _, f := range jvmFlags {
			args = append([]string{"-J" + f}, args...)
		}
		if out, err := exec.Command("javac", args...).CombinedOutput(); err != nil {
			compileErr = fmt.Errorf("javac: %v\n%s", err, out)
		}
	})
	return compileErr
}

// busyWindow is how long Busy runs its modes here (busy.ms): 800 ms gives
// every test of these recordings its events many times over.
const busyWindow = "-Dbusy.ms=800"

// record returns a recording of Busy running the given modes with
// settings=profile (made once per test binary per set of modes).
func record(t testing.TB, modes ...string) string {
	t.Helper()
	return recordAll(t, modes)[0]
}

// recordAll returns recordings of Busy running each set of modes, as
// record does, recording at the same time those not made yet.
func recordAll(t testing.TB, sets ...[]string) []string {
	t.Helper()
	jdk(t)
	paths := make([]string, len(sets))
	errs := make([]error, len(sets))
	var wg sync.WaitGroup
	for i, modes := range sets {
		wg.Go(func() { paths[i], errs[i] = recording(busyName(modes), busyRecorder(modes)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return paths
}

func busyName(modes []string) string { return strings.Join(modes, "-") + ".jfr" }

// busyRecorder records Busy running the modes with settings=profile.
func busyRecorder(modes []string) func(path string) error {
	return func(path string) error {
		return runJava([]string{busyWindow, "-XX:StartFlightRecording=filename=" + path + ",settings=profile"}, "Busy", modes)
	}
}

// unfiltered says whether this run is of all the tests: no -run, -skip or
// -list, not a fuzz worker nor TestMemoryLinear's child.
func unfiltered() bool {
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f == nil || f.Value.String() != "" {
			return false
		}
	}
	if f := flag.Lookup("test.fuzzworker"); f == nil || f.Value.String() == "true" {
		return false
	}
	return os.Getenv(memoryChildEnv) == ""
}

// prefetch makes every recording the tests share, and runs jfr print over
// those compared with it, three JVMs at a time, longest first. The tests
// run two at a time and each would otherwise start its JVMs only when it
// runs, mostly waiting on them; made ahead, they overlap. A failure is
// left for the test that asks again to meet and report.
func prefetch() {
	for _, tool := range []string{"javac", "java", "jfr"} {
		if _, err := exec.LookPath(tool); err != nil {
			return
		}
	}
	type job struct {
		name    string
		make    func(path string) error
		compare bool // read by jfr print too
	}
	jobs := []job{
		{busyName([]string{"compute", "sleeps"}), busyRecorder([]string{"compute", "sleeps"}), false},
		{"rotated-a.jfr", recordRotated, true},
		{busyName(mixedModes), busyRecorder(mixedModes), true},
		{busyName([]string{"socket"}), busyRecorder([]string{"socket"}), true},
		{"shapes.jfr", recordShapes, true},
		{busyName([]string{"compute"}), busyRecorder([]string{"compute"}), false},
		{busyName([]string{"compute", "contend"}), busyRecorder([]string{"compute", "contend"}), false},
		{"tiny.jfr", recordTiny, false},
	}
	slots := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for _, j := range jobs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			path, err := recording(j.name, j.make)
			if err == nil && j.compare {
				references.get(path, func() ([]refEvent, error) { return jfrPrint(path) })
			}
		})
	}
	wg.Wait()
}

// runJava compiles the test programs (once) and runs the class with these
// JVM flags and arguments.
func runJava(flags []string, class string, args []string) error {
	if err := compile(); err != nil {
		return err
	}
	all := slices.Concat(jvmFlags, flags, []string{"-cp", classDir, class}, args)
	if b, err := exec.Command("java", all...).CombinedOutput(); err != nil {
		return fmt.Errorf("java %v: %v\n%s", all, err, b)
	}
	return nil
}

// refEvent is one event of `jfr print --json`, with only what the test
// compares.
type refEvent struct {
	Type   string    `json:"type"`
	Values refValues `json:"values"`
}

// refClass is a Class as jfr print writes it: the JVM's name
// (java/lang/String) and its package's.
type refClass struct {
	Name    string `json:"name"`
	Package struct {
		Name string `json:"name"`
	} `json:"package"`
}

// javaName is the Java name of a class as the JDK's reader has it: the
// package part dotted, the rest (a hidden class's /suffix) as it is.
func javaName(name, pkg string) string {
	if rest, ok := strings.CutPrefix(name, pkg+"/"); ok && pkg != "" {
		return strings.ReplaceAll(pkg, "/", ".") + "." + rest
	}
	return name
}

// refValues holds the fields the test reads by name, and all of them raw.
type refValues struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Value string `json:"value"`
	// ObjectClass is an allocation's class.
	ObjectClass *refClass `json:"objectClass"`
	StackTrace  *struct {
		Frames []struct {
			Method struct {
				Type       refClass `json:"type"`
				Name       string   `json:"name"`
				Descriptor string   `json:"descriptor"`
			} `json:"method"`
			LineNumber int64 `json:"lineNumber"`
		} `json:"frames"`
	} `json:"stackTrace"`
	all map[string]json.RawMessage
}

func (v *refValues) UnmarshalJSON(b []byte) error {
	type plain refValues
	if err := json.Unmarshal(b, (*plain)(v)); err != nil {
		return err
	}
	return json.Unmarshal(b, &v.all)
}

// number reads a field that jfr print writes as a number, or as an
// ISO-8601 duration for a time span, in nanoseconds.
func (v *refValues) number(t *testing.T, name string) int64 {
	t.Helper()
	raw := v.all[name]
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return isoNanos(t, s)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatalf("field %s: %s: %v", name, raw, err)
	}
	return n
}

// references holds what reference read, by file.
var references onceEach[[]refEvent]

// reference runs the JDK's own reader over the file (once per file: the
// events it returns are shared, read only).
func reference(t *testing.T, path string) []refEvent {
	t.Helper()
	jdk(t)
	evs, err := references.get(path, func() ([]refEvent, error) { return jfrPrint(path) })
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// jfrPrint reads the events of the types Parse reads, and the settings,
// with `jfr print --json`.
func jfrPrint(path string) ([]refEvent, error) {
	names := []string{"jdk.ActiveSetting"}
	for _, s := range specs {
		names = append(names, s.event)
	}
	var args []string
	for _, f := range jvmFlags {
		args = append(args, "-J"+f)
	}
	args = append(args, "print", "--json", "--stack-depth", "2048", "--events", strings.Join(names, ","), path)
	out, err := exec.Command("jfr", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("jfr print: %v", err)
	}
	var doc struct {
		Recording struct {
			Events []refEvent `json:"events"`
		} `json:"recording"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("jfr print --json: %v", err)
	}
	return doc.Recording.Events, nil
}

// isoNanos reads an ISO-8601 duration such as PT0.048723082S or PT1M2.5S.
func isoNanos(t *testing.T, s string) int64 {
	t.Helper()
	rest, ok := strings.CutPrefix(s, "PT")
	if !ok {
		t.Fatalf("duration %q", s)
	}
	var total int64
	for rest != "" {
		i := strings.IndexAny(rest, "HMS")
		if i < 0 {
			t.Fatalf("duration %q", s)
		}
		num, unit := rest[:i], rest[i]
		rest = rest[i+1:]
		whole, frac, _ := strings.Cut(num, ".")
		w, err := strconv.ParseInt(whole, 10, 64)
		if err != nil {
			t.Fatalf("duration %q: %v", s, err)
		}
		frac = (frac + "000000000")[:9]
		f, _ := strconv.ParseInt(frac, 10, 64)
		switch unit {
		case 'H':
			total += w * 3600e9
		case 'M':
			total += w * 60e9
		case 'S':
			total += w*1e9 + f
		}
	}
	return total
}

// refTotals sums the reference events per sample type and per stack
// (Class.method:line;... leaf first), by the sample type's unit. Wall
// samples are counted (wall-samples): a JDK recording names no wall-clock
// interval.
func refTotals(t *testing.T, evs []refEvent) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, e := range evs {
		for _, s := range specs {
			if s.event != e.Type || s.sample == cpuTimeType {
				continue
			}
			v := int64(1)
			if s.value != "" {
				v = e.Values.number(t, s.value)
			}
			typ := s.sample
			if typ == wallType {
				typ = wallSamplesType
			}
			if out[typ] == nil {
				out[typ] = map[string]int64{}
			}
			out[typ][refStack(e)] += v
			if v != 0 {
				if out[SamplesType] == nil {
					out[SamplesType] = map[string]int64{}
				}
				out[SamplesType][refStack(e)]++
			}
		}
	}
	return out
}

// refCovered counts, per sample type and stack, the execution and native
// samples of jfr print's events whose time lies within a wait or I/O event
// of the same thread (by javaThreadId), from start to end inclusive: the
// samples thread-time leaves out.
func refCovered(t *testing.T, evs []refEvent) map[string]map[string]int64 {
	type when struct{ thread, at, end int64 }
	spans := map[int64][][2]int64{}
	var samples []when
	var kinds []string
	var stacks []string
	for _, e := range evs {
		for _, s := range specs {
			if s.event != e.Type || !s.thread || !s.stack {
				continue
			}
			w := when{thread: e.Values.thread(t), at: e.Values.stamp(t)}
			switch {
			case s.value == "duration":
				spans[w.thread] = append(spans[w.thread], [2]int64{w.at, w.at + e.Values.number(t, "duration")})
			case s.unit == "count":
				samples = append(samples, w)
				kinds, stacks = append(kinds, s.sample), append(stacks, refStack(e))
			}
		}
	}
	out := map[string]map[string]int64{}
	for i, w := range samples {
		for _, sp := range spans[w.thread] {
			if sp[0] <= w.at && w.at <= sp[1] {
				if out[kinds[i]] == nil {
					out[kinds[i]] = map[string]int64{}
				}
				out[kinds[i]][stacks[i]]++
				break
			}
		}
	}
	return out
}

// thread is the javaThreadId of an event's sampledThread or eventThread.
func (v *refValues) thread(t *testing.T) int64 {
	for _, name := range []string{"sampledThread", "eventThread"} {
		var th struct {
			ID int64 `json:"javaThreadId"`
		}
		if raw, ok := v.all[name]; ok && json.Unmarshal(raw, &th) == nil && th.ID != 0 {
			return th.ID
		}
	}
	return 0
}

// stamp is an event's startTime in nanoseconds since the epoch.
func (v *refValues) stamp(t *testing.T) int64 {
	var s string
	json.Unmarshal(v.all["startTime"], &s)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("startTime %q: %v", s, err)
	}
	return at.UnixNano()
}

// refStack is the Class.method:line;... key of an event's stack, "" for
// an event without one.
func refStack(e refEvent) string {
	var fs []string
	if e.Values.StackTrace != nil {
		for _, f := range e.Values.StackTrace.Frames {
			name := javaName(f.Method.Type.Name, f.Method.Type.Package.Name) + "." + f.Method.Name
			fs = append(fs, fmt.Sprintf("%s:%d", name, f.LineNumber))
		}
	}
	return strings.Join(fs, ";")
}

// totals sums the profile the same way.
func totals(p *pprofile.Profile) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, s := range p.Sample {
		var fs []string
		for _, l := range s.Location {
			fs = append(fs, fmt.Sprintf("%s:%d", l.Line[0].Function.Name, l.Line[0].Line))
		}
		key := strings.Join(fs, ";")
		if len(fs) == 1 && strings.HasPrefix(fs[0], "[") {
			key = "" // a synthetic frame where the event has no stack
		}
		for i, st := range p.SampleType {
			if s.Value[i] == 0 {
				continue
			}
			if out[st.Type] == nil {
				out[st.Type] = map[string]int64{}
			}
			out[st.Type][key] += s.Value[i]
		}
	}
	return out
}

func parseFile(t *testing.T, path string) (*pprofile.Profile, []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, warns, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("invalid profile: %v", err)
	}
	return p, warns
}

// compareWithJDK checks the reader against `jfr print --json`: per event
// type the number of events, and per sample type the totals per stack
// (counts, summed durations and weights), are equal. With rotated set, the
// file has chunks whose events refer to stack traces the JVM wrote in an
// earlier chunk: the JDK's reader resolves some of those and leaves others
// without a stack, where Parse resolves them all, so there the only
// difference allowed is time that the JDK has without a stack and Parse
// has under one.
func compareWithJDK(t *testing.T, path string, rotated bool) *pprofile.Profile {
	t.Helper()
	p, _ := parseFile(t, path)
	ref := reference(t, path)
	wantN := map[string]int{}
	for _, e := range ref {
		if e.Type != "jdk.ActiveSetting" {
			wantN[e.Type]++
		}
	}
	data, _ := os.ReadFile(path)
	gotN := map[string]int{}
	period := map[string]int64{} // by sample type, from the JSON's settings
	for off := 0; off < len(data); {
		c, size, err := parseChunk(data[off:], off)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ref {
			if e.Type == "jdk.ActiveSetting" && e.Values.Name == "period" && c.classes[e.Values.ID] != nil {
				for _, s := range specs {
					if ns, ok := parseSpan(e.Values.Value); ok && s.event == c.classes[e.Values.ID].name {
						period[s.sample] = ns
					}
				}
			}
		}
		for _, e := range c.events {
			if _, ok := wantN[e.typ.name]; ok || slices.ContainsFunc(specs, func(s spec) bool { return s.event == e.typ.name }) {
				gotN[e.typ.name]++
			}
		}
		off += size
	}
	if !maps.Equal(gotN, wantN) {
		t.Errorf("events per type: got %v, jfr print has %v", gotN, wantN)
	}
	want, got := refTotals(t, ref), totals(p)
	// thread-time: the durations, plus the period of each sample not
	// inside a wait or I/O event of its thread.
	covered := refCovered(t, ref)
	tt := map[string]int64{}
	for _, s := range specs {
		if !s.thread {
			continue
		}
		for stack, v := range want[s.sample] {
			switch s.unit {
			case "nanoseconds":
				tt[stack] += v
			case "count":
				tt[stack] += (v - covered[s.sample][stack]) * period[s.sample]
			}
		}
	}
	if len(tt) > 0 {
		want[ThreadTime] = tt
	}
	for typ, stacks := range want {
		var moved int64
		for stack, v := range stacks {
			switch {
			case rotated && stack == "":
				moved += v - got[typ][stack]
			case rotated && got[typ][stack] > v:
				moved -= got[typ][stack] - v
			case got[typ][stack] != v:
				t.Errorf("%s: stack %q: got %d, jfr print says %d", typ, stack, got[typ][stack], v)
			}
		}
		for stack, v := range got[typ] {
			if _, ok := stacks[stack]; !ok {
				if !rotated {
					t.Errorf("%s: stack %q (%d), which jfr print does not have", typ, stack, v)
				}
				moved -= v
			}
		}
		if moved != 0 {
			t.Errorf("%s: %d more without a stack in jfr print than the stacks Parse resolved from earlier chunks", typ, moved)
		}
	}
	for typ := range got {
		if want[typ] == nil {
			t.Errorf("sample type %s, which jfr print has no events for", typ)
		}
	}
	return p
}

// mixedModes are the modes of the recording several tests share: every
// behaviour of Busy but the socket reads and the 120 sleeps.
var mixedModes = []string{"compute", "contend", "sleep", "lock", "park", "lambda"}

func TestMatchesJFRPrint(t *testing.T) {
	t.Parallel()
	path := record(t, mixedModes...)
	p := compareWithJDK(t, path, false)
	for _, typ := range []string{"execution-samples", "monitor-enter", "park", "sleep"} {
		if sampleIndex(p, typ) < 0 {
			t.Errorf("no %s samples in a recording of compute, contend, sleep, lock and park", typ)
		}
	}
}

// TestThreadTimeOverlap: in a recording of a thread blocked on socket
// reads, the native samples inside its jdk.SocketRead events (found by
// the JDK's reader's timestamps and thread ids) are left out of
// thread-time, stack by stack, and native-samples keeps them all.
func TestThreadTimeOverlap(t *testing.T) {
	t.Parallel()
	path := record(t, "socket")
	p := compareWithJDK(t, path, false)
	var n int64
	for _, v := range refCovered(t, reference(t, path))["native-samples"] {
		n += v
	}
	if n == 0 || sum(p, "native-samples") < n {
		t.Errorf("%d of %d native samples inside a socket read: want some", n, sum(p, "native-samples"))
	}
}

// TestLambdaClass: a lambda's class, a hidden class the JDK names
// Busy$$Lambda$N+0x…/hash, keeps the '/' before its hash, in frames and
// in an allocation's class, as the recording's package field tells.
func TestLambdaClass(t *testing.T) {
	t.Parallel()
	path := record(t, mixedModes...)
	p, _ := parseFile(t, path)
	want := map[string]bool{}
	for _, e := range reference(t, path) {
		if c := e.Values.ObjectClass; c != nil && strings.Contains(c.Name, "$$Lambda") {
			want[javaName(c.Name, c.Package.Name)] = true
		}
	}
	got := map[string]bool{}
	frames := 0
	for _, s := range p.Sample {
		for _, c := range s.Label[LabelClass] {
			if strings.Contains(c, "$$Lambda") {
				got[c] = true
			}
		}
		for _, l := range s.Location {
			if fn := l.Line[0].Function.Name; strings.HasPrefix(fn, "Busy$$Lambda$") {
				frames++
				if !strings.Contains(fn, "/") || strings.Count(fn, ".") != 1 {
					t.Errorf("lambda frame %q: want Busy$$Lambda$N+0x…/hash.run", fn)
				}
			}
		}
	}
	if len(want) == 0 || !maps.Equal(got, want) {
		t.Errorf("lambda classes allocated: got %v, jfr print has %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	if frames == 0 {
		t.Errorf("no Busy$$Lambda frame in a recording of threads started with a lambda")
	}
	for c := range want {
		if !strings.Contains(c, "/") {
			t.Errorf("lambda class %q has no '/' before its hash", c)
		}
	}
}

// TestSeveralChunks: a second recording started during the first makes
// the JVM start a new chunk, so the first recording's file has two,
// each with its own metadata and pools. Two files end to end are also a
// two-chunk file (the JDK's own reader mixes up their pools, so the
// reference is the sum of the two files alone).
func TestSeveralChunks(t *testing.T) {
	t.Parallel()
	a, b := rotatedRecordings(t)
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if n := chunks(t, da); n < 2 {
		t.Fatalf("%s has %d chunk, want a rotated recording of at least 2", a, n)
	}
	compareWithJDK(t, a, true)

	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	both := append(bytes.Clone(da), db...)
	p, _, err := Parse(both)
	if err != nil {
		t.Fatal(err)
	}
	pa, _ := parseFile(t, a)
	pb, _ := parseFile(t, b)
	for _, typ := range []string{"sleep", "monitor-enter", "execution-samples"} {
		got, want := sum(p, typ), sum(pa, typ)+sum(pb, typ)
		// The waits are certain; execution samples need the JVM's
		// sampler to find a thread in Java code, which a loaded machine
		// can leave at none in these short recordings (seen in CI).
		if got != want || want == 0 && typ != "execution-samples" {
			t.Errorf("%s: the files end to end give %d, the files alone %d", typ, got, want)
		}
	}
}

// rotatedRecordings records Busy sleeping and contending twice at once:
// a, from the start, and b, which Busy starts (busy.rotate) once it has
// slept and waited on the contended block, which makes the JVM start a new
// chunk of a (once per test binary).
func rotatedRecordings(t *testing.T) (a, b string) {
	jdk(t)
	a = recordOnce(t, "rotated-a.jfr", recordRotated)
	return a, strings.TrimSuffix(a, "-a.jfr") + "-b.jfr"
}

func recordRotated(path string) error {
	b := strings.TrimSuffix(path, "-a.jfr") + "-b.jfr"
	return runJava([]string{busyWindow, "-Dbusy.rotate=" + b, "-XX:StartFlightRecording=name=a,settings=profile,filename=" + path}, "Busy", []string{"sleep", "contend"})
}

// TestIncompleteLastChunk: a file whose last chunk is cut short (copied
// while the JVM wrote it) reads as its complete chunks, with one warning
// naming the cut chunk's offset: a rotated recording cut inside its last
// chunk, and two files end to end cut inside the second. A file of one
// cut chunk stays an error (TestMalformed).
func TestIncompleteLastChunk(t *testing.T) {
	t.Parallel()
	a, b := rotatedRecordings(t)
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	last := chunkOffsets(t, da)
	lastOff := last[len(last)-1]
	both := append(bytes.Clone(da), db...)
	firstB := len(db) // where b's first chunk ends
	if offs := chunkOffsets(t, db); len(offs) > 1 {
		firstB = offs[1]
	}
	for _, c := range []struct {
		name           string
		data           []byte
		cutAt, keepLen int
	}{
		{"rotated recording", da, lastOff + (len(da)-lastOff)/2, lastOff},
		{"two files end to end", both, len(da) + firstB/2, len(da)},
	} {
		p, warns, err := Parse(c.data[:c.cutAt])
		if err != nil {
			t.Errorf("%s cut at byte %d: %v", c.name, c.cutAt, err)
			continue
		}
		want, _, err := Parse(c.data[:c.keepLen])
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, w := range warns {
			if strings.Contains(w, "incomplete") {
				n++
				if !strings.Contains(w, fmt.Sprintf("at byte %d,", c.keepLen)) {
					t.Errorf("%s: warning %q does not name byte %d", c.name, w, c.keepLen)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: %d warnings of an incomplete chunk, want 1: %q", c.name, n, warns)
		}
		for _, typ := range []string{"sleep", "monitor-enter", SamplesType} {
			if got, w := sum(p, typ), sum(want, typ); got != w || w == 0 {
				t.Errorf("%s cut inside its last chunk: %s %d, its complete chunks alone %d", c.name, typ, got, w)
			}
		}
	}
}

// chunkOffsets gives the offsets of a file's chunks.
func chunkOffsets(t *testing.T, data []byte) []int {
	var out []int
	for off := 0; off < len(data); {
		out = append(out, off)
		_, size, err := parseChunk(data[off:], off)
		if err != nil {
			t.Fatal(err)
		}
		off += size
	}
	return out
}

// chunks counts a file's chunks.
func chunks(t *testing.T, data []byte) int {
	return len(chunkOffsets(t, data))
}

func sampleIndex(p *pprofile.Profile, typ string) int {
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i
		}
	}
	return -1
}

func sum(p *pprofile.Profile, typ string) int64 {
	i := sampleIndex(p, typ)
	if i < 0 {
		return 0
	}
	var n int64
	for _, s := range p.Sample {
		n += s.Value[i]
	}
	return n
}

// bucketTotals sums every duration event type's nanoseconds by the bucket
// label ("" for samples the frame rules decide); thread-time, which
// combines them with the samples' periods, is left out.
func bucketTotals(p *pprofile.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		for i, st := range p.SampleType {
			if st.Unit == "nanoseconds" && st.Type != "thread-time" && s.Value[i] > 0 {
				b := ""
				if l := s.Label[labels.Bucket]; len(l) > 0 {
					b = l[0]
				}
				out[b] += s.Value[i]
			}
		}
	}
	return out
}

// TestBuckets: a contended synchronized block is lock contention, a park
// on a ReentrantLock is lock contention, a bare parkNanos and a sleep are
// waits.
func TestBuckets(t *testing.T) {
	t.Parallel()
	p, warns := parseFile(t, record(t, mixedModes...))
	parks := map[string]int64{}
	i := sampleIndex(p, "park")
	for _, s := range p.Sample {
		if i >= 0 && s.Value[i] > 0 {
			parks[s.Label[labels.Bucket][0]+" "+strings.Join(s.Label[LabelClass], "")] += s.Value[i]
		}
		// The JVM's own threads (main, at the recording's start) may
		// contend on JFR's monitors too: only Busy's are checked.
		busy := len(s.Label[labels.Thread]) > 0 && strings.HasPrefix(s.Label[labels.Thread][0], "busy-")
		if j := sampleIndex(p, "monitor-enter"); busy && j >= 0 && s.Value[j] > 0 {
			if got := s.Label[labels.Bucket]; len(got) != 1 || got[0] != "lock-contention" || s.Label[LabelClass][0] != "java.lang.Object" {
				t.Errorf("monitor enter labelled %v", s.Label)
			}
		}
	}
	if parks["lock-contention java.util.concurrent.locks.ReentrantLock$NonfairSync"] == 0 || parks["wait "] == 0 {
		t.Errorf("parks by bucket and class: %v; want lock contention on ReentrantLock$NonfairSync and waits with no blocker", parks)
	}
	var threshold bool
	for _, w := range warns {
		threshold = threshold || strings.Contains(w, "jdk.ThreadPark") && strings.Contains(w, "10 ms")
	}
	if !threshold {
		t.Errorf("no warning of the 10 ms park threshold settings=profile sets: %q", warns)
	}
}

// TestRegressionPairs: adding a contended synchronized block grows lock
// contention most; adding sleeps (Busy's 120) grows wait most.
func TestRegressionPairs(t *testing.T) {
	t.Parallel()
	cases := []struct{ mode, bucket string }{{"contend", "lock-contention"}, {"sleeps", "wait"}}
	paths := recordAll(t, []string{"compute"}, []string{"compute", cases[0].mode}, []string{"compute", cases[1].mode})
	base := bucketTotals(mustParse(t, paths[0]))
	for i, c := range cases {
		next := bucketTotals(mustParse(t, paths[i+1]))
		top, grew := "", int64(0)
		for b, v := range next {
			if v-base[b] > grew {
				top, grew = b, v-base[b]
			}
		}
		if top != c.bucket {
			t.Errorf("adding %s: %s grew most (%d ns), want %s; before %v, after %v", c.mode, top, grew, c.bucket, base, next)
		}
	}
}

func mustParse(t *testing.T, path string) *pprofile.Profile {
	p, _ := parseFile(t, path)
	return p
}

// TestMalformed: every truncation of a real recording and a few corrupted
// bytes give an error or a profile, never a panic.
func TestMalformed(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(record(t, "compute", "contend"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 3, 10, headerSize - 1, headerSize, headerSize + 5, len(data) / 2, len(data) - 1} {
		_, _, err := Parse(data[:n])
		if err == nil {
			t.Errorf("the first %d of %d bytes parsed without an error", n, len(data))
		}
	}
	if _, _, err := Parse(data[:len(data)/2]); err == nil || !strings.Contains(err.Error(), "byte 0") {
		t.Errorf("a truncated chunk: %v; want an error naming the chunk's offset", err)
	}
	bad := bytes.Clone(data)
	for i := headerSize; i < len(bad); i += 97 {
		bad[i] ^= 0x5a
	}
	Parse(bad) // must not panic
}

// TestCorpusRecording: the corpus's JFR file, written by another JVM
// (speedscope's sample), reads as the JDK's own reader reads it.
func TestCorpusRecording(t *testing.T) {
	t.Parallel()
	dir := corpus.Need(t)
	jdk(t)
	p := compareWithJDK(t, filepath.Join(dir, "speedscope", "sample__profiles__java-flight-recorder__heavy.jfr"), false)
	if sum(p, "execution-samples") == 0 || sum(p, "gc-pause") == 0 {
		t.Errorf("no execution samples or GC pauses in a recording that has both: %v", p.SampleType)
	}
}

// A native-method sample is a thread in native code or blocked in the OS,
// which the JDK does not tell apart: it carries the fallback "unknown", so
// where no rule names its frames it is kept apart, not counted as cpu.
func TestNativeSamplesFallBackToUnknown(t *testing.T) {
	t.Parallel()
	p := mustParse(t, record(t, "socket"))
	i := sampleIndex(p, "native-samples")
	if i < 0 {
		t.Skip("the recording has no native-method samples")
	}
	n := 0
	for _, s := range p.Sample {
		if s.Value[i] == 0 {
			continue
		}
		n++
		if fb := s.Label[labels.Fallback]; len(fb) != 1 || fb[0] != labels.Unknown {
			t.Errorf("native sample with fallback %q, want %q", fb, labels.Unknown)
		}
	}
	if n == 0 {
		t.Error("no native-method samples in a recording that reads a socket")
	}
}
