package profile

import (
	"encoding/binary"
	"fmt"
)

// legacyLayout is the layout of a legacy binary CPU profile (gperftools'
// CPUPROFILE format, which Go's runtime/pprof also wrote before Go 1.9):
// words of 4 or 8 bytes in the writer's byte order; a header of five words
// (0, 3, 0 for native code or 1 for Java, the period in µs, 0); records of
// a count, a depth and that many addresses, up to an end-of-data record
// (0, 1, 0); then the process's memory map as text. The pprof library reads
// it; this is only what says whether a file is one, and whether it was
// cut, which the library does not tell (it fails, or returns the samples
// before the cut as the whole profile).
type legacyLayout struct {
	word  int
	order binary.ByteOrder
}

// legacyCPUHeader returns the layout of data's legacy CPU header, trying
// the word sizes and byte orders in the pprof library's order.
func legacyCPUHeader(data []byte) (legacyLayout, bool) {
	for _, l := range []legacyLayout{{4, binary.LittleEndian}, {4, binary.BigEndian}, {8, binary.LittleEndian}, {8, binary.BigEndian}} {
		if len(data) < 5*l.word {
			continue
		}
		w := func(i int) uint64 { return l.at(data, i*l.word) }
		if w(0) == 0 && w(1) == 3 && w(2) <= 1 && w(3) > 0 && w(4) == 0 {
			return l, true
		}
	}
	return legacyLayout{}, false
}

// at is the word at byte off of data.
func (l legacyLayout) at(data []byte, off int) uint64 {
	if l.word == 4 {
		return uint64(l.order.Uint32(data[off:]))
	}
	return l.order.Uint64(data[off:])
}

// legacyCut is where a legacy CPU profile's records stop: not at all
// (they reach their end-of-data record), between two records, or inside
// one (the end-of-data record's included).
type legacyCut int

const (
	legacyWhole legacyCut = iota
	legacyBetween
	legacyInside
)

// cut says where data's records stop short of the end-of-data record (a
// file cut short), and how; "" and legacyWhole when they reach it.
func (l legacyLayout) cut(data []byte) (string, legacyCut) {
	off := 5 * l.word
	for {
		start := off
		if off == len(data) {
			return fmt.Sprintf("the file ends at byte %d between two records, without the end-of-data record (a file cut short?): what came after is lost", len(data)), legacyBetween
		}
		if len(data)-off < 2*l.word {
			return fmt.Sprintf("the file ends at byte %d inside the record at byte %d, before the end-of-data record (a file cut short?)", len(data), start), legacyInside
		}
		count, depth := l.at(data, off), l.at(data, off+l.word)
		off += 2 * l.word
		if count == 0 && depth == 1 {
			if len(data)-off < l.word {
				return fmt.Sprintf("the file ends at byte %d inside the end-of-data record at byte %d (a file cut short?): the samples are whole, the memory map after them is lost", len(data), start), legacyInside
			}
			if l.at(data, off) == 0 {
				return "", legacyWhole
			}
		}
		if depth > uint64(len(data)-off)/uint64(l.word) {
			return fmt.Sprintf("the file ends at byte %d inside the record at byte %d, of %d addresses, before the end-of-data record (a file cut short?)", len(data), start, depth), legacyInside
		}
		off += int(depth) * l.word
	}
}
