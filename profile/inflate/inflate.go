// Package inflate decompresses a whole gzip member held in memory: DEFLATE
// (RFC 1951) in the gzip container (RFC 1952), into one buffer of the size
// the member's trailer announces once the data has shown it plausible.
// It is how profdiff reads a gzipped profile file, the input it meets
// most.
//
// It exists for speed. A streaming inflater (compress/flate, or
// github.com/klauspost/compress/flate, under the gzip reader profdiff
// falls back on) reads its input a byte at a time through an io.Reader,
// writes into a 32 KiB window and copies the window out. This one loads
// eight input bytes at a time into a 64-bit bit buffer, resolves a code with one
// lookup in an 11-bit table (the literal, or the length base and its
// extra bits, at once; longer codes through a subtable), decodes up to
// three literals per refill, and copies a match within the output itself,
// eight bytes at a time. On the 200k-stack synthetic profile (13.9 MB
// gzipped, 21.1 MB raw) that is about 1.5 times klauspost's speed
// (BenchmarkGunzip: 49 ms against 76).
//
// It is not a general gzip reader: Gunzip takes exactly one member that
// decodes cleanly to the size and CRC-32 its trailer gives, and returns
// ErrNotHandled for anything else, corrupt data included: several
// members, trailing bytes, a cut-short stream, a size past the caller's
// limit or past what the input could expand to. The caller then reads the input with a
// streaming gzip reader, whose errors say what is wrong. The CRC-32
// check also means that a decoding mistake here would cost time, not
// correctness: wrong bytes fail it, and the streaming reader reads them
// again.
package inflate

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"runtime/debug"
	"sync"

	"github.com/profdiff/profdiff/profile/internal/bounded"
)

// ErrNotHandled says that Gunzip did not decompress its input (corrupt,
// several members, too large, ...): read it another way.
var ErrNotHandled = errors.New("inflate: not one gzip member that this inflater reads")

// errCorrupt is any decoding failure; Gunzip reports it as ErrNotHandled.
var errCorrupt = errors.New("inflate: corrupt deflate data")

// errFull says that the stream decodes to more than the output buffer
// holds: Gunzip tries a larger one, up to the trailer's size.
var errFull = errors.New("inflate: output buffer full")

// slack is how many bytes past the announced size the output buffer has:
// a match is copied eight bytes at a time and may write up to seven
// bytes past its end.
const slack = 8

// maxRatio bounds what DEFLATE can expand to: a 258-byte match in two
// one-bit codes is 1032 bytes a byte. A trailer announcing more than the
// input could hold is refused before any buffer is made.
const maxRatio = 1032

// The trailer's size is four bytes that a truncated or crafted file makes
// anything up to 4 GiB, so it is never allocated on its word alone. The
// first buffer holds what the body would give at firstRatio (gzipped
// pprof protobufs expand 1.5-3.5 times, so they decode into one buffer of
// exactly their size); a stream that fills it is decoded again into a
// larger one (nextSize). Text that expands 28 times (perf script) decodes
// twice, the first time into a seventh of its size.
const (
	firstRatio = 4
	firstFloor = 64 << 10
	growRatio  = 8
)

// FirstSize is the most a first buffer holds for compressed bytes whose
// announced size the data has not yet borne out: what they give at
// firstRatio, and at least firstFloor. Package profile's streaming
// readers start from it too, so a trailer, a zip directory or a
// Content-Length is believed only as far as this one.
func FirstSize(compressed int64) int64 { return max(compressed, 0)*firstRatio + firstFloor }

// nextSize is the buffer after one of c bytes that the stream filled,
// towards the trailer's size: growRatio times larger, or the size itself
// once that step would leave it less than growRatio times further. So
// the buffers before the last add up to at most a seventh of the data
// (a stream held "once"), and a lying trailer costs at most growRatio²
// times the bytes the data really produced before it failed.
func nextSize(c, size int64) int64 {
	if c*growRatio*growRatio >= size {
		return size
	}
	return c * growRatio
}

// Gunzip decompresses src, one whole gzip member, into a new slice. It
// returns ErrNotHandled unless src is exactly one member that
// decompresses cleanly, with a matching CRC-32 and size, to at most
// maxSize bytes (maxSize <= 0: no limit but the format's).
func Gunzip(src []byte, maxSize int64) (out []byte, err error) {
	defer func() {
		// A corrupt stream that a check here missed must not crash the
		// caller, and a mapped file cut short while read faults (see
		// GunzipFile): either way the caller reads it again.
		if recover() != nil {
			out, err = nil, ErrNotHandled
		}
	}()
	return gunzip(src, maxSize)
}

// gunzip is Gunzip without its guard against a panic (the fuzz test's).
func gunzip(src []byte, maxSize int64) (out []byte, err error) {
	body, err := gzipBody(src)
	if err != nil {
		return nil, ErrNotHandled
	}
	tr := src[len(src)-8:]
	wantCRC, size := binary.LittleEndian.Uint32(tr), int64(binary.LittleEndian.Uint32(tr[4:]))
	if maxSize > 0 && size > maxSize || size > int64(len(body))*maxRatio {
		return nil, ErrNotHandled
	}
	c := min(size, FirstSize(int64(len(body))))
	for {
		buf := make([]byte, c+slack)
		n, used, err := inflate(buf, c, body)
		if err == errFull && c < size {
			c = nextSize(c, size)
			continue
		}
		if err != nil || int64(n) != size || used != len(body) {
			bounded.DropLarge(c) // the caller reads src again, maybe into as much
			return nil, ErrNotHandled
		}
		out = buf[:n:n]
		break
	}
	if crc32.ChecksumIEEE(out) != wantCRC {
		n := len(out)
		out = nil
		bounded.DropLarge(int64(n))
		return nil, ErrNotHandled
	}
	return out, nil
}

// GunzipFile is Gunzip of the regular file f of size bytes. Where the
// system can map files (Unix) it reads them mapped, so the compressed
// bytes cost no heap and no copy; a file cut short while mapped makes a
// fault that Gunzip turns into ErrNotHandled rather than a crash.
// Elsewhere it reads the file into memory first. Either way f's offset
// does not move, so a caller can stream f after ErrNotHandled.
func GunzipFile(f *os.File, size, maxSize int64) ([]byte, error) {
	data, unmap, ok := mapFile(f, size)
	if !ok {
		data = make([]byte, size)
		if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
			return nil, ErrNotHandled
		}
		return Gunzip(data, maxSize)
	}
	defer unmap()
	return gunzipMapped(data, maxSize)
}

// gunzipMapped is Gunzip of a mapped file's bytes: a read past the end of
// a file cut short since it was mapped faults, and the fault panics (in
// this goroutine, for this call) for Gunzip to recover.
func gunzipMapped(data []byte, maxSize int64) ([]byte, error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return Gunzip(data, maxSize)
}

// gzipBody returns the deflate data of the gzip member src: after its
// header, before its 8-byte trailer (which must end src).
func gzipBody(src []byte) ([]byte, error) {
	const (
		fhcrc    = 1 << 1
		fextra   = 1 << 2
		fname    = 1 << 3
		fcomment = 1 << 4
	)
	if len(src) < 18 || src[0] != 0x1f || src[1] != 0x8b || src[2] != 8 || src[3]&0xe0 != 0 {
		return nil, errCorrupt
	}
	flg, p := src[3], 10
	if flg&fextra != 0 {
		if p+2 > len(src) {
			return nil, errCorrupt
		}
		p += 2 + int(binary.LittleEndian.Uint16(src[p:]))
	}
	for _, f := range []byte{fname, fcomment} {
		if flg&f == 0 {
			continue
		}
		for p < len(src) && src[p] != 0 {
			p++
		}
		p++ // the terminating zero
	}
	if flg&fhcrc != 0 {
		p += 2
	}
	if p > len(src)-8 {
		return nil, errCorrupt
	}
	return src[p : len(src)-8], nil
}

// Table entries (uint32), for the literal/length and distance codes:
//
//	bits 0-3   the code's length in bits (what a decode consumes)
//	bits 4-5   zero, so that e&63, the length, is a shift count as it is
//	bits 6-9   flags: literal, end of block, subtable pointer, invalid
//	bits 10-14 extra bits of a length or distance; a pointer's subtable bits
//	bits 16-31 the literal byte, a length or distance base, or a
//	           pointer's subtable offset
//
// A length (and every distance) entry has no flag set. A shift by e&63
// compiles to the bare shift instruction (amd64 masks the count to six
// bits itself), so no masking instruction sits on the loop's chain of
// dependent lookups.
const (
	fLiteral = 1 << 6
	fEOB     = 1 << 7
	fSub     = 1 << 8
	fInvalid = 1 << 9

	litBits  = 11 // primary table bits: literal/length
	distBits = 8  // primary table bits: distance
)

// huff is one decoding table: 2^primary entries, then the subtables.
// subBits, subOff and prefixes are build's scratch, kept so that a
// stream's hundreds of blocks do not each clear 14 KiB: build leaves
// subBits and subOff zero, and reads of prefixes only what it wrote.
type huff struct {
	t        []uint32
	subBits  [1 << litBits]uint8
	subOff   [1 << litBits]int32
	prefixes [1 << litBits]uint16
}

var (
	lenBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	// A distance base of 32769 or more does not fit the entry's 16
	// bits: none does (the largest, code 29, is 24577).
	distBase  = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// litEntry and distEntry are the table entries of a symbol, without its
// code length.
func litEntry(sym int) uint32 {
	switch {
	case sym < 256:
		return fLiteral | uint32(sym)<<16
	case sym == 256:
		return fEOB
	case sym <= 285:
		i := sym - 257
		return uint32(lenExtra[i])<<10 | uint32(lenBase[i])<<16
	}
	return fInvalid // 286 and 287: in the fixed code, never valid
}

func distEntry(sym int) uint32 {
	if sym < 30 {
		return uint32(distExtra[sym])<<10 | uint32(distBase[sym])<<16
	}
	return fInvalid
}

// build makes the table of the canonical Huffman code with the given
// code lengths (0: symbol unused), primary bits wide. An over-subscribed
// code is an error; an incomplete one leaves invalid entries, an error
// only if a stream uses them (RFC 1951 allows one distance code of one
// bit, and zlib writes such streams). A complete code writes every
// entry, so only an incomplete one is filled with invalid entries first.
func (h *huff) build(lengths []uint8, primary uint, entry func(int) uint32) error {
	var count [16]int
	for _, l := range lengths {
		count[l]++
	}
	count[0] = 0
	var next [16]uint32
	left := 1
	code := uint32(0)
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return errCorrupt
		}
		code = (code + uint32(count[l-1])) << 1
		next[l] = code
	}
	size := 1 << primary
	// The subtables: one per primary index that longer codes share,
	// as wide as the longest of them needs. Codes are handed out in
	// order, so the codes of one prefix are consecutive, and so are
	// the prefixes in prefixes.
	subBits, subOff, prefixes := &h.subBits, &h.subOff, &h.prefixes
	np := 0
	if long := 0; primary < 15 {
		for l := primary + 1; l < 16; l++ {
			long += count[l]
		}
		if long > 0 {
			codes := next
			for _, l := range lengths {
				if uint(l) <= primary {
					if l != 0 {
						codes[l]++
					}
					continue
				}
				c := codes[l]
				codes[l]++
				p := reverse(c>>(uint(l)-primary), primary) & (1<<litBits - 1)
				if subBits[p] == 0 {
					prefixes[np&(1<<litBits-1)] = uint16(p)
					np++
				}
				if b := l - uint8(primary); b > subBits[p] {
					subBits[p] = b
				}
			}
		}
	}
	total := size
	for _, p := range prefixes[:np] {
		subOff[p] = int32(total)
		total += 1 << subBits[p]
	}
	if cap(h.t) < total {
		h.t = make([]uint32, total)
	}
	t := h.t[:total]
	if left != 0 {
		for i := range t {
			t[i] = fInvalid
		}
	}
	for _, p := range prefixes[:np] {
		t[p] = fSub | uint32(subBits[p])<<10 | uint32(subOff[p])<<16
	}
	codes := next
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		c := codes[l]
		codes[l]++
		e := entry(sym) | uint32(l)
		if uint(l) <= primary {
			for r := reverse(c, uint(l)); r < uint32(size); r += 1 << l {
				t[r] = e
			}
			continue
		}
		p := reverse(c>>(uint(l)-primary), primary) & (1<<litBits - 1)
		rest := uint(l) - primary
		sb := uint(subBits[p])
		base := uint32(subOff[p])
		for r := reverse(c&(1<<rest-1), rest); r < 1<<sb; r += 1 << rest {
			t[base+r] = e
		}
	}
	for _, p := range prefixes[:np] {
		subBits[p], subOff[p] = 0, 0
	}
	h.t = t
	return nil
}

func reverse(c uint32, n uint) uint32 {
	return uint32(bits.Reverse16(uint16(c))) >> (16 - n)
}

var (
	fixedOnce           sync.Once
	fixedLit, fixedDist huff
)

func fixedTables() (*huff, *huff) {
	fixedOnce.Do(func() {
		var l [288]uint8
		for i := range l {
			switch {
			case i < 144:
				l[i] = 8
			case i < 256:
				l[i] = 9
			case i < 280:
				l[i] = 7
			default:
				l[i] = 8
			}
		}
		var d [30]uint8
		for i := range d {
			d[i] = 5
		}
		if fixedLit.build(l[:], litBits, litEntry) != nil || fixedDist.build(d[:], distBits, distEntry) != nil {
			panic("inflate: the fixed code does not build")
		}
	})
	return &fixedLit, &fixedDist
}

// reader is the bit reader: bits of in[:pos] not yet consumed are the
// low n bits of buf, n < 64 (the refills in codes rely on it). Past the
// end of in it reads zero bytes, counting them in over: a stream that
// consumes any of them is truncated.
type reader struct {
	in   []byte
	pos  int
	buf  uint64
	n    uint
	over int
}

// refill makes n at least 56.
func (r *reader) refill() {
	if r.pos+8 <= len(r.in) {
		r.buf |= binary.LittleEndian.Uint64(r.in[r.pos:]) << r.n
		k := (63 - r.n) >> 3
		r.pos += int(k)
		r.n += k << 3
		return
	}
	for r.n < 56 {
		if r.pos < len(r.in) {
			r.buf |= uint64(r.in[r.pos]) << r.n
			r.pos++
		} else {
			r.over++
		}
		r.n += 8
	}
}

// take consumes and returns the next k (<= n) bits.
func (r *reader) take(k uint) uint32 {
	v := uint32(r.buf & (1<<k - 1))
	r.buf >>= k
	r.n -= k
	return v
}

// inflate decodes the raw deflate stream in into out[:size] (out has
// slack bytes more). It returns the bytes written and the input bytes
// the stream took (up to its last whole byte).
func inflate(out []byte, size int64, in []byte) (int, int, error) {
	r := reader{in: in}
	var dyn struct {
		lit, dist huff
		lens      [286 + 30]uint8
		clen      huff
	}
	o := 0
	for {
		r.refill()
		final := r.take(1)
		switch r.take(2) {
		case 0:
			var err error
			if o, err = stored(&r, out, size, o); err != nil {
				return o, 0, err
			}
		case 1:
			lit, dist := fixedTables()
			var err error
			if o, err = codes(&r, out, size, o, lit, dist); err != nil {
				return o, 0, err
			}
		case 2:
			if err := dynamicTables(&r, &dyn.lit, &dyn.dist, &dyn.clen, dyn.lens[:]); err != nil {
				return o, 0, err
			}
			var err error
			if o, err = codes(&r, out, size, o, &dyn.lit, &dyn.dist); err != nil {
				return o, 0, err
			}
		default:
			return o, 0, errCorrupt
		}
		if final == 1 {
			break
		}
	}
	// Whole bytes still in the buffer were not taken; of them, the
	// last r.over are the zeros read past the end.
	if r.over > int(r.n>>3) {
		return o, 0, errCorrupt // bits past the end of in were consumed
	}
	return o, r.pos + r.over - int(r.n>>3), nil
}

// stored copies a stored block.
func stored(r *reader, out []byte, size int64, o int) (int, error) {
	r.take(r.n & 7) // to a byte boundary
	// Give back the whole bytes the buffer holds.
	p := r.pos + r.over - int(r.n>>3)
	if r.over > int(r.n>>3) {
		return o, errCorrupt
	}
	r.buf, r.n, r.over = 0, 0, 0
	if p+4 > len(r.in) {
		return o, errCorrupt
	}
	l := int(binary.LittleEndian.Uint16(r.in[p:]))
	if uint16(l) != ^binary.LittleEndian.Uint16(r.in[p+2:]) {
		return o, errCorrupt
	}
	p += 4
	if p+l > len(r.in) {
		return o, errCorrupt
	}
	if int64(o+l) > size {
		return o, errFull
	}
	copy(out[o:], r.in[p:p+l])
	r.pos = p + l
	return o + l, nil
}

// clOrder is the order of the code length code's lengths.
var clOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

func identity(sym int) uint32 { return uint32(sym) << 16 }

// dynamicTables reads a dynamic block's header into lit and dist.
func dynamicTables(r *reader, lit, dist, clen *huff, lens []uint8) error {
	r.refill()
	nlit := int(r.take(5)) + 257
	ndist := int(r.take(5)) + 1
	ncl := int(r.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return errCorrupt
	}
	var cl [19]uint8
	r.refill()
	for i := 0; i < ncl; i++ {
		cl[clOrder[i]] = uint8(r.take(3)) // 19 x 3 = 57 bits: refill half way
		if i == 9 {
			r.refill()
		}
	}
	if err := clen.build(cl[:], 7, identity); err != nil {
		return err
	}
	n := nlit + ndist
	lens = lens[:n]
	for i := 0; i < n; {
		r.refill()
		e := clen.t[r.buf&(1<<7-1)]
		if e&fInvalid != 0 {
			return errCorrupt
		}
		r.take(uint(e & 63))
		sym := e >> 16
		switch {
		case sym < 16:
			lens[i] = uint8(sym)
			i++
			continue
		case sym == 16:
			if i == 0 {
				return errCorrupt
			}
			rep := 3 + int(r.take(2))
			if i+rep > n {
				return errCorrupt
			}
			prev := lens[i-1]
			for ; rep > 0; rep-- {
				lens[i] = prev
				i++
			}
		default:
			var rep int
			if sym == 17 {
				rep = 3 + int(r.take(3))
			} else {
				rep = 11 + int(r.take(7))
			}
			if i+rep > n {
				return errCorrupt
			}
			for ; rep > 0; rep-- {
				lens[i] = 0
				i++
			}
		}
	}
	if lens[256] == 0 {
		return errCorrupt // no end of block
	}
	if err := lit.build(lens[:nlit], litBits, litEntry); err != nil {
		return err
	}
	return dist.build(lens[nlit:n], distBits, distEntry)
}

// codes decodes a compressed block's symbols up to its end of block:
// a fast loop while the input has eight bytes to load and the output
// room for the longest match without a check per byte, then codesTail.
func codes(r *reader, out []byte, size int64, o int, lit, dist *huff) (int, error) {
	lp := (*[1 << litBits]uint32)(lit.t)
	dp := (*[1 << distBits]uint32)(dist.t)
	in := r.in
	pos, buf, n := r.pos, r.buf, r.n
	// Each round writes at most 258 bytes, plus 7 of a match's last
	// eight-byte copy (the slack).
	fastOut := int(size) - 264
	for pos+16 <= len(in) && o <= fastOut {
		// Refill to 56 bits or more: the bytes that fit whole.
		buf |= binary.LittleEndian.Uint64(in[pos:]) << (n & 63)
		pos += int(7 - n>>3)
		n |= 56
		e := lp[buf&(1<<litBits-1)]
		if e&fLiteral != 0 {
			// Up to three literals (15 bits at most each) from one
			// refill, each entry looked up as the last is written.
			buf >>= e & 63
			n -= uint(e & 63)
			out[o] = byte(e >> 16)
			o++
			if e = lp[buf&(1<<litBits-1)]; e&fLiteral != 0 {
				buf >>= e & 63
				n -= uint(e & 63)
				out[o] = byte(e >> 16)
				o++
				if e = lp[buf&(1<<litBits-1)]; e&fLiteral != 0 {
					buf >>= e & 63
					n -= uint(e & 63)
					out[o] = byte(e >> 16)
					o++
					continue
				}
			}
			// e was looked up with 26 bits or more in the buffer,
			// enough for any code: a refill adds bits above them.
			buf |= binary.LittleEndian.Uint64(in[pos:]) << (n & 63)
			pos += int(7 - n>>3)
			n |= 56
		}
		if e&fSub != 0 {
			e = lit.t[e>>16+uint32(buf>>litBits)&(1<<(e>>10&31)-1)]
		}
		buf >>= e & 63
		n -= uint(e & 63)
		if e&fLiteral != 0 {
			out[o] = byte(e >> 16)
			o++
			continue
		}
		if e&(fEOB|fInvalid) != 0 {
			r.pos, r.buf, r.n = pos, buf, n
			if e&fEOB != 0 {
				return o, nil
			}
			return o, errCorrupt
		}
		// A length: base and extra bits, then a distance; 15+5+15+13
		// bits at most, within the 56 the refill left.
		l := int(e>>16) + int(uint32(buf)&(1<<(e>>10&31)-1))
		buf >>= e >> 10 & 31
		n -= uint(e >> 10 & 31)
		d := dp[buf&(1<<distBits-1)]
		if d&fSub != 0 {
			d = dist.t[d>>16+uint32(buf>>distBits)&(1<<(d>>10&31)-1)]
		}
		if d&fInvalid != 0 {
			r.pos, r.buf, r.n = pos, buf, n
			return o, errCorrupt
		}
		buf >>= d & 63
		n -= uint(d & 63)
		dd := int(d>>16) + int(uint32(buf)&(1<<(d>>10&31)-1))
		buf >>= d >> 10 & 31
		n -= uint(d >> 10 & 31)
		if dd > o {
			r.pos, r.buf, r.n = pos, buf, n
			return o, errCorrupt
		}
		if dd >= 8 {
			src, dst := out[o-dd:o-dd+l+7], out[o:o+l+7]
			for i := 0; i < l; i += 8 {
				binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:]))
			}
		} else {
			copyShort(out, o, dd, l)
		}
		o += l
	}
	r.pos, r.buf, r.n = pos, buf, n
	return codesTail(r, out, size, o, lit, dist)
}

// copyShort copies a match of distance under 8: the bytes repeat.
func copyShort(out []byte, o, dd, l int) {
	if dd == 1 {
		b := out[o-1]
		for i := range out[o : o+l] {
			out[o+i] = b
		}
		return
	}
	for i := 0; i < l; i++ {
		out[o+i] = out[o+i-dd]
	}
}

// codesTail is codes near the end of the input or the output: every
// refill and write is checked.
func codesTail(r *reader, out []byte, size int64, o int, lit, dist *huff) (int, error) {
	lt, dt := lit.t, dist.t
	end := int(size)
	for {
		r.refill()
		if r.over > int(r.n>>3) {
			// The stream went on past the end of its input: cut short.
			// Zeros read there could decode as literals without end.
			return o, errCorrupt
		}
		e := lt[r.buf&(1<<litBits-1)]
		if e&fSub != 0 {
			e = lt[e>>16+uint32(r.buf>>litBits)&(1<<(e>>10&31)-1)]
		}
		r.buf >>= e & 63
		r.n -= uint(e & 63)
		if e&fLiteral != 0 {
			if o >= end {
				return o, errFull
			}
			out[o] = byte(e >> 16)
			o++
			continue
		}
		if e&(fEOB|fInvalid) != 0 {
			if e&fEOB != 0 {
				return o, nil
			}
			return o, errCorrupt
		}
		l := int(e>>16) + int(r.take(uint(e>>10&31)))
		d := dt[r.buf&(1<<distBits-1)]
		if d&fSub != 0 {
			d = dt[d>>16+uint32(r.buf>>distBits)&(1<<(d>>10&31)-1)]
		}
		if d&fInvalid != 0 {
			return o, errCorrupt
		}
		r.buf >>= d & 63
		r.n -= uint(d & 63)
		dd := int(d>>16) + int(r.take(uint(d>>10&31)))
		if dd > o {
			return o, errCorrupt
		}
		if o+l > end {
			return o, errFull
		}
		for i := 0; i < l; i++ {
			out[o+i] = out[o+i-dd]
		}
		o += l
	}
}
