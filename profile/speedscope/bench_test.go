package speedscope

import (
	"bytes"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/benchgen"
)

// BenchmarkParse measures Parse on one sampled profile of 20,000
// distinct synth stacks (15-45 Go frames each, about 5 MB of JSON), beside
// the floor of counting the commas of the same JSON.
//
//	go test ./profile/speedscope -run '^$' -bench Parse -cpu 1
func BenchmarkParse(b *testing.B) {
	data := benchgen.Speedscope(20_000)
	b.Run("floor", func(b *testing.B) {
		benchgen.Loop(b, int64(len(data)), func() {
			bytes.Count(data, []byte{','})
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
