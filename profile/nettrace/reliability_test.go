package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/internal/memtest"
)

// TestParseChild is the subprocess of parseInChild (see package
// memtest): it parses the file it is given and prints what it got. It
// does nothing in a normal run.
func TestParseChild(t *testing.T) {
	data, err := os.ReadFile(memtest.Args(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	memtest.Measure(func() {
		p, _, err := Parse(data)
		if err != nil {
			fmt.Printf("error: %v\n", err)
			return
		}
		fmt.Printf("samples %d\n", len(p.Sample))
	})
}

// parseInChild parses data in a re-executed test binary and returns what
// it printed, the time Parse took there and the child's peak RSS in bytes.
func parseInChild(t *testing.T, data []byte) (out string, took time.Duration, rss int64) {
	t.Helper()
	return memtest.Run(t, "TestParseChild", "x.nettrace", data)
}

// deepStackTrace is a trace (made with the test writer, as the synthetic
// fixture is) whose one stack of depth frames is sampled once on each of
// threads threads: pprof keeps a copy of the stack per thread, so the
// profile needs depth x threads frame references for a file of about
// 8 x depth + 10 x threads bytes.
func deepStackTrace(depth, threads int) []byte {
	w := newTraceWriter(true, 8, 1_000_000_000, 1_000_000)
	w.metadata(metaDef{idSample, providerSampleProfiler, eventThreadSample, ""})
	stack := make([]uint64, depth)
	for i := range stack {
		stack[i] = 0x1000 + uint64(i)*16
	}
	w.stacks(1, stack)
	evs := make([]ev, threads)
	for i := range evs {
		evs[i] = ev{meta: idSample, thread: uint64(100 + i), stack: 1, timestamp: int64(2000 + i), payload: samplePayload(SampleManaged)}
	}
	w.events(evs...)
	return w.end()
}

// One 65,536-frame stack sampled on 2,000 threads (540 KB) used to build
// 131 million frame references (1 GB) and resolve the stack once per
// sample; it is refused at 4 references per byte, having held little.
func TestDeepStackManyThreadsRefused(t *testing.T) {
	data := deepStackTrace(65536, 2000)
	out, took, rss := parseInChild(t, data)
	t.Logf("%d bytes: %v, peak RSS %.1f MB; %s", len(data), took, float64(rss)/1e6, strings.TrimSpace(out))
	want := fmt.Sprintf("error: trace too large: its samples need more than %d frame references (4 per byte of the file)", 4*len(data))
	if !strings.Contains(out, want) {
		t.Errorf("child printed %q, want %q", out, want)
	}
	if rss > 100<<20 && !memtest.Raced() {
		t.Errorf("peak RSS %d MB, want under 100 MB", rss>>20)
	}
	// The work bound is the refusal above and the memory bound; the time
	// is logged, not asserted: on a loaded machine it measures the load.
	// The same stack on a few threads loads, and is resolved once.
	p, _, err := Parse(deepStackTrace(65536, 3))
	if err != nil || len(p.Sample) != 3 || len(p.Sample[0].Location) != 65537 {
		t.Errorf("3 threads: err %v", err)
	}
}

// A stack whose every frame two methods cover in turn (a re-jitted method
// at the same address) is resolved again for each sample whose time
// crosses the re-jit; samples alternating across it would make the work
// depth x samples, and are refused past 4 lookups per byte of the file.
func TestAlternatingResolutionBounded(t *testing.T) {
	const depth, samples = 16384, 2000
	data := alternatingTrace(depth, samples, true)
	_, _, err := Parse(data)
	want := fmt.Sprintf("trace too large to resolve: more than %d frame lookups", max(1<<20, 4*len(data)))
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	// Samples on either side of the re-jit, not alternating, resolve twice.
	p, _, err := Parse(alternatingTrace(depth, samples, false))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int64{}
	for _, s := range p.Sample {
		names[s.Location[1].Line[0].Function.Name] += s.Value[0]
	}
	if names["A.Tier0"] != samples/2 || names["A.Tier1"] != samples/2 {
		t.Errorf("samples by leaf method %v", names)
	}
}

// Timestamps that overflow fail at their byte instead of wrapping into a
// negative duration.
func TestTimestampOverflow(t *testing.T) {
	// The uncompressed synthetic fixture, its third sample's timestamp
	// (2500) patched to 2^63.
	data := synthetic(false, 8)
	old := binary.LittleEndian.AppendUint64(nil, 2500)
	if bytes.Count(data, old) != 1 {
		t.Fatal("the fixture's timestamp 2500 is not one field")
	}
	_, err := Read(bytes.Replace(data, old, binary.LittleEndian.AppendUint64(nil, 1<<63), 1))
	if err == nil || !strings.Contains(err.Error(), "timestamp 9223372036854775808 does not fit a signed 64-bit integer") || !strings.Contains(err.Error(), "at byte ") {
		t.Errorf("uncompressed timestamp: %v", err)
	}

	// Compressed headers carry deltas, which may step back; one that
	// carries the timestamp past 2^63-1 is corruption. The writer encodes
	// the delta from 5 to MinInt64+4 as MaxInt64.
	w := newTraceWriter(true, 8, 1_000_000_000, 1_000_000)
	w.metadata(metaDef{idSample, providerSampleProfiler, eventThreadSample, ""})
	w.events(
		ev{meta: idSample, thread: 10, timestamp: 5, payload: samplePayload(SampleManaged)},
		ev{meta: idSample, thread: 10, timestamp: math.MinInt64 + 4, payload: samplePayload(SampleManaged)},
	)
	_, err = Read(w.end())
	if err == nil || !strings.Contains(err.Error(), "timestamp 5 plus delta 9223372036854775807 is not between 0 and 2^63-1") {
		t.Errorf("delta overflow: %v", err)
	}

	// 1 tick per second: the unpatched span of 2^62 ticks is 4.6e27 ns.
	w = newTraceWriter(true, 8, 1, 1_000_000)
	w.metadata(metaDef{idSample, providerSampleProfiler, eventThreadSample, ""})
	w.events(
		ev{meta: idSample, thread: 10, timestamp: 5, payload: samplePayload(SampleManaged)},
		ev{meta: idSample, thread: 10, timestamp: 5 + math.MaxInt64/2, payload: samplePayload(SampleManaged)},
	)
	_, err = Read(w.end())
	if err == nil || !strings.Contains(err.Error(), "ticks after the first event's at 1 ticks per second: more nanoseconds than a 64-bit integer holds") {
		t.Errorf("span overflow: %v", err)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "at byte ") {
		t.Errorf("span overflow without its byte: %v", err)
	}

	// A Trace built by hand (Read's intervals are int32) whose samples'
	// total time overflows.
	tr := &Trace{SamplingInterval: math.MaxInt64 / 2, Samples: make([]Sample, 3), Modules: map[uint64]string{}}
	if _, _, err := tr.Profile(); err == nil || !strings.Contains(err.Error(), "3 samples of 4611686018427387903 ns each: their total time overflows") {
		t.Errorf("sample total: %v", err)
	}
}

// alternatingTrace is a trace of samples of one stack depth frames deep,
// every frame a method re-jitted at the same address, the samples' times
// alternating across the re-jit, or the first half before it and the
// rest after.
func alternatingTrace(depth, samples int, alternate bool) []byte {
	w := newTraceWriter(true, 8, 1_000_000_000, 1_000_000)
	w.metadata(
		metaDef{idSample, providerSampleProfiler, eventThreadSample, ""},
		metaDef{idMethod, providerRuntime, eventMethodLoadVerbose, ""},
	)
	w.events(
		ev{meta: idMethod, thread: 1, timestamp: 100, payload: methodPayload(77, 0x1000, 0x100, "A", "Tier0")},
		ev{meta: idMethod, thread: 1, timestamp: 200, payload: methodPayload(77, 0x1000, 0x100, "A", "Tier1")},
	)
	stack := make([]uint64, depth)
	for i := range stack {
		stack[i] = 0x1010
	}
	w.stacks(1, stack)
	evs := make([]ev, samples)
	for i := range evs {
		at := int64(150 + 100*(2*i/samples))
		if alternate {
			at = int64(150 + 100*(i%2))
		}
		evs[i] = ev{meta: idSample, thread: 7, stack: 1, timestamp: at, payload: samplePayload(SampleManaged)}
	}
	w.events(evs...)
	return w.end()
}
