package diff

import (
	"archive/zip"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// folded loads folded-stack text as a profile source named name.
func folded(t *testing.T, name, text string) *profile.Loaded {
	t.Helper()
	l, err := profile.Parse(name, []byte(text), 0)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return l
}

func loadFile(t *testing.T, path string) *profile.Loaded {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := profile.Parse(path, data, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func diffOf(t *testing.T, opts Options, base, new *profile.Loaded) *result.Result {
	t.Helper()
	a := NewAnalyzer(opts)
	if err := a.Add(result.Base, base); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(result.New, new); err != nil {
		t.Fatal(err)
	}
	return a.Diff()
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func findMethod(r *result.Result, substr string) *result.MethodRow {
	for i := range r.Methods {
		if strings.Contains(r.Methods[i].Name, substr) {
			return &r.Methods[i]
		}
	}
	return nil
}

// TestDotnetRegressionExample reproduces the Trace Analysis table of the
// .NET 10 → 11 Kestrel JSON regression from the generated fixture pair.
func TestDotnetRegressionExample(t *testing.T) {
	dir := filepath.Join("..", "testdata", "dotnet")
	r := diffOf(t, Options{Top: -1}, loadFile(t, filepath.Join(dir, "net10.folded")), loadFile(t, filepath.Join(dir, "net11.folded")))
	sb, sn := r.SyncShare()
	if !near(sb, 0.804) || !near(sn, 0.923) {
		t.Errorf("total wait/sync = %.4f → %.4f, want 0.804 → 0.923", sb, sn)
	}
	want := []struct {
		name      string
		base, new float64
		bucket    rules.Bucket
		note      string
	}{
		{"WaitSubsystem+ThreadWaitInfo.Wait", 0, 0.0456, rules.Wait, "new"},
		{"WaitSubsystem+WaitableObject.Wait_Locked", 0, 0.0386, rules.Wait, "new"},
		{"LowLevelLock.WaitAndAcquire", 0.0027, 0.0486, rules.LockContention, "18x share"},
		{"PollGCWorker", 0.0552, 0.1091, rules.GC, "doubled share"},
		{"Interop+Sys.WaitForSocketEvents", 0, 0.1551, rules.IO, "was in native"},
		{"SystemNative_WaitForSocketEvents", 0.1530, 0, rules.IO, "now in System.Net.Sockets"},
		{"LowLevelLifoSemaphore.WaitForSignal", 0.1280, 0, rules.Wait, "gone"},
	}
	for _, w := range want {
		m := findMethod(r, w.name)
		if m == nil {
			t.Errorf("no row for %s", w.name)
			continue
		}
		if !near(m.Base, w.base) || !near(m.New, w.new) || m.Bucket != w.bucket || m.Note != w.note {
			t.Errorf("%s: %.4f → %.4f %s %q; want %.4f → %.4f %s %q", w.name, m.Base, m.New, m.Bucket, m.Note, w.base, w.new, w.bucket, w.note)
		}
	}
	// Rows are ordered by |delta|, largest first.
	for i := 1; i < len(r.Methods); i++ {
		if math.Abs(r.Methods[i].Delta) > math.Abs(r.Methods[i-1].Delta) {
			t.Fatalf("rows not sorted by |delta| at %d", i)
		}
	}
}

func TestSampleTypeMismatch(t *testing.T) {
	a := NewAnalyzer(Options{})
	first := folded(t, "a.folded", "main;f 10\n")
	first.Format = "pprof" // a samples/count profile that is not folded
	if err := a.Add(result.Base, first); err != nil {
		t.Fatal(err)
	}
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "contentions", Unit: "count"}, Period: 1,
	}
	fn := &pprofile.Function{ID: 1, Name: "sync.(*Mutex).Unlock"}
	loc := &pprofile.Location{ID: 1, Line: []pprofile.Line{{Function: fn}}}
	p.Function, p.Location = []*pprofile.Function{fn}, []*pprofile.Location{loc}
	p.Sample = []*pprofile.Sample{{Location: []*pprofile.Location{loc}, Value: []int64{1, 100}}}
	err := a.Add(result.New, &profile.Loaded{Source: "b.pb.gz", Profile: p, Kind: profile.DetectKind(p)})
	if err == nil {
		t.Fatal("mismatched sample types were accepted")
	}
	var st *SampleTypeError
	if !errors.As(err, &st) || st.Source != "b.pb.gz" || st.Has != "contentions/count, delay/nanoseconds" {
		t.Errorf("error %#v is not a SampleTypeError naming b.pb.gz and its types", err)
	}
	for _, s := range []string{"a.folded", "samples/count", "b.pb.gz", "delay/nanoseconds"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	// Folded stacks say nothing about what they count: they compare with
	// any sample type, with a warning.
	f := NewAnalyzer(Options{})
	if err := f.Add(result.Base, folded(t, "a.folded", "main;f 10\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(result.New, &profile.Loaded{Source: "b.pb.gz", Profile: p, Kind: profile.DetectKind(p)}); err != nil {
		t.Fatalf("folded vs delay/nanoseconds: %v", err)
	}
	if r := f.Diff(); len(r.Warnings) == 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "folded stacks do not say what they count") {
		t.Errorf("no warning for folded vs delay/nanoseconds: %q", r.Warnings)
	}
	// Asking for an absent sample type names what the profile has, once
	// every profile is added (Wait): none has it.
	b := NewAnalyzer(Options{SampleIndex: "cpu"})
	err = b.Add(result.Base, &profile.Loaded{Source: "b.pb.gz", Profile: p})
	if err == nil {
		err = b.Wait()
	}
	if err == nil || !strings.Contains(err.Error(), "contentions/count, delay/nanoseconds") {
		t.Errorf("missing sample type error = %v", err)
	}
}

const wallBase = `main;serve;handle;compute 60
main;serve;handle;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex;runtime.semacquire1;runtime.goparkunlock;runtime.gopark 20
main;worker;runtime.chanrecv1;runtime.chanrecv;runtime.gopark 20
`

const wallNew = `main;serve;handle;compute 30
main;serve;handle;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex;runtime.semacquire1;runtime.goparkunlock;runtime.gopark 50
main;worker;runtime.chanrecv1;runtime.chanrecv;runtime.gopark 20
`

func TestSelfCumAndDecider(t *testing.T) {
	base, nw := folded(t, "base", wallBase), folded(t, "new", wallNew)
	r := diffOf(t, Options{Top: -1}, base, nw)
	if b := r.Buckets[rules.LockContention]; !near(b.Base, 0.2) || !near(b.New, 0.5) {
		t.Errorf("lock-contention %v → %v, want 0.2 → 0.5", b.Base, b.New)
	}
	// By frame: the leaf (runtime.gopark) holds the lock and channel waits.
	gp := findMethod(r, "runtime.gopark")
	if gp == nil || !near(gp.Base, 0.4) || !near(gp.New, 0.7) || gp.Bucket != rules.LockContention {
		t.Errorf("runtime.gopark row = %+v", gp)
	}
	// By decider: the frame that chose the bucket holds the value.
	r = diffOf(t, Options{Top: -1, By: result.ByDecider}, folded(t, "base", wallBase), folded(t, "new", wallNew))
	if m := findMethod(r, "runtime_SemacquireMutex"); m == nil || !near(m.New, 0.5) || m.Bucket != rules.LockContention {
		t.Errorf("decider row for SemacquireMutex = %+v", m)
	}
	// runtime.chanrecv is the strong frame nearest the leaf; gopark below it
	// is only the mechanism.
	var chanrecv *result.MethodRow
	for i := range r.Methods {
		if r.Methods[i].Name == "runtime.chanrecv" {
			chanrecv = &r.Methods[i]
		}
	}
	if chanrecv == nil || !near(chanrecv.Base, 0.2) || chanrecv.Bucket != rules.Wait {
		t.Errorf("decider row for runtime.chanrecv = %+v", chanrecv)
	}
	if m := findMethod(r, "runtime.gopark"); m != nil {
		t.Errorf("gopark decided nothing but has a decider row: %+v", m)
	}
	// Inclusive: main is on every stack, handle on 80% then 80%.
	r = diffOf(t, Options{Top: -1, Cum: true}, folded(t, "base", wallBase), folded(t, "new", wallNew))
	if m := findMethod(r, "main"); m == nil || !near(m.Base, 1) || !near(m.New, 1) {
		t.Errorf("cum main = %+v", m)
	}
	if m := findMethod(r, "handle"); m == nil || !near(m.Base, 0.8) || !near(m.New, 0.8) {
		t.Errorf("cum handle = %+v", m)
	}
}

func TestFocusIgnoreTop(t *testing.T) {
	r := diffOf(t, Options{Top: -1, Focus: regexp.MustCompile(`^serve$`)}, folded(t, "base", wallBase), folded(t, "new", wallNew))
	if r.Base.Samples != 80 || r.New.Samples != 80 {
		t.Errorf("focus kept %d/%d samples, want 80/80", r.Base.Samples, r.New.Samples)
	}
	if findMethod(r, "chanrecv") != nil {
		t.Error("focus kept a worker stack")
	}
	r = diffOf(t, Options{Top: -1, Ignore: regexp.MustCompile(`Mutex`)}, folded(t, "base", wallBase), folded(t, "new", wallNew))
	if r.Buckets[rules.LockContention].New != 0 || r.New.Samples != 50 {
		t.Errorf("ignore left lock samples: %+v, %d samples", r.Buckets[rules.LockContention], r.New.Samples)
	}
	r = diffOf(t, Options{Top: 1}, folded(t, "base", wallBase), folded(t, "new", wallNew))
	// compute moved -0.3, gopark +0.3 (0.29999… in floating point).
	if len(r.Methods) != 1 || r.Methods[0].Name != "compute" {
		t.Errorf("top 1 = %+v", r.Methods)
	}
	// A focus that matches nothing leaves empty sides and says so.
	r = diffOf(t, Options{Focus: regexp.MustCompile(`nothing`)}, folded(t, "base", wallBase), folded(t, "new", wallNew))
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "removed by the focus/ignore filters") {
		t.Errorf("no warning for empty sides: %q", r.Warnings)
	}
}

func TestNoiseAndWarnings(t *testing.T) {
	// 100 samples per side: a 2-sample move is noise, a 40-sample one is not.
	base := folded(t, "base", "main;a 50\nmain;b 50\n")
	nw := folded(t, "new", "main;a 52\nmain;b 48\n")
	r := diffOf(t, Options{}, base, nw)
	if m := findMethod(r, "a"); m == nil || !m.Noisy {
		t.Errorf("2/100 change not marked noisy: %+v", m)
	}
	nw = folded(t, "new", "main;a 90\nmain;b 10\n")
	r = diffOf(t, Options{}, folded(t, "base", "main;a 50\nmain;b 50\n"), nw)
	if m := findMethod(r, "a"); m == nil || m.Noisy {
		t.Errorf("40/100 change marked noisy: %+v", m)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "only 100 samples") {
		t.Errorf("no low-sample warning: %q", r.Warnings)
	}
}

func TestPeriodMismatchWarning(t *testing.T) {
	mk := func(period int64) *profile.Loaded {
		fn := &pprofile.Function{ID: 1, Name: "main.f"}
		loc := &pprofile.Location{ID: 1, Line: []pprofile.Line{{Function: fn}}}
		p := &pprofile.Profile{
			SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: period,
			Function: []*pprofile.Function{fn}, Location: []*pprofile.Location{loc},
			Sample: []*pprofile.Sample{{Location: []*pprofile.Location{loc}, Value: []int64{2000, 2000 * period}}},
		}
		return &profile.Loaded{Source: "p", Profile: p, Kind: profile.DetectKind(p)}
	}
	r := diffOf(t, Options{}, mk(10_000_000), mk(1_000_000))
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "sampling periods differ: base 10000000, new 1000000") {
		t.Errorf("warnings = %q", r.Warnings)
	}
	if r.Kind != profile.KindCPU {
		t.Errorf("kind = %s, want cpu", r.Kind)
	}
}

func TestMutexKindIsAllLock(t *testing.T) {
	l := folded(t, "m", "main;sync.(*Mutex).Unlock 5\nmain;runtime.chanrecv1 5\n")
	a := NewAnalyzer(Options{Kind: profile.KindMutex})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	if top.Buckets[rules.LockContention].Share != 1 {
		t.Errorf("mutex profile buckets = %+v", top.Buckets)
	}
	if top.Kind != profile.KindMutex {
		t.Errorf("kind = %s", top.Kind)
	}
}

func TestMultipleProfilesPerSide(t *testing.T) {
	a := NewAnalyzer(Options{Top: -1})
	for _, s := range []string{"main;a 10\n", "main;a 10\nmain;b 20\n"} {
		if err := a.Add(result.Base, folded(t, "b", s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Add(result.New, folded(t, "n", "main;b 40\n")); err != nil {
		t.Fatal(err)
	}
	r := a.Diff()
	if r.Base.Samples != 40 || len(r.Base.Sources) != 2 {
		t.Errorf("merged base = %+v", r.Base)
	}
	if m := findMethod(r, "a"); m == nil || !near(m.Base, 0.5) || m.Note != "gone" {
		t.Errorf("a = %+v", m)
	}
}

func TestByCaller(t *testing.T) {
	stacks := `main.main;app.handle;app.(*registry).acquire;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex;runtime.semacquire1;runtime.gopark 30
net/http.(*conn).serve;net/http.(*connReader).Read;internal/poll.(*FD).Read;internal/poll.(*pollDesc).waitRead;internal/poll.(*pollDesc).wait;internal/poll.runtime_pollWait;runtime.netpollblock;runtime.gopark 70
runtime.goexit;runtime.main;runtime.parkunlock_c;runtime.gopark 5
runtime.goexit;testing.tRunner;time.Sleep;runtime.timeSleep;runtime.park_m;runtime.gopark 5
`
	a := NewAnalyzer(Options{By: result.ByCaller, Top: -1})
	if err := a.Add(result.Base, folded(t, "s", stacks)); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	got := map[string]float64{}
	for _, m := range top.Methods {
		got[m.Name] = m.Value
	}
	// The program's own frame behind the lock wait; for the all-stdlib
	// network wait, the first frame no rule decides; for a goroutine all
	// in the standard library, its first rule-free frame outside package
	// runtime (time.Sleep has a rule: it decides the wait); only a stack
	// all in the runtime is charged to the runtime.
	if got["app.(*registry).acquire"] != 30 || got["internal/poll.(*FD).Read"] != 70 || got["testing.tRunner"] != 5 ||
		got["runtime.parkunlock_c"] != 5 || len(got) != 4 {
		t.Errorf("by caller = %v", got)
	}
	if _, err := result.ParseBy("caller"); err != nil {
		t.Error(err)
	}
}

// Unsymbolized locations (lines without a function name, as legacy
// profiles have) keep one row per address rather than all taking the name
// of the first one.
func TestUnsymbolizedLocationsKeepTheirAddresses(t *testing.T) {
	m := &pprofile.Mapping{ID: 1, Start: 0x400000, Limit: 0x800000, File: "/bin/server"}
	var locs []*pprofile.Location
	for i, addr := range []uint64{0x401000, 0x402000, 0x403000} {
		locs = append(locs, &pprofile.Location{ID: uint64(i + 1), Mapping: m, Address: addr, Line: []pprofile.Line{{}}})
	}
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*pprofile.Mapping{m}, Location: locs,
	}
	for i, l := range locs {
		p.Sample = append(p.Sample, &pprofile.Sample{Location: []*pprofile.Location{l}, Value: []int64{int64(i + 1)}})
	}
	a := NewAnalyzer(Options{Top: -1})
	if err := a.Add(result.Base, &profile.Loaded{Source: "x", Profile: p}); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range a.Top().Methods {
		got[m.Name] = m.Value
	}
	want := map[string]float64{"server+0x1000": 1, "server+0x2000": 2, "server+0x3000": 3}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (rows %v)", k, got[k], v, got)
		}
	}
}

// A zipped folded file is folded stacks like any other: the zip is a
// container, not a format, so it compares with a CPU profile (it used to
// load as "folded (zip)" and fail with "sample types differ").
func TestZippedFoldedComparesWithAnyType(t *testing.T) {
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, err := zw.Create("stacks.folded")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("main;f 10\n")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zl, err := profile.Parse("stacks.zip", zbuf.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if zl.Format != profile.FormatFolded {
		t.Fatalf("zipped folded file loaded as format %q", zl.Format)
	}
	cpu := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e7,
	}
	fn := &pprofile.Function{ID: 1, Name: "main.f"}
	loc := &pprofile.Location{ID: 1, Line: []pprofile.Line{{Function: fn}}}
	cpu.Function, cpu.Location = []*pprofile.Function{fn}, []*pprofile.Location{loc}
	cpu.Sample = []*pprofile.Sample{{Location: []*pprofile.Location{loc}, Value: []int64{1, 1e7}}}
	for _, order := range [][2]*profile.Loaded{{zl, {Source: "cpu.pb.gz", Format: profile.FormatPprof, Profile: cpu, Kind: profile.KindCPU}}, {{Source: "cpu.pb.gz", Format: profile.FormatPprof, Profile: cpu, Kind: profile.KindCPU}, zl}} {
		a := NewAnalyzer(Options{})
		if err := a.Add(result.Base, order[0]); err != nil {
			t.Fatal(err)
		}
		if err := a.Add(result.New, order[1]); err != nil {
			t.Fatalf("%s vs %s: %v", order[0].Source, order[1].Source, err)
		}
	}
}
