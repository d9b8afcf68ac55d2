package profile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/benchgen"
	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/synth"
)

// benchSynthGz returns a synthetic gzipped Go CPU profile (15-45 frames per
// stack, see package synth).
func benchSynthGz(b *testing.B, stacks int) []byte {
	b.Helper()
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = stacks, max(1000, stacks/10)
	var buf bytes.Buffer
	if err := synth.Write(&buf, cfg); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

var benchSynthSizes = []int{20_000, 200_000}

// BenchmarkParse measures gunzip + protobuf decoding + validation:
// go test ./profile -run '^$' -bench Parse -benchmem
func BenchmarkParse(b *testing.B) {
	for _, n := range benchSynthSizes {
		b.Run(fmt.Sprintf("stacks=%d", n), func(b *testing.B) {
			data := benchSynthGz(b, n)
			benchgen.Loop(b, int64(len(data)), func() {
				if _, err := Parse("synth.pb.gz", data, 0); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkLoad adds reading the file and dropping profiler samples.
func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSynthSizes {
		b.Run(fmt.Sprintf("stacks=%d", n), func(b *testing.B) {
			name := filepath.Join(b.TempDir(), "synth.pb.gz")
			if err := os.WriteFile(name, benchSynthGz(b, n), 0o644); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := Load(context.Background(), name, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchFloor measures the cheapest pass over data, counting its lines
// (bytes.Count, vectorized): the floor a reader's MB/s is compared with,
// taken in the same run, since the machine's speed varies with its load.
func benchFloor(b *testing.B, data []byte) {
	benchgen.Loop(b, int64(len(data)), func() {
		if bytes.Count(data, []byte{'\n'}) == 0 {
			b.Fatal("no lines")
		}
	})
}

// BenchmarkFolded measures ParseFolded, beside the floor of counting the
// lines of the same text, on: synth, 10,000 distinct synth stacks (15-45
// Go frames each, about 12 MB); and corpus, the shared corpus's collapsed
// vert.x perf capture (JVM frames; stacks repeat) replicated to 16 MiB
// (skipped without the corpus).
//
//	go test ./profile -run '^$' -bench Folded -cpu 1
func BenchmarkFolded(b *testing.B) {
	inputs := []struct {
		name string
		data func(b *testing.B) []byte
	}{
		{"synth", func(*testing.B) []byte { return benchgen.Folded(10_000) }},
		{"corpus", func(b *testing.B) []byte {
			data, err := os.ReadFile(filepath.Join(corpus.Need(b), "speedscope", "sample__profiles__stackcollapse__perf-vertx-stacks-01-collapsed-all.txt"))
			if err != nil {
				b.Skip(err)
			}
			return benchgen.Replicate(data, 16<<20, "")
		}},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			data := in.data(b)
			b.Run("floor", func(b *testing.B) { benchFloor(b, data) })
			b.Run("parse", func(b *testing.B) {
				benchgen.Loop(b, int64(len(data)), func() {
					if _, _, err := ParseFolded(data); err != nil {
						b.Fatal(err)
					}
				})
			})
		})
	}
}
