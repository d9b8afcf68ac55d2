package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// toSpeedscope rewrites folded stacks as the speedscope file dotnet-trace
// convert writes: one sampled profile per thread (the `Thread (N)` root
// names it), frames shared, weights in milliseconds, and a `Process64`
// root above each thread.
func toSpeedscope(t *testing.T, folded string) []byte {
	t.Helper()
	type prof struct {
		Type       string    `json:"type"`
		Name       string    `json:"name"`
		Unit       string    `json:"unit"`
		StartValue float64   `json:"startValue"`
		EndValue   float64   `json:"endValue"`
		Samples    [][]int   `json:"samples"`
		Weights    []float64 `json:"weights"`
	}
	type frame struct {
		Name string `json:"name"`
	}
	var frames []frame
	index := map[string]int{}
	frameID := func(name string) int {
		if i, ok := index[name]; ok {
			return i
		}
		index[name] = len(frames)
		frames = append(frames, frame{name})
		return index[name]
	}
	var profiles []*prof
	byThread := map[string]*prof{}
	for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
		sp := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			t.Fatal(err)
		}
		names := strings.Split(line[:sp], ";")
		p := byThread[names[0]]
		if p == nil {
			p = &prof{Type: "sampled", Name: names[0], Unit: "milliseconds"}
			byThread[names[0]] = p
			profiles = append(profiles, p)
		}
		stack := []int{frameID("Process64 Benchmarks (4096)")}
		for _, f := range names {
			stack = append(stack, frameID(f))
		}
		p.Samples = append(p.Samples, stack)
		p.Weights = append(p.Weights, n)
		p.EndValue += n
	}
	b, err := json.Marshal(map[string]any{
		"$schema":            "https://www.speedscope.app/file-format-schema.json",
		"exporter":           "dotnet-trace (profdiff test)",
		"shared":             map[string]any{"frames": frames},
		"profiles":           profiles,
		"activeProfileIndex": 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The .NET example read from dotnet-trace's speedscope output (one profile
// per thread, Process64 and Thread roots, CPU_TIME and UNMANAGED_CODE_TIME
// leaves) classifies exactly as the same stacks folded: the synthetic frames
// are handled by the rules, and the per-thread profiles merge.
func TestSpeedscopeDotnetMatchesFolded(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{net10, net11} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		ss := filepath.Join(dir, strings.TrimSuffix(filepath.Base(name), ".folded")+".speedscope.json")
		if err := os.WriteFile(ss, toSpeedscope(t, string(data)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := profdiff(t, "", "diff", "--format", "json", "--top", "0", name, ss)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var r struct {
			Buckets []struct {
				Bucket string  `json:"bucket"`
				Base   float64 `json:"base"`
				Delta  float64 `json:"delta"`
			} `json:"buckets"`
			Methods []struct {
				Name  string  `json:"name"`
				Delta float64 `json:"delta"`
			} `json:"methods"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Buckets) == 0 || len(r.Methods) == 0 {
			t.Fatalf("empty diff: %s", out)
		}
		for _, b := range r.Buckets {
			if math.Abs(b.Delta) > 1e-9 {
				t.Errorf("%s: bucket %s moves by %v between folded and speedscope", name, b.Bucket, b.Delta)
			}
		}
		for _, m := range r.Methods {
			if math.Abs(m.Delta) > 1e-9 || strings.HasPrefix(m.Name, "Process64") || strings.HasPrefix(m.Name, "Thread (") {
				t.Errorf("%s: method %s (Δ %v)", name, m.Name, m.Delta)
			}
		}
		if !strings.Contains(stderr, "folded stacks do not say what they count") {
			t.Errorf("no warning about comparing folded with wall time: %s", stderr)
		}
	}
	// And the headline of the .NET example, from speedscope files alone,
	// by leaf frame as the folded tour shows it (speedscope files are
	// wall time, whose default is by caller); they know their duration,
	// so notes compare rates.
	out, stderr, code := profdiff(t, "", "diff", "--by", "frame", "--format", "markdown", filepath.Join(dir, "net10.speedscope.json"), filepath.Join(dir, "net11.speedscope.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"**Total wait/synchronization: 80.4% → 92.3%**", "WaitAndAcquire", "(18x rate)", "(doubled rate)", "(was in native)"} {
		if !strings.Contains(out, want) {
			t.Errorf("speedscope diff lacks %q:\n%s", want, out)
		}
	}
}

// perf script with two events: the first is the default, --sample-index
// picks the other, and the two are never summed.
func TestPerfScriptEvents(t *testing.T) {
	const perf = `app 100/101 [000] 1.000000:     1000 cycles:u:
	    401000 spin (/usr/bin/app)
	    402000 main (/usr/bin/app)

app 100/101 [000] 1.000100:      500 instructions:u:
	ffffffff81000000 do_syscall_64 ([kernel.kallsyms])
	    7f0000001000 __lll_lock_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)
	    402000 main (/usr/bin/app)

app 100/101 [000] 1.000200:     3000 cycles:u:
	    7f0000001000 __lll_lock_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)
	    402000 main (/usr/bin/app)
`
	path := filepath.Join(t.TempDir(), "perf.txt")
	if err := os.WriteFile(path, []byte(perf), 0o644); err != nil {
		t.Fatal(err)
	}
	type top struct {
		SampleType string `json:"sample_type"`
		Kind       string `json:"kind"`
		Buckets    []struct {
			Bucket string  `json:"bucket"`
			Share  float64 `json:"share"`
		} `json:"buckets"`
	}
	read := func(args ...string) top {
		t.Helper()
		out, stderr, code := profdiff(t, "", append([]string{"top", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var r top
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	share := func(r top, b string) float64 {
		for _, x := range r.Buckets {
			if x.Bucket == b {
				return x.Share
			}
		}
		return -1
	}
	cyc := read(path)
	if cyc.SampleType != "cycles:u/count" || cyc.Kind != "cpu" {
		t.Errorf("default: sample type %q kind %q, want the first event, cycles:u, as cpu", cyc.SampleType, cyc.Kind)
	}
	// cycles: 1000 in spin (cpu), 3000 in __lll_lock_wait (lock-contention).
	if got := share(cyc, "lock-contention"); math.Abs(got-0.75) > 1e-9 {
		t.Errorf("cycles lock-contention share %v, want 0.75", got)
	}
	ins := read("--sample-index", "instructions:u", path)
	if ins.SampleType != "instructions:u/count" || math.Abs(share(ins, "lock-contention")-1) > 1e-9 {
		t.Errorf("--sample-index instructions:u: %+v", ins)
	}
}

// corpusFile returns a file of ../shared/corpus (the folder beside the
// module root), or skips.
func corpusFile(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "corpus", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("corpus file absent: %v", err)
	}
	return p
}

const nettraceDir = "perfview/src__TraceEvent__TraceEvent.Tests__inputs__speedscope__"

// profdiff top on a zipped .nettrace: module-qualified methods, bucket
// shares that add up, the console read as I/O.
func TestTopNettrace(t *testing.T) {
	mixed := corpusFile(t, nettraceDir+"mixed_managed_external_samples.nettrace.zip")
	// By leaf frame: the rows checked are where time was spent (the
	// default for thread time is the caller behind it).
	out, stderr, code := profdiff(t, "", "top", "--by", "frame", "--format", "json", "--top", "0", mixed)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Kind    string `json:"kind"`
		Buckets []struct {
			Bucket string  `json:"bucket"`
			Share  float64 `json:"share"`
		} `json:"buckets"`
		Methods []struct {
			Name   string  `json:"name"`
			Share  float64 `json:"share"`
			Bucket string  `json:"bucket"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var buckets, methods float64
	for _, b := range r.Buckets {
		buckets += b.Share
	}
	found := map[string]string{}
	for _, m := range r.Methods {
		methods += m.Share
		found[m.Name] = m.Bucket
		if !strings.Contains(m.Name, "!") {
			t.Errorf("method %q is not module-qualified", m.Name)
		}
	}
	if r.Kind != "wall" || math.Abs(buckets-1) > 1e-9 || math.Abs(methods-1) > 1e-9 {
		t.Errorf("kind %s, bucket shares sum to %v, method shares to %v; want wall, 1, 1", r.Kind, buckets, methods)
	}
	for name, bucket := range map[string]string{
		"NoNativeStacks!NoNativeStacks.Program.FindByte": "cpu",
		"System.Console!System.IO.StdInReader.ReadKey":   "io",
	} {
		if found[name] != bucket {
			t.Errorf("%s: bucket %q, want %q", name, found[name], bucket)
		}
	}
	// --modules off gives the plain names.
	out, _, _ = profdiff(t, "", "top", "--modules", "off", "--top", "3", mixed)
	if strings.Contains(out, "NoNativeStacks!") || !strings.Contains(out, "NoNativeStacks.Program.FindByte") {
		t.Errorf("--modules off:\n%s", out)
	}
}

// The two NoNativeStacks traces: the console read appears as new off-CPU
// time (io) while the compute methods' shares fall.
func TestDiffNettraceManagedVsMixed(t *testing.T) {
	only := corpusFile(t, nettraceDir+"only_managed_samples.nettrace.zip")
	mixed := corpusFile(t, nettraceDir+"mixed_managed_external_samples.nettrace.zip")
	out, stderr, code := profdiff(t, "", "diff", "--by", "frame", "--format", "json", only, mixed)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Buckets []struct {
			Bucket string  `json:"bucket"`
			Base   float64 `json:"base"`
			New    float64 `json:"new"`
		} `json:"buckets"`
		Methods []struct {
			Name  string  `json:"name"`
			Base  float64 `json:"base"`
			New   float64 `json:"new"`
			Delta float64 `json:"delta"`
			Note  string  `json:"note"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, b := range r.Buckets {
		if b.Bucket == "io" && (b.Base != 0 || b.New < 0.3) {
			t.Errorf("io %v → %v; want 0 → over 30%% (the console read)", b.Base, b.New)
		}
		if b.Bucket == "cpu" && (b.Base != 1 || b.New > 0.7) {
			t.Errorf("cpu %v → %v; want 100%% → under 70%%", b.Base, b.New)
		}
	}
	got := map[string]float64{}
	notes := map[string]string{}
	for _, m := range r.Methods {
		got[m.Name] = m.Delta
		notes[m.Name] = m.Note
	}
	if got["System.Console!System.IO.StdInReader.ReadKey"] < 0.3 || notes["System.Console!System.IO.StdInReader.ReadKey"] != "new" {
		t.Errorf("ReadKey: Δ %v (%s), want new and over 30pp", got["System.Console!System.IO.StdInReader.ReadKey"], notes["System.Console!System.IO.StdInReader.ReadKey"])
	}
	for _, m := range []string{"NoNativeStacks!NoNativeStacks.Program.FindByte", "NoNativeStacks!NoNativeStacks.Program.InnerLoop"} {
		if got[m] >= 0 {
			t.Errorf("%s: Δ %v, want a fall", m, got[m])
		}
	}
}
