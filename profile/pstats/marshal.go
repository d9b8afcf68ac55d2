package pstats

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// Python's marshal format, for exactly the types a pstats file holds (see
// Python's Python/marshal.c): dicts, tuples, ints (small and long),
// binary floats, strings in their five encodings, and references to
// objects written before (FLAG_REF on an object, 'r' to refer to it).
// Anything else is an error naming the type code and its offset.
const (
	typeNull        = '0'
	typeInt         = 'i'
	typeLong        = 'l'
	typeFloat       = 'g' // TYPE_BINARY_FLOAT
	typeUnicode     = 'u'
	typeInterned    = 't'
	typeASCII       = 'a'
	typeASCIIIntern = 'A'
	typeShortASCII  = 'z'
	typeShortIntern = 'Z'
	typeTuple       = '('
	typeSmallTuple  = ')'
	typeDict        = '{'
	typeRef         = 'r'
	typeCode        = 'c'
	flagRef         = 0x80
)

// maxNesting bounds how deep values nest: a pstats file nests four deep
// (the stats dict, a value tuple, its callers dict, a caller's tuple).
const maxNesting = 8

// dict is a marshalled dict, its items in file order.
type dict struct{ keys, vals []any }

// decoder reads marshalled values; a value is an int64, a float64, a
// string, a []any (tuple) or a *dict.
type decoder struct {
	data []byte
	off  int
	refs []any
}

func (d *decoder) fail(at int, format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrFormat, at, fmt.Sprintf(format, args...))
}

// need fails unless n more bytes follow d.off: the value that starts
// there runs past the end of the file.
func (d *decoder) need(n int) error {
	if n < 0 || len(d.data)-d.off < n {
		return d.fail(d.off, "the file ends at byte %d, inside a %d-byte value that starts here (a file cut short?)", len(d.data), n)
	}
	return nil
}

func (d *decoder) u32() (int64, error) {
	if err := d.need(4); err != nil {
		return 0, err
	}
	v := int64(int32(binary.LittleEndian.Uint32(d.data[d.off:])))
	d.off += 4
	return v, nil
}

// length reads a 4-byte length, which must be non-negative and at most
// the bytes left (every element takes one byte at least).
func (d *decoder) length(at int) (int, error) {
	n, err := d.u32()
	if err == nil && (n < 0 || n > int64(len(d.data)-d.off)) {
		err = d.fail(at, "length %d out of range", n)
	}
	return int(n), err
}

// value reads one value.
func (d *decoder) value(depth int) (any, error) {
	at := d.off
	if err := d.need(1); err != nil {
		return nil, err
	}
	code, flag := d.data[d.off]&^flagRef, d.data[d.off]&flagRef != 0
	d.off++
	if depth > maxNesting {
		return nil, d.fail(at, "values nested deeper than %d", maxNesting)
	}
	ref := -1
	if flag { // the object is numbered before its contents are read
		ref = len(d.refs)
		d.refs = append(d.refs, nil)
	}
	var v any
	var err error
	switch code {
	case typeInt:
		v, err = d.u32()
	case typeLong:
		v, err = d.long(at)
	case typeFloat:
		if err = d.need(8); err == nil {
			v = math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.off:]))
			d.off += 8
		}
	case typeUnicode, typeInterned, typeASCII, typeASCIIIntern, typeShortASCII, typeShortIntern:
		v, err = d.str(at, code)
	case typeTuple, typeSmallTuple:
		var n int
		if code == typeSmallTuple {
			if err = d.need(1); err == nil {
				n = int(d.data[d.off])
				d.off++
			}
		} else {
			n, err = d.length(at)
		}
		if err != nil {
			return nil, err
		}
		t := make([]any, n)
		if ref >= 0 {
			d.refs[ref] = t
		}
		for i := range t {
			if t[i], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		v = t
	case typeDict:
		m := &dict{}
		if ref >= 0 {
			d.refs[ref] = m
		}
		for {
			if err = d.need(1); err != nil {
				return nil, err
			}
			if d.data[d.off] == typeNull {
				d.off++
				break
			}
			k, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			val, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m.keys = append(m.keys, k)
			m.vals = append(m.vals, val)
		}
		v = m
	case typeRef:
		var i int64
		if i, err = d.u32(); err == nil {
			if i < 0 || i >= int64(len(d.refs)) || d.refs[i] == nil {
				return nil, d.fail(at, "reference %d to no object read before", i)
			}
			v = d.refs[i]
		}
	case typeCode:
		return nil, fmt.Errorf("%w: at byte %d: a code object: %w", ErrFormat, at, ErrProfileModule)
	default:
		return nil, d.fail(at, "marshal type %q, which a pstats file does not hold", rune(code))
	}
	if err != nil {
		return nil, err
	}
	if ref >= 0 {
		d.refs[ref] = v
	}
	return v, nil
}

// long reads a TYPE_LONG: a signed digit count, then 15-bit digits, least
// significant first. Values beyond an int64 are an error.
func (d *decoder) long(at int) (int64, error) {
	n, err := d.u32()
	if err != nil {
		return 0, err
	}
	neg := n < 0
	if neg {
		n = -n
	}
	if n > 4 { // 4 digits are 60 bits
		return 0, d.fail(at, "an integer of %d digits, beyond 64 bits", n)
	}
	if err := d.need(int(2 * n)); err != nil {
		return 0, err
	}
	var v int64
	for i := int(n) - 1; i >= 0; i-- {
		digit := int64(binary.LittleEndian.Uint16(d.data[d.off+2*i:]))
		if digit >= 1<<15 {
			return 0, d.fail(at, "an integer digit out of range")
		}
		v = v<<15 | digit
	}
	d.off += int(2 * n)
	if neg {
		v = -v
	}
	return v, nil
}

func (d *decoder) str(at int, code byte) (string, error) {
	var n int
	var err error
	if code == typeShortASCII || code == typeShortIntern {
		if err = d.need(1); err != nil {
			return "", err
		}
		n = int(d.data[d.off])
		d.off++
	} else if n, err = d.length(at); err != nil {
		return "", err
	}
	if err := d.need(n); err != nil {
		return "", err
	}
	s := string(d.data[d.off : d.off+n])
	d.off += n
	if !utf8.ValidString(s) {
		// Python writes lone surrogates with surrogatepass; keep them
		// readable rather than failing the file.
		s = string([]rune(s))
	}
	return s, nil
}
