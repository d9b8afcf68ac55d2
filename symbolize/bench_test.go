package symbolize

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// BenchmarkSymbolizePerfMap names 100,000 address-only locations from a
// perf map of 100,000 ranges (read, flattened and searched each time).
func BenchmarkSymbolizePerfMap(b *testing.B) {
	const n = 100_000
	var text strings.Builder
	for i := range n {
		fmt.Fprintf(&text, "%x 40 fn_%d\n", 0x10000+i*0x40, i)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "perf-9.map"), []byte(text.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		m := &pprofile.Mapping{ID: 1, File: "/tmp/perf-9.map"}
		p := &pprofile.Profile{SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}}, Mapping: []*pprofile.Mapping{m}}
		for i := range n {
			l := &pprofile.Location{ID: uint64(i + 1), Address: uint64(0x10000 + i*0x40 + 7), Mapping: m}
			p.Location = append(p.Location, l)
			p.Sample = append(p.Sample, &pprofile.Sample{Location: []*pprofile.Location{l}, Value: []int64{1}})
		}
		b.StartTimer()
		rep, err := Symbolize(p, Options{Paths: []string{dir}})
		if err != nil || rep.Mappings[0].Named != n {
			b.Fatalf("%v %+v", err, rep.Mappings)
		}
	}
}
