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

// BenchmarkPathological times Parse on the inputs its bounds are for
// (TestNestedEventsMemory, TestManyDeepLeavesRefused): events nested
// 11,000 deep, and a deep path with 5,000 leaves, refused.
//
//	go test ./profile/speedscope -run '^$' -bench Pathological -cpu 1
func BenchmarkPathological(b *testing.B) {
	nested := []byte(nestedEvents(11000))
	b.Run("nested", func(b *testing.B) {
		benchgen.Loop(b, int64(len(nested)), func() {
			if _, _, err := Parse(nested); err != nil {
				b.Fatal(err)
			}
		})
	})
	leaves := []byte(deepLeaves(2000, 5000))
	b.Run("leaves-refused", func(b *testing.B) {
		benchgen.Loop(b, int64(len(leaves)), func() {
			if _, _, err := Parse(leaves); err == nil {
				b.Fatal("not refused")
			}
		})
	})
}
