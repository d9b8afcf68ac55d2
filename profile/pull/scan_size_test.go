package pull

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/readertest"
	"github.com/profdiff/profdiff/profile/synth"
)

// samplesLast moves a profile's sample fields (2) after all its other
// top-level fields, keeping each field's bytes: the tables then come
// before the samples, as no writer here puts them but the format allows.
func samplesLast(t *testing.T, data []byte) []byte {
	t.Helper()
	var head, tail []byte
	var f wireField
	for pos := 0; pos < len(data); {
		at := pos
		if err := next(data, &pos, len(data), &f); err != nil {
			t.Fatal(err)
		}
		if f.num == 2 {
			tail = append(tail, data[at:pos]...)
		} else {
			head = append(head, data[at:pos]...)
		}
	}
	return append(head, tail...)
}

// scan makes the slices of the tables it records (mappings, locations,
// functions, strings) to their size, counted before it appends the
// first, so none is grown and copied: whether the samples come before
// the tables (as Go's runtime/pprof and pprof's encoder write them) or
// after, and the decoder reads the same profile either way.
func TestScanSizesTables(t *testing.T) {
	runtime.GC()
	var heap bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&heap, 0); err != nil {
		t.Fatal(err)
	}
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = 3000, 500
	var syn bytes.Buffer
	if err := synth.Generate(cfg).Write(&syn); err != nil {
		t.Fatal(err)
	}
	for name, gz := range map[string][]byte{"runtime/pprof heap": heap.Bytes(), "pprof encoder (synth)": syn.Bytes()} {
		data := readertest.Gunzip(t, gz)
		var ref *File
		for _, order := range []string{"as written", "samples last"} {
			b := data
			if order == "samples last" {
				b = samplesLast(t, data)
			}
			d := &File{src: name, data: b, markEvery: DefaultMarkEvery}
			if err := d.scan(); err != nil {
				t.Fatalf("%s, %s: %v", name, order, err)
			}
			if len(d.locRanges) == 0 || len(d.fnRanges) == 0 || len(d.strS) == 0 {
				t.Fatalf("%s, %s: %d locations, %d functions, %d strings: the test needs all three", name, order, len(d.locRanges), len(d.fnRanges), len(d.strS))
			}
			for table, lc := range map[string][2]int{
				"mappings": {len(d.mapRanges), cap(d.mapRanges)}, "locations": {len(d.locRanges), cap(d.locRanges)},
				"functions": {len(d.fnRanges), cap(d.fnRanges)}, "string starts": {len(d.strS), cap(d.strS)},
				"string ends": {len(d.strE), cap(d.strE)},
			} {
				if lc[0] != lc[1] {
					t.Errorf("%s, %s: %s: %d entries in a slice of capacity %d", name, order, table, lc[0], lc[1])
				}
			}
			if err := d.build(); err != nil {
				t.Fatalf("%s, %s: build: %v", name, order, err)
			}
			if ref == nil {
				ref = d
				continue
			}
			if len(d.locIDs) != len(ref.locIDs) || len(d.fnInfos) != len(ref.fnInfos) || d.samples != ref.samples {
				t.Errorf("%s: samples last: %d locations, %d functions, %d samples; as written %d, %d, %d",
					name, len(d.locIDs), len(d.fnInfos), d.samples, len(ref.locIDs), len(ref.fnInfos), ref.samples)
			}
			for i := range min(len(d.fnInfos), len(ref.fnInfos)) {
				if d.fnInfos[i].Raw != ref.fnInfos[i].Raw {
					t.Fatalf("%s: samples last: function %d is %q, as written %q", name, i, d.fnInfos[i].Raw, ref.fnInfos[i].Raw)
				}
			}
		}
	}
}
