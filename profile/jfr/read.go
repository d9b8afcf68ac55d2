package jfr

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf16"
)

// decoder reads the primitives of one chunk. Every read checks bounds and
// records the first error; later reads then return zero values, so callers
// check err once after a group of reads.
type decoder struct {
	b          []byte // the chunk
	pos        int
	compressed bool // integers are LEB128-style varints
	err        error
	base       int // the chunk's offset in the file, for error messages
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %s", d.base+d.pos, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) byte1() byte {
	if d.err != nil {
		return 0
	}
	if d.pos >= len(d.b) {
		d.fail("truncated")
		return 0
	}
	c := d.b[d.pos]
	d.pos++
	return c
}

func (d *decoder) raw(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.pos {
		d.fail("truncated: %d bytes wanted, %d left", n, len(d.b)-d.pos)
		return nil
	}
	s := d.b[d.pos : d.pos+n]
	d.pos += n
	return s
}

// varint reads the JDK's compressed integer: 7 bits a byte, low group first,
// the high bit set while more follow; a ninth byte gives all of bits 56..63.
func (d *decoder) varint() uint64 {
	var v uint64
	for i := 0; i < 8; i++ {
		c := d.byte1()
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	return v | uint64(d.byte1())<<56
}

// long reads an integer field of the given byte size (2, 4 or 8).
func (d *decoder) long(size int) int64 {
	if d.compressed {
		return int64(d.varint())
	}
	b := d.raw(size)
	switch len(b) {
	case 2:
		return int64(binary.BigEndian.Uint16(b))
	case 4:
		return int64(binary.BigEndian.Uint32(b))
	case 8:
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// length reads a count or length and bounds it by the bytes left, since
// every element takes at least one byte.
func (d *decoder) length() int {
	n := d.long(4)
	if d.err == nil && (n < 0 || n > int64(len(d.b)-d.pos)) {
		d.fail("length %d is more than the %d bytes left", n, len(d.b)-d.pos)
		return 0
	}
	return int(n)
}

// Encodings of a string's first byte.
const (
	strNull = iota
	strEmpty
	strPool
	strUTF8
	strChars
	strLatin1
)

// str reads a string; a pool reference comes back as ref with ok false.
func (d *decoder) str() (s string, ref int64, isRef bool) {
	switch enc := d.byte1(); enc {
	case strNull, strEmpty:
		return "", 0, false
	case strPool:
		return "", d.long(8), true
	case strUTF8:
		return string(d.raw(d.length())), 0, false
	case strChars:
		n := d.length()
		u := make([]uint16, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			u = append(u, uint16(d.long(2)))
		}
		return string(utf16.Decode(u)), 0, false
	case strLatin1:
		b := d.raw(d.length())
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), 0, false
	default:
		if d.err == nil {
			d.fail("unknown string encoding %d", enc)
		}
		return "", 0, false
	}
}

func (d *decoder) float(size int) float64 {
	b := d.raw(size)
	switch len(b) {
	case 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	case 8:
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	return 0
}
