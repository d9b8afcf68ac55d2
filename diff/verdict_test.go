package diff

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

func seedDiff(t *testing.T, opts Options) *result.Result {
	t.Helper()
	dir := filepath.Join("..", "testdata", "dotnet")
	return diffOf(t, opts, loadFile(t, filepath.Join(dir, "net10.folded")), loadFile(t, filepath.Join(dir, "net11.folded")))
}

func hasCaveat(v *result.Verdict, code string) bool {
	for _, c := range v.Caveats {
		if c.Code == code {
			return true
		}
	}
	return false
}

func leader(v *result.Verdict, role, name string) *result.VerdictFrame {
	for i := range v.Leaders {
		if f := &v.Leaders[i]; f.Role == role && strings.HasSuffix(f.Name, name) {
			return f
		}
	}
	return nil
}

// The seed: lock contention is the principal change (it quadrupled; gc
// grew a little more in points but only doubled), led by WaitAndAcquire;
// gc is named as also growing; the socket wait that moved between
// frames (io, within noise) is not the change.
func TestVerdictSeed(t *testing.T) {
	r := seedDiff(t, Options{})
	v := r.Verdict
	if v == nil || v.NoChange || v.Principal == nil || !v.Grew {
		t.Fatalf("verdict %+v, want a growth", v)
	}
	if v.Principal.Bucket != rules.LockContention || v.Measure != result.NormalizeShare {
		t.Fatalf("principal %s in %s, want lock-contention in share", v.Principal.Bucket, v.Measure)
	}
	if !near(v.Principal.Base, bucketShare(r, rules.LockContention, result.Base)) || !near(v.Principal.New, bucketShare(r, rules.LockContention, result.New)) || v.Principal.Note != "4x" {
		t.Errorf("principal %+v, want the bucket row's shares and 4x", v.Principal)
	}
	d := leader(v, "decider", "LowLevelLock.WaitAndAcquire")
	if d == nil || v.Leaders[0].Name != d.Name || !near(d.Delta, 0.0486-0.0027) {
		t.Errorf("leaders %+v, want WaitAndAcquire first with +4.59pp", v.Leaders)
	}
	if c := leader(v, "caller", "LowLevelLock.Acquire"); c == nil {
		t.Errorf("leaders %+v, want its caller LowLevelLock.Acquire", v.Leaders)
	}
	if len(v.Also) != 1 || v.Also[0].Bucket != rules.GC || v.Also[0].Note != "doubled" {
		t.Fatalf("also %+v, want gc doubled alone", v.Also)
	}
	if l := v.Also[0].Leaders; len(l) != 2 || l[0].Role != "decider" || !strings.Contains(l[0].Name, "PollGCWorker") || l[1].Role != "caller" {
		t.Errorf("gc's leaders %+v, want the GC polling worker and a caller", l)
	}
	for _, f := range v.Leaders {
		if strings.Contains(f.Name, "WaitForSocketEvents") {
			t.Errorf("the socket wait leads: %+v", f)
		}
	}
	if !hasCaveat(v, result.CaveatSharesOnly) || !hasCaveat(v, result.CaveatKindUnknown) || hasCaveat(v, result.CaveatFewSamples) {
		t.Errorf("caveats %+v, want shares-only and kind-unknown, not few-samples", v.Caveats)
	}
	// The JSON has the verdict object with its stable names.
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Verdict struct {
			Principal struct {
				Bucket string `json:"bucket"`
			} `json:"principal"`
			Leaders []struct{ Name, Role string } `json:"leaders"`
			Also    []struct{ Bucket string }     `json:"also"`
			Caveats []struct{ Code, Text string } `json:"caveats"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Verdict.Principal.Bucket != "lock-contention" || len(back.Verdict.Leaders) == 0 ||
		back.Verdict.Leaders[0].Role != "decider" || len(back.Verdict.Also) != 1 || back.Verdict.Also[0].Bucket != "gc" || len(back.Verdict.Caveats) != len(v.Caveats) {
		t.Errorf("JSON verdict %+v", back.Verdict)
	}
}

func bucketShare(r *result.Result, b rules.Bucket, side result.Side) float64 {
	for _, row := range r.Buckets {
		if row.Bucket == b {
			if side == result.Base {
				return row.Base
			}
			return row.New
		}
	}
	return -1
}

// The same profile twice: no change beyond noise, and nothing leads.
func TestVerdictNoChange(t *testing.T) {
	l := loadFile(t, filepath.Join("..", "testdata", "dotnet", "net10.folded"))
	v := diffOf(t, Options{}, l, l).Verdict
	if !v.NoChange || v.Principal != nil || len(v.Leaders) != 0 || len(v.Also) != 0 {
		t.Errorf("verdict %+v, want no change", v)
	}
}

// Noise alone is no change: a few samples that moved are within it.
func TestVerdictNoiseIsNoChange(t *testing.T) {
	base := folded(t, "base.folded", "main;work 60\nmain;runtime.gcBgMarkWorker 40\n")
	nw := folded(t, "new.folded", "main;work 55\nmain;runtime.gcBgMarkWorker 45\n")
	v := diffOf(t, Options{}, base, nw).Verdict
	if !v.NoChange || !hasCaveat(v, result.CaveatFewSamples) {
		t.Errorf("verdict %+v, want no change and the few-samples caveat", v)
	}
}

// A real Go program that adds a contended mutex, profiled by fgprof:
// rates are known, lock contention is the principal change, and the
// program's function behind the lock leads it as caller.
func TestVerdictGoWallMutex(t *testing.T) {
	base := recordWall(t, "base.wall", func() { wallWorkers(4, nil, 300*time.Millisecond) })
	var mu sync.Mutex
	nw := recordWall(t, "new.wall", func() { wallWorkers(4, &mu, 300*time.Millisecond) })
	v := diffOf(t, Options{}, base, nw).Verdict
	if v.Principal == nil || v.Principal.Bucket != rules.LockContention || v.Measure != result.NormalizeRate || !v.Grew {
		t.Fatalf("verdict %+v, want lock-contention growth in rate", v)
	}
	if v.Principal.NewRate == nil || *v.Principal.NewRate < 1 || v.Principal.RateUnit != "goroutines" {
		t.Errorf("principal %+v, want about 3 goroutines in lock contention", v.Principal)
	}
	if c := leader(v, "caller", "wallLockedStep"); c == nil || c.Change <= 0 {
		t.Errorf("leaders %+v, want the caller wallLockedStep", v.Leaders)
	}
	if hasCaveat(v, result.CaveatSharesOnly) || hasCaveat(v, result.CaveatKindsDiffer) {
		t.Errorf("caveats %+v, want none about rates or kinds", v.Caveats)
	}
}

// A cpu profile against folded stacks: the kinds differ, the folded side
// has no duration (shares only) and says nothing of its sample type.
func TestVerdictCaveatsKindsDiffer(t *testing.T) {
	fn := &pprofile.Function{ID: 1, Name: "main.work"}
	loc := &pprofile.Location{ID: 1, Line: []pprofile.Line{{Function: fn}}}
	p := &pprofile.Profile{SampleType: []*pprofile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e7, DurationNanos: 1e9,
		Sample:   []*pprofile.Sample{{Location: []*pprofile.Location{loc}, Value: []int64{5e8}}},
		Location: []*pprofile.Location{loc}, Function: []*pprofile.Function{fn}}
	base := &profile.Loaded{Source: "base.pb.gz", Profile: p, Kind: profile.KindCPU, Format: profile.FormatPprof}
	nw := folded(t, "new.folded", "main.work 30\nmain.work;runtime.mallocgc 20\n")
	v := diffOf(t, Options{}, base, nw).Verdict
	for _, code := range []string{result.CaveatKindsDiffer, result.CaveatSharesOnly, result.CaveatTypesDiffer, result.CaveatFewSamples, result.CaveatProducers} {
		if !hasCaveat(v, code) {
			t.Errorf("caveats %+v lack %s", v.Caveats, code)
		}
	}
}

// In a state profile a wait growth (idle goroutines parked) yields to the
// growth of another bucket, however smaller, and is listed after it; in
// a cpu profile it does not.
func TestVerdictWaitYields(t *testing.T) {
	base := folded(t, "base.folded", "main.main;main.idle;runtime.gopark 1000\nmain.main;main.work 8000\nmain.main;main.get;sync.(*Mutex).Lock;internal/sync.runtime_SemacquireMutex 10\n")
	nw := folded(t, "new.folded", "main.main;main.idle;runtime.gopark 4000\nmain.main;main.work 5000\nmain.main;main.get;sync.(*Mutex).Lock;internal/sync.runtime_SemacquireMutex 200\n")
	v := diffOf(t, Options{Kind: profile.KindWall}, base, nw).Verdict
	if v.Principal == nil || v.Principal.Bucket != rules.LockContention || len(v.Also) != 1 || v.Also[0].Bucket != rules.Wait {
		t.Fatalf("wall: verdict %+v, want lock-contention, then wait", v)
	}
	if c := leader(v, "caller", "main.get"); c == nil {
		t.Errorf("leaders %+v, want the caller main.get", v.Leaders)
	}
	if v := diffOf(t, Options{Kind: profile.KindCPU}, base, nw).Verdict; v.Principal == nil || v.Principal.Bucket == rules.LockContention {
		t.Errorf("cpu: verdict %+v, want the larger growth first", v)
	}
}

// Inclusive values (--cum) change the method table, not the verdict's
// tally: the seed's verdict is the same.
func TestVerdictCum(t *testing.T) {
	self, cum := seedDiff(t, Options{}).Verdict, seedDiff(t, Options{Cum: true}).Verdict
	if cum.Principal == nil || cum.Principal.Bucket != self.Principal.Bucket || len(cum.Leaders) != len(self.Leaders) || cum.Leaders[0].Name != self.Leaders[0].Name {
		t.Errorf("cum verdict %+v, want %+v", cum, self)
	}
}

// A fall when nothing grew beyond noise: rates fell with the load.
func TestVerdictFall(t *testing.T) {
	mk := func(name string, ns int64) *profile.Loaded {
		fn := &pprofile.Function{ID: 1, Name: "main.work"}
		loc := &pprofile.Location{ID: 1, Line: []pprofile.Line{{Function: fn}}}
		var samples []*pprofile.Sample
		for i := int64(0); i < ns/1e7; i++ {
			samples = append(samples, &pprofile.Sample{Location: []*pprofile.Location{loc}, Value: []int64{1e7}})
		}
		p := &pprofile.Profile{SampleType: []*pprofile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
			PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e7, DurationNanos: 10e9,
			Sample: samples, Location: []*pprofile.Location{loc}, Function: []*pprofile.Function{fn}}
		return &profile.Loaded{Source: name, Profile: p, Kind: profile.KindCPU, Format: profile.FormatPprof}
	}
	v := diffOf(t, Options{}, mk("base.pb.gz", 20e9), mk("new.pb.gz", 10e9)).Verdict
	if v.Grew || v.Principal == nil || v.Principal.Bucket != rules.CPU || v.Measure != result.NormalizeRate ||
		v.Principal.BaseRate == nil || !near(*v.Principal.BaseRate, 2) || !near(*v.Principal.NewRate, 1) || v.Principal.RateUnit != "cores" {
		t.Errorf("verdict %+v, want cpu falling in rate", v)
	}
}

// A frame that decides its own bucket is its own caller: it is never
// named as the caller of other deciders (the seed reversed, where cpu
// grows, decided by leaves such as System.Buffer.Memmove that are their
// own nearest program frame).
func TestVerdictCallerIsNoDecider(t *testing.T) {
	dir := filepath.Join("..", "testdata", "dotnet")
	r := diffOf(t, Options{}, loadFile(t, filepath.Join(dir, "net11.folded")), loadFile(t, filepath.Join(dir, "net10.folded")))
	v := r.Verdict
	if v == nil || v.Principal == nil || v.Principal.Bucket != rules.CPU {
		t.Fatalf("verdict %+v; want cpu growth", v)
	}
	deciders := map[string]bool{}
	for _, f := range v.Leaders {
		if f.Role == "decider" {
			deciders[f.Name] = true
		}
	}
	for _, f := range v.Leaders {
		if f.Role == "caller" && (deciders[f.Name] || strings.Contains(f.Name, "Memmove")) {
			t.Errorf("caller %s is a deciding frame of the bucket", f.Name)
		}
	}
}
