package nettrace

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/readertest"
)

const (
	idSample = 1
	idMethod = 2
	idModule = 3
	idDCEnd  = 4
)

// synthetic writes a small trace: two threads, a method whose address is
// reused by another method halfway through (tiered compilation), a module,
// a rundown record, and samples before and after the reuse.
func synthetic(compressed bool, ptr int) []byte {
	w := newTraceWriter(compressed, ptr, 1_000_000_000, 1_000_000)
	w.metadata(
		metaDef{idSample, providerSampleProfiler, eventThreadSample, ""},
		metaDef{idMethod, providerRuntime, eventMethodLoadVerbose, ""},
		metaDef{idModule, providerRuntime, eventModuleLoad, ""},
		metaDef{idDCEnd, providerRundown, eventMethodUnloadVerbose, ""},
	)
	w.events(
		ev{meta: idModule, thread: 1, timestamp: 1000, payload: modulePayload(77, "/app/bin/Shop.Orders.dll")},
		ev{meta: idMethod, thread: 1, timestamp: 1100, payload: methodPayload(77, 0x1000, 0x100, "Shop.Orders.Cart", "Total")},
		ev{meta: idMethod, thread: 1, timestamp: 1100, payload: methodPayload(77, 0x2000, 0x100, "Shop.Orders.Program", "Main")},
	)
	w.stacks(1,
		[]uint64{0x1010, 0x2020},     // Cart.Total called from Main
		[]uint64{0x9999, 0x2020},     // an address no method covers
		[]uint64{0x3000 + 8, 0x2020}, // the rundown-only method
	)
	w.events(
		ev{meta: idSample, thread: 10, stack: 1, timestamp: 2000, payload: samplePayload(SampleManaged)},
		ev{meta: idSample, thread: 11, stack: 2, timestamp: 2000, payload: samplePayload(SampleExternal)},
		ev{meta: idSample, thread: 11, stack: 3, timestamp: 2500, payload: samplePayload(SampleExternal)},
		ev{meta: idSample, thread: 10, stack: 0, timestamp: 2600, payload: samplePayload(SampleError)},
	)
	w.sequencePoint(3000)
	// After the sequence point stack ids start over; 0x1000 now belongs to
	// a re-jitted method.
	w.events(ev{meta: idMethod, thread: 1, timestamp: 4000, payload: methodPayload(77, 0x1000, 0x80, "Shop.Orders.Cart", "TotalTier1")})
	w.stacks(1, []uint64{0x1010, 0x2020})
	w.events(
		ev{meta: idSample, thread: 10, stack: 1, timestamp: 5000, payload: samplePayload(SampleManaged)},
		ev{meta: idDCEnd, thread: 1, timestamp: 6000, payload: methodPayload(77, 0x3000, 0x40, "Shop.Orders.Cache", "Get")},
	)
	return w.end()
}

// stackNames returns each sample's frames, leaf first, as module!name, with
// its thread and value.
func stackNames(p *pprofile.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		var names []string
		for _, l := range s.Location {
			n := l.Line[0].Function.Name
			if l.Mapping != nil {
				n = l.Mapping.File + "!" + n
			}
			names = append(names, n)
		}
		out[s.Label["thread"][0]+" "+s.Label["sample"][0]+": "+strings.Join(names, ";")] += s.Value[1]
	}
	return out
}

func TestSyntheticTrace(t *testing.T) {
	for _, compressed := range []bool{true, false} {
		for _, ptr := range []int{8, 4} {
			data := synthetic(compressed, ptr)
			tr, err := Read(data)
			if err != nil {
				t.Fatalf("compressed=%v ptr=%d: %v", compressed, ptr, err)
			}
			if tr.PointerSize != ptr || tr.ProcessID != 4242 || tr.Processors != 8 || tr.SamplingInterval != 1_000_000 {
				t.Errorf("header %+v", tr)
			}
			st := tr.Stats
			if st.Events != 10 || st.Metadata != 4 || st.StackRecords != 4 || st.SamplesByType != [3]int{1, 2, 2} || st.Threads != 2 {
				t.Errorf("compressed=%v ptr=%d: stats %+v", compressed, ptr, st)
			}
			if st.ByEvent[providerSampleProfiler+"/0"] != 5 || st.ByEvent[providerRuntime+"/143"] != 3 {
				t.Errorf("by event %v", st.ByEvent)
			}
			p, warns, err := tr.Profile()
			if err != nil {
				t.Fatal(err)
			}
			if err := p.CheckValid(); err != nil {
				t.Fatal(err)
			}
			got := stackNames(p)
			want := map[string]int64{
				"10 managed: CPU_TIME;Shop.Orders!Shop.Orders.Cart.Total;Shop.Orders!Shop.Orders.Program.Main":            1_000_000,
				"10 managed: CPU_TIME;Shop.Orders!Shop.Orders.Cart.TotalTier1;Shop.Orders!Shop.Orders.Program.Main":       1_000_000,
				"11 external: UNMANAGED_CODE_TIME;?!0x9999;Shop.Orders!Shop.Orders.Program.Main":                          1_000_000,
				"11 external: UNMANAGED_CODE_TIME;Shop.Orders!Shop.Orders.Cache.Get;Shop.Orders!Shop.Orders.Program.Main": 1_000_000,
			}
			if len(got) != len(want) {
				t.Errorf("compressed=%v ptr=%d: samples\n%v\nwant\n%v", compressed, ptr, got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("compressed=%v ptr=%d: %q = %d, want %d (all: %v)", compressed, ptr, k, got[k], v, got)
				}
			}
			if p.DefaultSampleType != "wall" || p.Period != 1_000_000 || p.DurationNanos != 5000 {
				t.Errorf("profile header: default %q period %d duration %d", p.DefaultSampleType, p.Period, p.DurationNanos)
			}
			if len(warns) != 2 || !strings.Contains(strings.Join(warns, "\n"), "1 ThreadSample event(s) of type Error") {
				t.Errorf("warnings %q", warns)
			}
		}
	}
}

func TestV6AndOtherHeadersFailClearly(t *testing.T) {
	v6 := append([]byte("Nettrace"), 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0)
	_, err := Read(v6)
	if !errors.Is(err, ErrV6) || !strings.Contains(err.Error(), "collect-linux") || !strings.Contains(err.Error(), "6.0") {
		t.Errorf("V6: %v", err)
	}
	netperf := newTraceWriter(true, 8, 1e9, 1e6).b
	netperf[8+4+20+3] = 3 // Trace object version 3
	if _, err := Read(netperf); err == nil || !strings.Contains(err.Error(), "netperf") {
		t.Errorf("V3: %v", err)
	}
	for name, data := range map[string][]byte{
		"bad serialization header": append([]byte("Nettrace"), 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'),
		"no trace object":          append(append([]byte("Nettrace\x14\x00\x00\x00"), magicFastSer...), tagNullReference),
		"truncated":                synthetic(true, 8)[:300],
		"unknown object":           append(newTraceWriter(true, 8, 1e9, 1e6).b, tagBeginPrivateObject, tagBeginPrivateObject, tagNullReference, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 'F', 'o', 'o', tagEndObject),
	} {
		if _, err := Read(data); err == nil {
			t.Errorf("%s: read without error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// Cut short between blocks: read, with a warning.
	full := synthetic(true, 8)
	tr, err := Read(full[:len(full)-1])
	if err != nil || len(tr.Warnings) == 0 || !strings.Contains(tr.Warnings[0], "cut short") {
		t.Errorf("missing end tag: %v, %q", err, tr.Warnings)
	}
}

// Length fields that claim more than the file holds fail before anything
// is allocated.
func TestHugeLengthFields(t *testing.T) {
	w := newTraceWriter(true, 8, 1e9, 1e6)
	w.block("StackBlock", func(int) []byte {
		return []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 8, 0, 0, 0} // 2^31-1 stacks
	})
	if _, err := Read(w.end()); err == nil || !strings.Contains(err.Error(), "cannot fit") {
		t.Errorf("huge stack count: %v", err)
	}
	w = newTraceWriter(true, 8, 1e9, 1e6)
	w.block("StackBlock", func(int) []byte {
		return []byte{1, 0, 0, 0, 1, 0, 0, 0, 0xf8, 0xff, 0xff, 0x7f} // one stack of 2 GiB
	})
	if _, err := Read(w.end()); err == nil || !strings.Contains(err.Error(), "stack 1") {
		t.Errorf("huge stack: %v", err)
	}
	w = newTraceWriter(true, 8, 1e9, 1e6)
	w.b = append(w.b, tagBeginPrivateObject, tagBeginPrivateObject, tagNullReference, 2, 0, 0, 0, 2, 0, 0, 0)
	w.u32(0xfffffff0) // a type name of 4 GiB
	if _, err := Read(w.end()); err == nil {
		t.Error("huge type name: no error")
	}
	w = newTraceWriter(true, 8, 1e9, 1e6)
	w.block("EventBlock", func(int) []byte {
		return append(make([]byte, 20), 0x80, 0xff, 0xff, 0xff, 0xff, 0x0f) // payload size 2^32-1
	})
	if _, err := Read(w.end()); err == nil {
		t.Error("huge payload: no error")
	}
}

// corpusTraces returns the unzipped .nettrace files of the corpus by base
// name (of the zip), or skips.
func corpusTraces(tb testing.TB) map[string][]byte {
	tb.Helper()
	dir := corpus.Need(tb)
	zips, _ := filepath.Glob(filepath.Join(dir, "perfview", "*nettrace*.zip"))
	if len(zips) == 0 {
		tb.Skip("no nettrace files in the corpus")
	}
	out := map[string][]byte{}
	for _, z := range zips {
		zr, err := zip.OpenReader(z)
		if err != nil {
			tb.Fatal(err)
		}
		if len(zr.File) != 1 {
			tb.Fatalf("%s: %d files", z, len(zr.File))
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			tb.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		zr.Close()
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.Base(z)] = data
	}
	return out
}

// traceEventNames maps this reader's Provider/ID keys to TraceEvent's
// Provider/Task/Opcode names for the events of the corpus files PerfView
// has baselines for (from ClrEtwAll.man's event ids).
var traceEventNames = map[string]string{
	providerSampleProfiler + "/0":                providerSampleProfiler + "/Thread/Sample",
	providerRuntime + "/1":                       providerRuntime + "/GC/Start",
	providerRuntime + "/2":                       providerRuntime + "/GC/Stop",
	providerRuntime + "/3":                       providerRuntime + "/GC/RestartEEStop",
	providerRuntime + "/4":                       providerRuntime + "/GC/HeapStats",
	providerRuntime + "/7":                       providerRuntime + "/GC/RestartEEStart",
	providerRuntime + "/8":                       providerRuntime + "/GC/SuspendEEStop",
	providerRuntime + "/9":                       providerRuntime + "/GC/SuspendEEStart",
	providerRuntime + "/10":                      providerRuntime + "/GC/AllocationTick",
	providerRuntime + "/13":                      providerRuntime + "/GC/FinalizersStop",
	providerRuntime + "/14":                      providerRuntime + "/GC/FinalizersStart",
	providerRuntime + "/22":                      providerRuntime + "/GC/BulkMovedObjectRanges",
	providerRuntime + "/23":                      providerRuntime + "/GC/GenerationRange",
	providerRuntime + "/33":                      providerRuntime + "/GC/PinObjectAtGCTime",
	providerRuntime + "/35":                      providerRuntime + "/GC/Triggered",
	providerRuntime + "/50":                      providerRuntime + "/ThreadPoolWorkerThread/Start",
	providerRuntime + "/54":                      providerRuntime + "/ThreadPoolWorkerThreadAdjustment/Sample",
	providerRuntime + "/55":                      providerRuntime + "/ThreadPoolWorkerThreadAdjustment/Adjustment",
	providerRuntime + "/56":                      providerRuntime + "/ThreadPoolWorkerThreadAdjustment/Stats",
	providerRuntime + "/57":                      providerRuntime + "/ThreadPoolWorkerThread/Wait",
	providerRuntime + "/61":                      providerRuntime + "/ThreadPool/Enqueue",
	providerRuntime + "/62":                      providerRuntime + "/ThreadPool/Dequeue",
	providerRuntime + "/81":                      providerRuntime + "/Contention/Start",
	providerRuntime + "/85":                      providerRuntime + "/AppDomainResourceManagement/ThreadCreated",
	providerRuntime + "/91":                      providerRuntime + "/Contention/Stop",
	providerRuntime + "/143":                     providerRuntime + "/Method/LoadVerbose",
	providerRuntime + "/145":                     providerRuntime + "/Method/JittingStarted",
	providerRuntime + "/151":                     providerRuntime + "/Loader/DomainModuleLoad",
	providerRuntime + "/152":                     providerRuntime + "/Loader/ModuleLoad",
	providerRuntime + "/154":                     providerRuntime + "/Loader/AssemblyLoad",
	providerRuntime + "/159":                     providerRuntime + "/Method/R2RGetEntryPoint",
	providerRuntime + "/200":                     providerRuntime + "/GC", // IncreaseMemoryPressure: task GC, no opcode name
	providerRuntime + "/201":                     providerRuntime + "/GC", // DecreaseMemoryPressure
	providerRuntime + "/202":                     providerRuntime + "/GC/MarkWithType",
	providerRuntime + "/204":                     providerRuntime + "/GC/PerHeapHistory",
	providerRuntime + "/205":                     providerRuntime + "/GC/GlobalHeapHistory",
	"Microsoft-Windows-DotNETRuntimePrivate/199": "Microsoft-Windows-DotNETRuntimePrivate/GC/PinPlugAtGCTime",
	providerRundown + "/146":                     providerRundown + "/Method/DCStopComplete",
	providerRundown + "/148":                     providerRundown + "/Method/DCStopInit",
	providerRundown + "/152":                     providerRundown + "/Loader/DomainModuleDCStop",
	providerRundown + "/154":                     providerRundown + "/Loader/ModuleDCStop",
	providerRundown + "/156":                     providerRundown + "/Loader/AssemblyDCStop",
	providerRundown + "/158":                     providerRundown + "/Loader/AppDomainDCStop",
	providerRundown + "/187":                     providerRundown + "/Runtime/Start",
	providerRundown + "/300":                     providerRundown + "/ExecutionCheckpointRundown/ExecutionCheckpointDCEnd",
	"Microsoft-DotNETCore-EventPipe/ProcessInfo": "Microsoft-DotNETCore-EventPipe/ProcessInfo",
	"TestEventSource0/TestEvent1":                "TestEventSource0/TestEvent1",
	"TestEventSource0/TestEvent2":                "TestEventSource0/TestEvent2",
	"TestEventSource0/TestEvent3":                "TestEventSource0/TestEvent3/24",
}

// bookkeeping are the events TraceLog keeps out of its event list (and so
// out of PerfView's baselines): IL-to-native maps and the rundown's method
// records, used only to resolve symbols.
var bookkeeping = map[string]bool{
	providerRuntime + "/190": true, // MethodILToNativeMap
	providerRundown + "/144": true, // MethodDCEndVerbose
	providerRundown + "/150": true, // MethodDCEndILToNativeMap
}

// Every corpus trace reads; for the three with PerfView baselines, the
// event counts equal PerfView's, event for event; the header fields equal
// what PerfView's header test asserts.
func TestCorpusMatchesPerfViewBaselines(t *testing.T) {
	traces := corpusTraces(t)
	for name, data := range traces {
		tr, err := Read(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		base, ok := perfviewBaselines[name]
		if !ok {
			t.Errorf("%s: not in perfviewBaselines", name)
			continue
		}
		if len(base.EventCounts) == 0 {
			t.Logf("%s: no PerfView baseline; %d events, samples by type %v, %d threads", name, tr.Stats.Events, tr.Stats.SamplesByType, tr.Stats.Threads)
			continue
		}
		got := map[string]int{}
		for k, n := range tr.Stats.ByEvent {
			if bookkeeping[k] {
				continue
			}
			te, ok := traceEventNames[k]
			if !ok {
				t.Errorf("%s: event %s (%d) has no TraceEvent name in the test's table", name, k, n)
				continue
			}
			got[te] += n
		}
		for k, want := range base.EventCounts {
			if got[k] != want {
				t.Errorf("%s: %s = %d, PerfView's baseline says %d", name, k, got[k], want)
			}
		}
		for k, n := range got {
			if _, ok := base.EventCounts[k]; !ok {
				t.Errorf("%s: %s (%d events) is not in PerfView's baseline", name, k, n)
			}
		}
		t.Logf("%s: %d events match PerfView's baseline (%d kinds)", name, tr.Stats.Events, len(base.EventCounts))
	}
	obj := traces["src__TraceEvent__TraceEvent.Tests__inputs__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"]
	if obj == nil {
		t.Fatal("objver4 missing from the corpus")
	}
	tr, _ := Read(obj)
	if tr.PointerSize != 8 || tr.ProcessID != 10064 || tr.Processors != 4 || tr.SamplingInterval != 1000000 || tr.SyncQPC != 100935252313 || tr.QPCFreq != 3124099 {
		t.Errorf("objver4 header %+v, want PerfView's: pointer 8, pid 10064, 4 processors, rate 1000000, QPC 100935252313 at 3124099 Hz", tr)
	}
}

// The NoNativeStacks traces resolve every frame, and their samples add up.
func TestCorpusSamplesResolve(t *testing.T) {
	traces := corpusTraces(t)
	for _, c := range []struct {
		file              string
		external, managed int
	}{
		{"src__TraceEvent__TraceEvent.Tests__inputs__speedscope__mixed_managed_external_samples.nettrace.zip", 2427, 3904},
		{"src__TraceEvent__TraceEvent.Tests__inputs__speedscope__only_managed_samples.nettrace.zip", 0, 7423},
	} {
		data := traces[c.file]
		if data == nil {
			t.Fatalf("%s missing", c.file)
		}
		p, warns, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		var ext, man, unresolved int64
		for _, s := range p.Sample {
			switch s.Label["sample"][0] {
			case "external":
				ext += s.Value[0]
			case "managed":
				man += s.Value[0]
			}
			if s.Value[1] != s.Value[0]*p.Period {
				t.Errorf("%s: sample value %d ns for %d samples at %d ns", c.file, s.Value[1], s.Value[0], p.Period)
			}
			for _, l := range s.Location {
				if strings.HasPrefix(l.Line[0].Function.Name, "?!") {
					unresolved++
				}
			}
		}
		if ext != int64(c.external) || man != int64(c.managed) || unresolved != 0 || len(warns) != 0 {
			t.Errorf("%s: %d external, %d managed, %d unresolved frames, warnings %q; want %d, %d, 0, none", c.file, ext, man, unresolved, warns, c.external, c.managed)
		}
	}
}

// FuzzRead: no input panics, and whatever reads builds a valid profile.
// The seeds are the synthetic traces and the corpus's small traces.
func FuzzRead(f *testing.F) {
	for _, c := range []bool{true, false} {
		for _, ptr := range []int{4, 8} {
			f.Add(synthetic(c, ptr))
		}
	}
	if dir := corpus.Dir(); dir != "" {
		for _, name := range []string{"eventpipe-dotnetcore6.0-win-x64-executioncheckpoints", "eventpipe-dotnetcore5.0-win-x64-arraytypes"} {
			z, err := zip.OpenReader(filepath.Join(dir, "perfview", "src__TraceEvent__TraceEvent.Tests__inputs__"+name+".nettrace.zip"))
			if err != nil {
				continue
			}
			if rc, err := z.File[0].Open(); err == nil {
				if data, err := io.ReadAll(rc); err == nil {
					f.Add(data)
				}
				rc.Close()
			}
			z.Close()
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr *Trace
		var err error
		readertest.BoundedAlloc(t, "Read", len(data), func() { tr, err = Read(data) })
		if err != nil {
			readertest.NotRecovered(t, "Read", err)
			return
		}
		p, _, err := tr.Profile()
		if err != nil {
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile from a trace that read: %v", err)
		}
	})
}

// FuzzEventHeader: the compressed header decoder never reads past its
// input, never panics, and its varints stay within their widths.
func FuzzEventHeader(f *testing.F) {
	f.Add([]byte{0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38})
	f.Add([]byte{0x8f, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 2, 3})
	f.Add(binary.AppendUvarint([]byte{1 | 4 | 8 | 128}, 1<<40))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, compressed := range []bool{true, false} {
			r := &reader{b: data}
			var h eventHeader
			for i := 0; i < 4 && r.err == nil && r.left() > 0; i++ {
				if compressed {
					decodeCompressed(r, &h)
				} else {
					h = decodeUncompressed(r)
				}
			}
			if r.off > len(data) {
				t.Fatalf("read %d bytes of %d", r.off, len(data))
			}
		}
	})
}

// BenchmarkReadHeartRateMonitor reads the corpus's 29 MB trace (already in
// memory) into a profile; BenchmarkReadFileHeartRateMonitor only reads the
// file from disk, the yardstick the issue sets.
func BenchmarkReadHeartRateMonitor(b *testing.B) {
	data := heartRate(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFileHeartRateMonitor(b *testing.B) {
	data := heartRate(b)
	path := filepath.Join(b.TempDir(), "HeartRateMonitor.nettrace")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d, err := os.ReadFile(path); err != nil || !bytes.Equal(d[:8], magicNettrace) {
			b.Fatal(err)
		}
	}
}

func heartRate(b *testing.B) []byte {
	b.Helper()
	for name, data := range corpusTraces(b) {
		if strings.Contains(name, "HeartRateMonitor") {
			return data
		}
	}
	b.Skip("no HeartRateMonitor trace in the corpus")
	return nil
}
