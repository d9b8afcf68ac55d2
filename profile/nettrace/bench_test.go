package nettrace

import (
	"archive/zip"
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/benchgen"
	"github.com/profdiff/profdiff/profile/internal/corpus"
)

// benchTrace writes a trace of the distinct stacks of benchgen.Stacks(n):
// every function a jitted method of one module (256 bytes of code each),
// every stack a StackBlock entry of its return addresses, each sample a
// managed ThreadSample of one of 8 threads, in blocks of 1,000.
func benchTrace(n int) []byte {
	stacks, counts := benchgen.Stacks(n)
	w := newTraceWriter(true, 8, 1_000_000_000, 1_000_000)
	w.metadata(
		metaDef{idSample, providerSampleProfiler, eventThreadSample, ""},
		metaDef{idMethod, providerRuntime, eventMethodLoadVerbose, ""},
		metaDef{idModule, providerRuntime, eventModuleLoad, ""},
	)
	addr := func(fn uint64) uint64 { return 0x7f00_0000_0000 + fn<<8 }
	evs := []ev{{meta: idModule, thread: 1, timestamp: 1000, payload: modulePayload(77, "/app/bin/Server.dll")}}
	seen := map[uint64]bool{}
	for _, st := range stacks {
		for _, l := range st {
			fn := l.Line[len(l.Line)-1].Function
			if !seen[fn.ID] {
				seen[fn.ID] = true
				evs = append(evs, ev{meta: idMethod, thread: 1, timestamp: 1100, payload: methodPayload(77, addr(fn.ID), 0x100, "Server", fn.Name)})
			}
		}
	}
	w.events(evs...)
	ts := int64(2000)
	for first := 0; first < len(stacks); first += 1000 {
		batch := stacks[first:min(first+1000, len(stacks))]
		ips := make([][]uint64, len(batch))
		evs = evs[:0]
		for i, st := range batch {
			for j := len(st) - 1; j >= 0; j-- { // leaf first
				ips[i] = append(ips[i], addr(st[j].Line[len(st[j].Line)-1].Function.ID)+0x10)
			}
			for range counts[first+i] {
				ts += 1000
				evs = append(evs, ev{meta: idSample, thread: uint64(10 + i%8), stack: uint32(first + i + 1), timestamp: ts, payload: samplePayload(SampleManaged)})
			}
		}
		w.stacks(uint32(first+1), ips...)
		w.events(evs...)
	}
	return w.end()
}

// BenchmarkParse measures Parse on: synth, a trace of 20,000 distinct Go
// stacks as jitted .NET methods (see benchTrace); and corpus, the largest
// EventPipe trace of the shared corpus, a real dotnet-trace recording
// (skipped without the corpus). Beside each is the floor of counting the
// trace's zero bytes.
//
//	go test ./profile/nettrace -run '^$' -bench Parse -cpu 1
func BenchmarkParse(b *testing.B) {
	inputs := []struct {
		name string
		data func(b *testing.B) []byte
	}{
		{"synth", func(*testing.B) []byte { return benchTrace(20_000) }},
		{"corpus", func(b *testing.B) []byte {
			return unzipped(b, filepath.Join(corpus.Need(b), "perfview", "src__TraceEvent__TraceEvent.Tests__inputs__speedscope__VoiceMemo.23092.nettrace.zip"))
		}},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			data := in.data(b)
			b.Run("floor", func(b *testing.B) {
				benchgen.Loop(b, int64(len(data)), func() {
					bytes.Count(data, []byte{0})
				})
			})
			b.Run("parse", func(b *testing.B) {
				benchgen.Loop(b, int64(len(data)), func() {
					if _, _, err := Parse(data); err != nil {
						b.Fatal(err)
					}
				})
			})
		})
	}
}

// unzipped returns the one member of a zip archive.
func unzipped(b *testing.B, name string) []byte {
	z, err := zip.OpenReader(name)
	if err != nil {
		b.Skip(err)
	}
	defer z.Close()
	f, err := z.File[0].Open()
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkPathological times Parse on the trace whose work its lookup
// bound is for (TestAlternatingResolutionBounded): 2,000 samples of a
// 16,384-frame stack alternating across a re-jit, refused.
//
//	go test ./profile/nettrace -run '^$' -bench Pathological -cpu 1
func BenchmarkPathological(b *testing.B) {
	data := alternatingTrace(16384, 2000, true)
	benchgen.Loop(b, int64(len(data)), func() {
		if _, _, err := Parse(data); err == nil {
			b.Fatal("not refused")
		}
	})
}
