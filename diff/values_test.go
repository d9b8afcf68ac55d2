package diff

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// withDuration is a loaded profile whose profiles say they cover d
// nanoseconds (folded stacks carry no duration).
func withDuration(l *profile.Loaded, d int64) *profile.Loaded {
	l.Profile.DurationNanos = d
	return l
}

func TestRateUnits(t *testing.T) {
	cases := []struct {
		kind      profile.Kind
		typ, unit string
		format    profile.Format
		want      string
	}{
		{profile.KindCPU, "cpu", "nanoseconds", profile.FormatPprof, "cores"},
		{profile.KindCPU, "cpu-clock", "nanoseconds", profile.FormatPerfScript, "cores"},
		{profile.KindCPU, "cycles", "count", profile.FormatPerfScript, "cycles/s"},
		{profile.KindWall, "time", "nanoseconds", profile.FormatPprof, "goroutines"},
		{profile.KindWall, "wall", "nanoseconds", profile.FormatNettrace, "threads"},
		{profile.KindWall, "wall", "nanoseconds", profile.FormatSpeedscope, "threads"},
		{profile.KindTrace, "time", "nanoseconds", profile.FormatGoTrace, "goroutines"},
		{profile.KindMutex, "delay", "nanoseconds", profile.FormatPprof, "s/s"},
		{profile.KindBlock, "delay", "microseconds", profile.FormatPprofLegacy, "s/s"},
		{profile.KindMutex, "contentions", "count", profile.FormatPprof, "contentions/s"},
		{profile.KindGoroutine, "goroutine", "count", profile.FormatPprof, "goroutines"},
		{profile.KindHeap, "inuse_space", "bytes", profile.FormatPprof, "bytes"},
		{profile.KindHeap, "inuse_objects", "count", profile.FormatPprof, "objects"},
		{profile.KindUnknown, "samples", "count", profile.FormatFolded, "samples/s"},
	}
	for _, c := range cases {
		if got := rateUnit(c.kind, c.typ, c.unit, c.format); got != c.want {
			t.Errorf("rateUnit(%s, %s/%s, %s) = %q, want %q", c.kind, c.typ, c.unit, c.format, got, c.want)
		}
	}
}

// Rates are values per second of each side's wall time; a side with a
// profile of unknown duration has none, and auto measures by share then.
func TestRatesPerSecondOfWallTime(t *testing.T) {
	base := withDuration(folded(t, "a.folded", "main;f 30\nmain;g 10\n"), 2e9)
	nw := withDuration(folded(t, "b.folded", "main;f 90\nmain;g 10\n"), 3e9)
	r := diffOf(t, Options{}, base, nw)
	if r.RateUnit != "samples/s" || r.Normalize != result.NormalizeRate || r.Unit != "count" {
		t.Fatalf("unit %q rate unit %q normalize %s", r.Unit, r.RateUnit, r.Normalize)
	}
	f := findMethod(r, "f")
	if f == nil || f.BaseRate == nil || *f.BaseRate != 15 || *f.NewRate != 30 || f.BaseValue != 30 || f.NewValue != 90 {
		t.Fatalf("f: %+v", f)
	}
	// f's rate doubled (15 → 30 samples/s) while its share went 75% → 90%.
	if f.Note != "doubled rate" {
		t.Errorf("f note %q, want doubled rate", f.Note)
	}
	if *r.Base.TotalRate != 20 || r.Base.Profiles != 1 || r.Base.Records != 40 {
		t.Errorf("base summary %+v", r.Base)
	}
	// g: 10 samples in 2 s and in 3 s: its rate fell, though its value
	// did not change, and rows sort by |Δ rate|: f (15) before g (1.67).
	if r.Methods[0].Name != "main;f" && !strings.HasSuffix(r.Methods[0].Name, "f") {
		t.Errorf("first row %s, want f", r.Methods[0].Name)
	}

	unknown := diffOf(t, Options{}, base, folded(t, "c.folded", "main;f 90\n"))
	if unknown.Normalize != result.NormalizeShare || unknown.Methods[0].NewRate != nil || unknown.Methods[0].BaseRate == nil {
		t.Errorf("new side without a duration: normalize %s, rates %v %v", unknown.Normalize, unknown.Methods[0].BaseRate, unknown.Methods[0].NewRate)
	}
	asked := diffOf(t, Options{Normalize: result.NormalizeRate}, base, folded(t, "c.folded", "main;f 90\n"))
	if asked.Normalize != result.NormalizeShare || !strings.Contains(strings.Join(asked.Warnings, "\n"), "rates are unknown") {
		t.Errorf("rate asked without durations: normalize %s, warnings %q", asked.Normalize, asked.Warnings)
	}
	byValue := diffOf(t, Options{Normalize: result.NormalizeValue}, base, nw)
	if g := findMethod(byValue, "g"); g == nil || g.Note != "" || byValue.Methods[len(byValue.Methods)-1].Name != g.Name {
		t.Errorf("by value g (10 → 10) has no note and sorts last: %+v", byValue.Methods)
	}
}

func goroutineProfile(t *testing.T, name string) *profile.Loaded {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	return parseCaptured(t, name, buf.Bytes(), profile.KindGoroutine)
}

// Snapshots have no duration: a goroutine profile's rate is the mean
// count per profile of the side, so one profile compares with three.
func TestSnapshotRatesAreMeans(t *testing.T) {
	a := NewAnalyzer(Options{Top: -1})
	if err := a.Add(result.Base, goroutineProfile(t, "g0")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := a.Add(result.New, goroutineProfile(t, "g"+string(rune('1'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	r := a.Diff()
	if r.RateUnit != "goroutines" || r.Normalize != result.NormalizeRate || r.By != result.ByCaller || r.Meaning != result.MeaningState {
		t.Fatalf("rate unit %q normalize %s by %s meaning %s", r.RateUnit, r.Normalize, r.By, r.Meaning)
	}
	if r.New.Profiles != 3 || *r.New.TotalRate != r.New.Total/3 || *r.Base.TotalRate != r.Base.Total {
		t.Errorf("sides %+v / %+v", r.Base, r.New)
	}
	if runtime.NumGoroutine() > 0 && r.Base.Total < 1 {
		t.Errorf("a goroutine profile of this test has no goroutine: %+v", r.Base)
	}
}

func TestDefaultByFollowsKind(t *testing.T) {
	for kind, want := range map[profile.Kind]result.By{
		profile.KindWall: result.ByCaller, profile.KindGoroutine: result.ByCaller, profile.KindTrace: result.ByCaller,
		profile.KindBlock: result.ByCaller, profile.KindMutex: result.ByCaller,
		profile.KindCPU: result.ByFrame, profile.KindHeap: result.ByFrame, profile.KindUnknown: result.ByFrame,
	} {
		const lock = "main;app.work;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex;runtime.semacquire1;runtime.gopark"
		r := diffOf(t, Options{Kind: kind}, folded(t, "a", lock+" 10\n"), folded(t, "b", lock+" 20\n"))
		if r.By != want || !r.ByDefault {
			t.Errorf("%s: by %s (default %v), want %s by default", kind, r.By, r.ByDefault, want)
		}
		wantRow := "runtime.gopark"
		if want == result.ByCaller {
			wantRow = "app.work"
		}
		if r.Methods[0].Name != wantRow {
			t.Errorf("%s: row %s, want %s", kind, r.Methods[0].Name, wantRow)
		}
	}
	r := diffOf(t, Options{Kind: profile.KindWall, By: result.ByFrame}, folded(t, "a", "main;f 1\n"), folded(t, "b", "main;f 1\n"))
	if r.By != result.ByFrame || r.ByDefault {
		t.Errorf("explicit frame: by %s default %v", r.By, r.ByDefault)
	}
	if by, err := result.ParseBy(""); by != "" || err != nil {
		t.Errorf(`ParseBy("") = %q, %v; want the kind's default`, by, err)
	}
}

// A method whose samples span buckets keeps its dominant one and says the
// split; Top likewise.
func TestBucketSplit(t *testing.T) {
	const lock = "main;app.work;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex;runtime.semacquire1;runtime.gopark"
	const idle = "main;app.idle;runtime.chanrecv1;runtime.chanrecv;runtime.gopark"
	base := folded(t, "a", "main;app.work 60\n"+lock+" 40\n"+idle+" 10\n")
	nw := folded(t, "b", "main;app.work 20\n"+lock+" 80\n"+idle+" 10\n")
	r := diffOf(t, Options{Kind: profile.KindWall}, base, nw)
	w := findMethod(r, "app.work")
	if w == nil || w.Bucket != rules.LockContention || !near(w.BucketShare, 120.0/200) || len(w.Buckets) != 2 {
		t.Fatalf("app.work: %+v", w)
	}
	if s := w.Buckets[rules.CPU]; s.BaseValue != 60 || s.NewValue != 20 {
		t.Errorf("app.work cpu split %+v", s)
	}
	if s := w.Buckets[rules.LockContention]; s.BaseValue != 40 || s.NewValue != 80 {
		t.Errorf("app.work lock split %+v", s)
	}
	if idle := findMethod(r, "app.idle"); idle == nil || idle.Buckets != nil || idle.BucketShare != 1 {
		t.Errorf("app.idle (one bucket): %+v", idle)
	}
	a := NewAnalyzer(Options{Kind: profile.KindWall})
	if err := a.Add(result.Base, base); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	for _, m := range top.Methods {
		if m.Name == "app.work" && (m.Bucket != rules.CPU || !near(m.BucketShare, 0.6) || m.Buckets[rules.LockContention] != 40 || m.Buckets[rules.CPU] != 60) {
			t.Errorf("top app.work: %+v", m)
		}
	}
}

func TestPeek(t *testing.T) {
	base := folded(t, "a", "main;a;target;x 10\nmain;b;target;y 5\nmain;target;target;x 3\nmain;other 7\n")
	nw := folded(t, "b", "main;a;target;x 30\nmain;b;target;y 5\n")
	r := diffOf(t, Options{Peek: regexp.MustCompile(`^target$`)}, base, nw)
	if len(r.Peek) != 1 {
		t.Fatalf("peek rows %+v", r.Peek)
	}
	p := r.Peek[0]
	// The recursive sample counts once: 10+5+3.
	if p.Name != "target" || p.BaseValue != 18 || p.NewValue != 35 {
		t.Errorf("target: %+v", p.Values)
	}
	edges := func(es []result.PeekEdge) string {
		var s []string
		for _, e := range es {
			s = append(s, e.Name+":"+fmt.Sprintf("%g>%g", e.BaseValue, e.NewValue))
		}
		return strings.Join(s, " ")
	}
	// Sorted by |Δ share| (no durations): a 10/25 → 30/35, then main and
	// target (the recursion) 3/25 → 0, then b 5/25 → 5/35.
	if got := edges(p.Callers); got != "a:10>30 main:3>0 target:3>0 b:5>5" {
		t.Errorf("callers %s", got)
	}
	if got := edges(p.Callees); got != "x:13>30 target:3>0 y:5>5" {
		t.Errorf("callees %s", got)
	}
	top := NewAnalyzer(Options{Peek: regexp.MustCompile(`^(a|b)$`)})
	if err := top.Add(result.Base, base); err != nil {
		t.Fatal(err)
	}
	tr := top.Top()
	if len(tr.Peek) != 2 || tr.Peek[0].Name != "a" || tr.Peek[0].Callees[0].Name != "target" || tr.Peek[0].NewValue != 0 {
		t.Errorf("top peek %+v", tr.Peek)
	}
}

func TestCountColumn(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := pprofile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	idx := func(typ string) int {
		for i, st := range p.SampleType {
			if st.Type == typ {
				return i
			}
		}
		t.Fatalf("heap profile has no %s: %s", typ, SampleTypes(p))
		return -1
	}
	for sel, want := range map[string]string{"inuse_space": "inuse_objects", "alloc_space": "alloc_objects", "inuse_objects": "inuse_objects", "alloc_objects": "alloc_objects"} {
		if got := CountColumn(p, idx(sel)); got != idx(want) {
			t.Errorf("heap %s: count column %d, want %s (%d)", sel, got, want, idx(want))
		}
	}
	// A summed period (perf's cycles with -c 1000000) is never a count;
	// perfscript's trailing samples/count is.
	cycles := &pprofile.Profile{SampleType: []*pprofile.ValueType{{Type: "cycles", Unit: "count"}},
		PeriodType: &pprofile.ValueType{Type: "cycles", Unit: "count"}, Period: 1000000}
	if got := CountColumn(cycles, 0); got != -1 {
		t.Errorf("cycles with a period: count column %d, want none", got)
	}
	cycles.SampleType = append(cycles.SampleType, &pprofile.ValueType{Type: "samples", Unit: "count"})
	if got := CountColumn(cycles, 0); got != 1 {
		t.Errorf("cycles with samples/count: count column %d, want 1", got)
	}
}

func TestComparabilityWarnings(t *testing.T) {
	small := folded(t, "small.folded", "main;f 10\n")
	var big strings.Builder
	for i := range 100 {
		fmt.Fprintf(&big, "main;f%d 1\n", i)
	}
	r := diffOf(t, Options{}, small, goroutineProfile(t, "g.pb.gz"))
	all := strings.Join(r.Warnings, "\n")
	if !strings.Contains(all, "producers differ: base is folded, new is pprof") {
		t.Errorf("warnings %q lack the producers", r.Warnings)
	}
	r = diffOf(t, Options{}, small, folded(t, "big.folded", big.String()))
	if all := strings.Join(r.Warnings, "\n"); !strings.Contains(all, "sample counts differ: base 10 samples, new 100") || strings.Contains(all, "producers") {
		t.Errorf("warnings %q: want sample counts, not producers", r.Warnings)
	}

	// Counts near the int64 maximum compare as they are: a profile with
	// itself has no count that differs (RecordsRatio times them wrapped
	// negative, so they did).
	huge := folded(t, "huge.folded", "a;b 4611686018427387903\nc 4611686018427387903\n")
	r = diffOf(t, Options{}, huge, huge)
	if all := strings.Join(r.Warnings, "\n"); strings.Contains(all, "sample counts differ") || slices.ContainsFunc(r.Verdict.Caveats, func(c result.Caveat) bool { return c.Code == result.CaveatSamplesDiffer }) {
		t.Errorf("a profile of 2^63-2 samples compared with itself: warnings %q, caveats %v", r.Warnings, r.Verdict.Caveats)
	}
	for _, c := range []struct {
		rb, rn int64
		want   bool
	}{{10, 40, false}, {10, 41, true}, {41, 10, true}, {0, 100, false}, {math.MaxInt64, math.MaxInt64 / 4, true}, {math.MaxInt64, math.MaxInt64/4 + 1, false}} {
		if got := recordsDiffer(c.rb, c.rn); got != c.want {
			t.Errorf("recordsDiffer(%d, %d) = %v, want %v", c.rb, c.rn, got, c.want)
		}
	}

	mutex := func(name, v string) *profile.Loaded {
		l := folded(t, name, "main;app.f;sync.(*Mutex).Unlock 10\n")
		l.GoVersion = v
		return l
	}
	r = diffOf(t, Options{Kind: profile.KindMutex}, mutex("a", "go1.21.5"), mutex("b", "go1.22.1"))
	if n := strings.Count(strings.Join(r.Warnings, "\n"), "golang/go#61015"); n != 1 || r.Base.GoVersion != "go1.21.5" {
		t.Errorf("mutex across go1.22: %d warnings %q, base version %q", n, r.Warnings, r.Base.GoVersion)
	}
	r = diffOf(t, Options{Kind: profile.KindMutex}, mutex("a", "go1.22.0"), mutex("b", "go1.24.1"))
	if strings.Contains(strings.Join(r.Warnings, "\n"), "61015") {
		t.Errorf("both from 1.22 on: %q", r.Warnings)
	}
	for _, c := range [][3]string{{"go1.21", "devel go1.23-abc123 Tue", "warn"}, {"", "go1.22", ""}, {"go1.20", "go1.21.13", ""}, {"weird", "go1.22", ""}} {
		if got := mutexVersionWarning(c[0], c[1]); (got != "") != (c[2] != "") {
			t.Errorf("mutexVersionWarning(%q, %q) = %q", c[0], c[1], got)
		}
	}

	a := NewAnalyzer(Options{})
	if err := a.Add(result.Base, small); err != nil {
		t.Fatal(err)
	}
	if tw := a.Top().Warnings; strings.Contains(strings.Join(tw, "\n"), "marked ~") {
		t.Errorf("top warns of noise it does not show: %q", tw)
	}
}

// A side's counts are sums over its profiles: past int64 they saturate,
// never wrap to a negative sample count.
func TestSideCountsSaturate(t *testing.T) {
	var s ProfileStats
	big := ProfileStats{Samples: math.MaxInt64 - 1, DurationNanos: math.MaxInt64 / 2 * 2, Filtered: 3}
	s.add(&big)
	s.add(&big)
	if s.Samples != math.MaxInt64 || s.DurationNanos != math.MaxInt64 || s.Filtered != 6 {
		t.Errorf("summed %+v", s)
	}
}
