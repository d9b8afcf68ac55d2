package wasmhost

import (
	"encoding/binary"
	"fmt"
)

// The plugin is a WebAssembly module emitted byte by byte by Guest below:
// no toolchain, no opaque binary. It is small (a few hundred bytes), so
// compiling it costs well under a millisecond and the cost of a request is
// what the keep_resident sweep is about: instantiating, the guest touching
// its memory, and tearing the memory down.
//
// Memory layout (one memory, min = max = Pages pages, exported as "memory"):
//
//	[0, ImageOffset)                  the request bytes, written by the host
//	[ImageOffset, RequestArea)        the module's memory image: a data
//	                                  segment of ImageSize bytes naming the
//	                                  module, different in every module
//	[RequestArea, RequestArea+touch)  the plugin's working set ("heap")
//
// Exports:
//
//	handle(req_len i32, touch i32) -> i64
//	    FNV-1a hashes the request bytes, then walks the working set (touch
//	    bytes, a multiple of 4 KiB) one 64-byte cache line at a time: it
//	    reads the line's first 8 bytes,
//	    counts the ones that are not zero (memory it should have received
//	    zeroed), and writes a value derived from the hash there, so every
//	    line and page of the working set is dirtied. It returns
//	    dirty<<32 | hash. A host that reuses memory without resetting it
//	    gets dirty > 0 on the next request: the isolation check.
//	trap()   executes `unreachable` (fault injection: a guest that traps).
//	spin()   loops forever (fault injection: a guest past its time limit).

// RequestArea is the part of guest memory the request is copied into; the
// working set starts after it.
const RequestArea = 64 << 10

// ImageSize is the size of each module's data segment (its memory image,
// what Wasmtime maps copy-on-write into a slot and what makes a warm slot
// belong to one module), at ImageOffset, the end of the request area.
const (
	ImageSize   = 4096
	ImageOffset = RequestArea - ImageSize
)

// PageSize is the WebAssembly page size.
const PageSize = 64 << 10

// Wasm value types and opcodes used by the encoder.
const (
	tI32 = 0x7f
	tI64 = 0x7e

	opUnreachable = 0x00
	opBlock       = 0x02
	opLoop        = 0x03
	opBr          = 0x0c
	opBrIf        = 0x0d
	opEnd         = 0x0b
	opLocalGet    = 0x20
	opLocalSet    = 0x21
	opI32Load8U   = 0x2d
	opI64Load     = 0x29
	opI64Store    = 0x37
	opI32Const    = 0x41
	opI64Const    = 0x42
	opI32GeU      = 0x4f
	opI64Ne       = 0x52
	opI32Add      = 0x6a
	opI32Mul      = 0x6c
	opI32Xor      = 0x73
	opI64Mul      = 0x7e
	opI64Or       = 0x84
	opI64Shl      = 0x86
	opI64ExtendU  = 0xad
	blockTypeNone = 0x40
)

// Guest returns plugin module 0 with the given number of 64 KiB pages of
// memory (its minimum and maximum: the memory cannot grow, like a pool slot
// sized to the module).
func Guest(pages int) ([]byte, error) { return GuestModule(pages, 0) }

// GuestModule returns plugin module id: the same code as every other, and
// a data segment of its own (ImageSize bytes naming it), so that modules
// are distinct to the runtime and a slot's image belongs to one of them.
func GuestModule(pages, id int) ([]byte, error) {
	if id < 0 {
		return nil, fmt.Errorf("module index %d is negative", id)
	}
	if pages < 2 || pages > 1<<14 {
		return nil, fmt.Errorf("guest memory must be 2 to 16384 pages of 64 KiB, not %d", pages)
	}
	var m []byte
	m = append(m, 0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00)

	// Types: 0 = (i32 i32) -> i64, 1 = () -> ().
	m = section(m, 1, vec(2,
		[]byte{0x60, 2, tI32, tI32, 1, tI64},
		[]byte{0x60, 0, 0},
	))
	// Functions: handle, trap, spin.
	m = section(m, 3, vec(3, []byte{0}, []byte{1}, []byte{1}))
	// Memory 0: limits flag 1 (min and max).
	m = section(m, 5, vec(1, cat([]byte{0x01}, uleb(uint64(pages)), uleb(uint64(pages)))))
	// Exports.
	m = section(m, 7, vec(4,
		export("memory", 0x02, 0),
		export("handle", 0x00, 0),
		export("trap", 0x00, 1),
		export("spin", 0x00, 2),
	))
	m = section(m, 10, vec(3, body(handleLocals(), handleCode()), body(nil, []byte{opUnreachable}), body(nil, spinCode())))
	// Data: one active segment in memory 0 at ImageOffset.
	m = section(m, 11, vec(1, cat([]byte{0x00, opI32Const}, sleb(ImageOffset), []byte{opEnd}, uleb(ImageSize), imageBytes(id))))
	return m, nil
}

// imageBytes is module id's data segment: its name, then a pattern seeded
// by id (no zero bytes), ImageSize bytes in all.
func imageBytes(id int) []byte {
	b := fmt.Appendf(make([]byte, 0, ImageSize), "profdiff wasm plugin module %d\n", id)
	x := uint32(2166136261) ^ uint32(id)
	for len(b) < ImageSize {
		x = x*16777619 + 1
		b = append(b, byte(x>>24)|1)
	}
	return b
}

// Locals of handle beyond its two parameters (0 = req_len, 1 = touch):
// 2 = i, 3 = hash, 4 = dirty, 5 = end (i32); 6 = v (i64).
const (
	lReqLen = 0
	lTouch  = 1
	lI      = 2
	lHash   = 3
	lDirty  = 4
	lEnd    = 5
	lV      = 6
)

// guestPage is the unit the guest walks its working set in: touch is
// rounded up to it.
const guestPage = 4096

func handleLocals() []byte { return vec(2, []byte{4, tI32}, []byte{1, tI64}) }

// emitter appends function-body instructions.
type emitter struct{ c []byte }

func (e *emitter) op(b ...byte) { e.c = append(e.c, b...) }
func (e *emitter) get(l byte)   { e.op(opLocalGet, l) }
func (e *emitter) set(l byte)   { e.op(opLocalSet, l) }
func (e *emitter) i32(v int64)  { e.op(opI32Const); e.op(sleb(v)...) }

// while emits "for a < b (unsigned) { body; a += step }": a block around a
// loop whose first instructions leave the block when a >= b.
func (e *emitter) while(a, b byte, step int64, body func()) {
	e.op(opBlock, blockTypeNone, opLoop, blockTypeNone)
	e.get(a)
	e.get(b)
	e.op(opI32GeU, opBrIf, 1)
	body()
	e.get(a)
	e.i32(step)
	e.op(opI32Add)
	e.set(a)
	e.op(opBr, 0, opEnd, opEnd)
}

func handleCode() []byte {
	var e emitter
	// hash = FNV offset basis; i = 0
	e.i32(int64(int32(-2128831035))) // 2166136261 as a signed i32
	e.set(lHash)
	e.i32(0)
	e.set(lI)
	// while i < req_len: hash = (hash ^ mem8[i]) * FNV prime; i++
	e.while(lI, lReqLen, 1, func() {
		e.get(lHash)
		e.get(lI)
		e.op(opI32Load8U, 0, 0, opI32Xor)
		e.i32(16777619)
		e.op(opI32Mul)
		e.set(lHash)
	})

	// i = RequestArea; end = RequestArea + touch
	e.i32(RequestArea)
	e.set(lI)
	e.i32(RequestArea)
	e.get(lTouch)
	e.op(opI32Add)
	e.set(lEnd)
	// while i < end (one 4 KiB page per iteration):
	//   v = u64(hash^i)*golden | 1
	//   for each of the page's 64 cache lines k (unrolled):
	//     dirty += mem64[i+64k] != 0; mem64[i+64k] = v
	//   i += 4096
	// The unrolling keeps wazero's termination check (a call at every loop
	// header when CloseOnContextDone is on, ~35 ns) to one per page
	// instead of one per line, where it would cost 12x the guest's work.
	e.while(lI, lEnd, guestPage, func() {
		e.get(lHash)
		e.get(lI)
		e.op(opI32Xor, opI64ExtendU, opI64Const)
		e.op(sleb(-7046029254386353131)...) // 0x9E3779B97F4A7C15
		e.op(opI64Mul, opI64Const, 1, opI64Or)
		e.set(lV)
		for k := 0; k < guestPage/64; k++ {
			off := uleb(uint64(k * 64))
			e.get(lDirty)
			e.get(lI)
			e.op(opI64Load, 3)
			e.op(off...)
			e.op(opI64Const, 0, opI64Ne, opI32Add)
			e.set(lDirty)
			e.get(lI)
			e.get(lV)
			e.op(opI64Store, 3)
			e.op(off...)
		}
	})

	// return u64(dirty)<<32 | u64(hash)
	e.get(lDirty)
	e.op(opI64ExtendU, opI64Const, 32, opI64Shl)
	e.get(lHash)
	e.op(opI64ExtendU, opI64Or)
	return e.c
}

func spinCode() []byte {
	return []byte{opLoop, blockTypeNone, opBr, 0, opEnd}
}

func body(locals, code []byte) []byte {
	if locals == nil {
		locals = []byte{0}
	}
	b := cat(locals, code, []byte{opEnd})
	return cat(uleb(uint64(len(b))), b)
}

func export(name string, kind byte, index uint64) []byte {
	return cat(uleb(uint64(len(name))), []byte(name), []byte{kind}, uleb(index))
}

func section(m []byte, id byte, content []byte) []byte {
	m = append(m, id)
	m = append(m, uleb(uint64(len(content)))...)
	return append(m, content...)
}

func vec(n int, items ...[]byte) []byte {
	return cat(append([][]byte{uleb(uint64(n))}, items...)...)
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// uleb writes v as unsigned LEB128, which is exactly what
// encoding/binary's uvarint is.
func uleb(v uint64) []byte { return binary.AppendUvarint(nil, v) }

// sleb writes v as signed LEB128 (binary's varint is zigzag, not this).
func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		done := (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0)
		if !done {
			c |= 0x80
		}
		b = append(b, c)
		if done {
			return b
		}
	}
}
