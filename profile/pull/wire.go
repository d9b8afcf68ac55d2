package pull

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Protobuf wire reading for the streaming pprof decoder (stream.go), with
// the semantics of pprof's own decoder (github.com/google/pprof/profile):
// varints of at most 10 bytes, wire types 0, 1, 2 and 5, unknown fields
// skipped, a known field of the wrong wire type an error. Positions are
// offsets into the whole decompressed profile, so an error says where.

// wireField is one decoded field: a varint or fixed value in u, or a
// length-delimited payload at data[s:e].
type wireField struct {
	num, typ int
	u        uint64
	s, e     int
}

// DecodeError is a protobuf the streaming decoder cannot read: what is
// wrong and the byte offset (in the decompressed profile) where.
type DecodeError struct {
	Offset int
	What   string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("pprof protobuf at byte %d: %s", e.Offset, e.What)
}

func decodeErr(off int, format string, args ...any) error {
	return &DecodeError{Offset: off, What: fmt.Sprintf(format, args...)}
}

// uvarint reads the varint at data[i:], as pprof does: at most 10 bytes,
// bits past 64 dropped. Varints of up to three bytes (every location id
// of a profile under two million locations) take the inlined path.
func uvarint(data []byte, i int) (uint64, int, bool) {
	if i+2 < len(data) {
		b0 := data[i]
		if b0 < 0x80 {
			return uint64(b0), i + 1, true
		}
		b1 := data[i+1]
		if b1 < 0x80 {
			return uint64(b0&0x7f) | uint64(b1)<<7, i + 2, true
		}
		if b2 := data[i+2]; b2 < 0x80 {
			return uint64(b0&0x7f) | uint64(b1&0x7f)<<7 | uint64(b2)<<14, i + 3, true
		}
	}
	return VarintSlow(data, i)
}

// VarintSlow reads any varint at data[i:], as uvarint does: the loop for
// one Varint3 leaves (past three bytes, or at a field's end). It is not
// inlined: the id loops that
// call it for the rare long varint keep their registers for the common
// path (framesPacked spilled a dozen values a frame with it inlined).
//
//go:noinline
func VarintSlow(data []byte, i int) (uint64, int, bool) {
	var u uint64
	for k := 0; k < 10; k++ {
		if i+k >= len(data) {
			return 0, i, false
		}
		c := data[i+k]
		u |= uint64(c&0x7f) << (7 * k)
		if c < 0x80 {
			return u, i + k + 1, true
		}
	}
	return 0, i, false
}

// next reads the field at *pos of data[:end] into f and moves *pos past it.
func next(data []byte, pos *int, end int, f *wireField) error {
	d := data[:end]
	// A key of one byte (fields 1-15) and a length of up to three are
	// read inline; uvarint is a call.
	var key uint64
	p := *pos
	if p < len(d) && d[p] < 0x80 {
		key, p = uint64(d[p]), p+1
	} else {
		var ok bool
		if key, p, ok = uvarint(d, p); !ok {
			return decodeErr(*pos, "bad varint")
		}
	}
	f.num, f.typ, f.u = int(key>>3), int(key&7), 0
	switch f.typ {
	case 0:
		var ok bool
		if f.u, p, ok = uvarint(d, p); !ok {
			return decodeErr(p, "bad varint")
		}
	case 1:
		if end-p < 8 {
			return decodeErr(p, "not enough data")
		}
		f.u = binary.LittleEndian.Uint64(d[p:])
		p += 8
	case 2:
		n, q := Varint3(d, p)
		if q == p {
			var ok bool
			if n, q, ok = uvarint(d, p); !ok {
				return decodeErr(p, "bad varint")
			}
		}
		if n > uint64(end-q) {
			return decodeErr(p, "too much data (a field of %d bytes, %d left)", n, end-q)
		}
		f.s, f.e = q, q+int(n)
		p = f.e
	case 5:
		if end-p < 4 {
			return decodeErr(p, "not enough data")
		}
		f.u = uint64(binary.LittleEndian.Uint32(d[p:]))
		p += 4
	default:
		return decodeErr(*pos, "unknown wire type %d", f.typ)
	}
	*pos = p
	return nil
}

// want checks a known field's wire type.
func (f *wireField) want(typ, at int) error {
	if f.typ != typ {
		return decodeErr(at, "field %d: wire type %d, want %d", f.num, f.typ, typ)
	}
	return nil
}

// varints calls fn with each value of a repeated integer field, packed
// (wire type 2) or not (0).
func (f *wireField) varints(data []byte, at int, fn func(uint64)) error {
	switch f.typ {
	case 0:
		fn(f.u)
		return nil
	case 2:
		for p := f.s; p < f.e; {
			u, q, ok := uvarint(data[:f.e], p)
			if !ok {
				return decodeErr(p, "bad varint in packed field %d", f.num)
			}
			fn(u)
			p = q
		}
		return nil
	}
	return decodeErr(at, "field %d: wire type %d, want 0 or 2", f.num, f.typ)
}

// Varint3 reads the varint at data[p:] when it has at most three bytes
// and data holds four from p (every location id of a profile of under
// two million locations, but one at a field's very end): q is past it,
// or p when it is not read, for VarintSlow to read. Small enough to be
// inlined in the id loops (sampleReader.readIDs, framesPacked), where
// uvarint is not.
func Varint3(data []byte, p int) (u uint64, q int) {
	if p+4 > len(data) {
		return 0, p
	}
	x := binary.LittleEndian.Uint32(data[p:])
	m := ^x & 0x808080 // the stop bits of the first three bytes
	if m == 0 {
		return 0, p
	}
	n := bits.TrailingZeros32(m) >> 3 // the varint's bytes less one
	v := x&0x7f | x>>1&0x3f80 | x>>2&0x1fc000
	return uint64(v & (1<<(7*n+7) - 1)), p + n + 1
}
