package nettrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"
)

// Limits on what a length field may claim. Every length is also checked
// against the bytes that remain before anything is allocated, so a corrupt
// file fails instead of allocating what a length field says.
const (
	maxStringUnits = 1 << 16 // UTF-16 code units in one string
	maxStackBytes  = 1 << 20 // one stack: 131072 frames of 8 bytes
	maxSPThreads   = 1 << 20 // threads in one sequence point
)

// reader decodes little-endian values from a byte slice. Its error is
// sticky: after the first failure every read returns zeros, and err says
// what failed and at which byte of the file.
type reader struct {
	b    []byte
	off  int // position in b
	base int // file offset of b[0], for error messages
	err  error
}

func (r *reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("at byte %d: %s", r.base+r.off, fmt.Sprintf(format, a...))
	}
}

func (r *reader) left() int { return len(r.b) - r.off }

func (r *reader) need(n int, what string) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > r.left() {
		r.fail("%s needs %d bytes, %d left", what, n, r.left())
		return false
	}
	return true
}

func (r *reader) u8(what string) uint8 {
	if !r.need(1, what) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) u16(what string) uint16 {
	if b := r.bytes(2, what); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if b := r.bytes(4, what); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if b := r.bytes(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) bytes(n int, what string) []byte {
	if !r.need(n, what) {
		return nil
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return v
}

func (r *reader) skip(n int, what string) { r.bytes(n, what) }

// uvarint reads a LEB128 value of at most bits bits (32 or 64).
func (r *reader) uvarint(bits int, what string) uint64 {
	var v uint64
	for shift := 0; ; shift += 7 {
		if shift >= bits+7 {
			r.fail("%s: varint longer than %d bits", what, bits)
			return 0
		}
		c := r.u8(what)
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

// utf16z reads a null-terminated UTF-16LE string.
func (r *reader) utf16z(what string) string {
	var units []uint16
	for {
		c := r.u16(what)
		if r.err != nil {
			return ""
		}
		if c == 0 {
			break
		}
		if len(units) >= maxStringUnits {
			r.fail("%s: string longer than %d characters", what, maxStringUnits)
			return ""
		}
		units = append(units, c)
	}
	return string(utf16.Decode(units))
}

// utf16zRaw returns the bytes of a null-terminated UTF-16LE string without
// decoding it (decodeUTF16 does that when the name is needed), and their
// file offset.
func (r *reader) utf16zRaw(what string) ([]byte, int) {
	if r.err != nil {
		return nil, 0
	}
	b := r.b[r.off:]
	for i := 0; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			if i/2 > maxStringUnits {
				r.fail("%s: string longer than %d characters", what, maxStringUnits)
				return nil, 0
			}
			off := r.base + r.off
			r.off += i + 2
			return b[:i:i], off
		}
	}
	r.fail("%s: string runs past the end of its event", what)
	return nil, 0
}

// decodeUTF16 decodes UTF-16LE bytes.
func decodeUTF16(b []byte) string {
	ascii := true
	for i := 1; i < len(b); i += 2 {
		if b[i] != 0 || b[i-1] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		s := make([]byte, len(b)/2)
		for i := range s {
			s[i] = b[2*i]
		}
		return string(s)
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(units))
}

// align4 skips padding up to the next 4-byte file offset.
func (r *reader) align4(what string) {
	if pad := (4 - (r.base+r.off)%4) % 4; pad > 0 {
		r.skip(pad, what+" alignment padding")
	}
}

// FastSerialization tags.
const (
	tagNullReference      = 1
	tagBeginPrivateObject = 5
	tagEndObject          = 6
)

// Magic strings.
var (
	magicNettrace = []byte("Nettrace")
	magicFastSer  = "!FastSerialization.1"
)

// ErrV6 is returned for the NetTrace V6 layout, written by `dotnet-trace
// collect-linux`; it is recognized but not read.
var ErrV6 = errors.New("nettrace V6")

// Version describes a file's layout: "4" or "5" style FastSerialization
// files (Trace object version 4; the V5 metadata tags are recognized in
// either), or the V6 layout.
type header struct {
	traceVersion int
	syncQPC      int64
	qpcFreq      int64
	pointerSize  int
	pid          int
	procs        int
	sampleRate   int64 // ExpectedCPUSamplingRate, nanoseconds between samples
}

// Looks reports whether data starts like a nettrace file (any version).
func Looks(data []byte) bool {
	return len(data) >= 12 && string(data[:8]) == string(magicNettrace)
}

// readStreamHeader checks the magic and the FastSerialization header, or
// reports V6.
func readStreamHeader(r *reader) error {
	if string(r.bytes(8, "magic")) != string(magicNettrace) {
		return errors.New("not a nettrace file (no \"Nettrace\" magic)")
	}
	n := r.u32("serialization header length")
	if r.err == nil && n == 0 {
		major := r.u32("V6 major version")
		minor := r.u32("V6 minor version")
		return fmt.Errorf("%w (format version %d.%d, written by `dotnet-trace collect-linux`): this layout is not supported; record with `dotnet-trace collect` (EventPipe SampleProfiler), which writes V4/V5", ErrV6, major, minor)
	}
	if r.err == nil && n != uint32(len(magicFastSer)) {
		return fmt.Errorf("unknown nettrace header: serialization header of %d bytes, want %d (%q)", n, len(magicFastSer), magicFastSer)
	}
	if s := string(r.bytes(int(n), "serialization header")); r.err == nil && s != magicFastSer {
		return fmt.Errorf("unknown nettrace header %q, want %q", s, magicFastSer)
	}
	return r.err
}

// objectType reads a serialized type: BeginPrivateObject, NullReference,
// version, minimum reader version, name, EndObject.
func readObjectType(r *reader) (name string, version, minReader int) {
	if t := r.u8("type tag"); r.err == nil && t != tagBeginPrivateObject {
		r.fail("object type: tag %d, want BeginPrivateObject (5)", t)
		return
	}
	if t := r.u8("type of type"); r.err == nil && t != tagNullReference {
		r.fail("object type: type-of-type tag %d, want NullReference (1)", t)
		return
	}
	version = int(int32(r.u32("type version")))
	minReader = int(int32(r.u32("type minimum reader version")))
	n := int(r.u32("type name length"))
	if r.err == nil && n > 256 {
		r.fail("object type name of %d bytes", n)
		return
	}
	name = string(r.bytes(n, "type name"))
	if t := r.u8("type end tag"); r.err == nil && t != tagEndObject {
		r.fail("object type %q: end tag %d, want EndObject (6)", name, t)
	}
	return
}

func readTraceObject(r *reader, version int) header {
	var h header
	h.traceVersion = version
	r.skip(16, "Trace SyncTimeUTC")
	h.syncQPC = int64(r.u64("Trace SyncTimeQPC"))
	h.qpcFreq = int64(r.u64("Trace QPCFrequency"))
	h.pointerSize = int(int32(r.u32("Trace PointerSize")))
	h.pid = int(int32(r.u32("Trace ProcessId")))
	h.procs = int(int32(r.u32("Trace NumberOfProcessors")))
	h.sampleRate = int64(int32(r.u32("Trace ExpectedCPUSamplingRate")))
	if r.err != nil {
		return h
	}
	if h.pointerSize != 4 && h.pointerSize != 8 {
		r.fail("Trace object: pointer size %d, want 4 or 8", h.pointerSize)
	}
	if h.qpcFreq <= 0 {
		r.fail("Trace object: timestamp frequency %d is not positive", h.qpcFreq)
	}
	return h
}
