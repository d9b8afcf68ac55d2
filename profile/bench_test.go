package profile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := Parse("synth.pb.gz", data, 0); err != nil {
					b.Fatal(err)
				}
			}
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
