package jfr

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/benchgen"
	"github.com/profdiff/profdiff/profile/internal/corpus"
)

// BenchmarkParse measures Parse on the shared corpus's heavy.jfr (a real
// JDK recording, 350 KB, one chunk) repeated to 16 MiB: a recording of
// many chunks, as a long or rotated recording is (skipped without the
// corpus). Beside it is the floor of counting the zero bytes.
//
//	go test ./profile/jfr -run '^$' -bench Parse -cpu 1
func BenchmarkParse(b *testing.B) {
	one, err := os.ReadFile(filepath.Join(corpus.Need(b), "speedscope", "sample__profiles__java-flight-recorder__heavy.jfr"))
	if err != nil {
		b.Skip(err)
	}
	data := benchgen.Replicate(one, 16<<20, "")
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
}
