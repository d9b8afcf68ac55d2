package nettrace

import (
	"encoding/binary"
	"unicode/utf16"
)

// traceWriter writes nettrace V4/V5 files for tests, following PerfView's
// NetTraceFormat_v5.md: the stream header, a Trace object, then metadata,
// stack, event and sequence-point blocks, each event blob with a compressed
// or an uncompressed header.
type traceWriter struct {
	b          []byte
	compressed bool
	ptr        int
}

func newTraceWriter(compressed bool, pointerSize int, qpcFreq int64, samplingNS int32) *traceWriter {
	w := &traceWriter{compressed: compressed, ptr: pointerSize}
	w.b = append(w.b, "Nettrace"...)
	w.u32(20)
	w.b = append(w.b, "!FastSerialization.1"...)
	w.beginObject("Trace", 4, 4)
	for i := 0; i < 8; i++ { // SyncTimeUTC
		w.u16(1)
	}
	w.u64(1000)            // SyncTimeQPC
	w.u64(uint64(qpcFreq)) // QPCFrequency
	w.u32(uint32(pointerSize))
	w.u32(4242) // ProcessId
	w.u32(8)    // NumberOfProcessors
	w.u32(uint32(samplingNS))
	w.b = append(w.b, tagEndObject)
	return w
}

func (w *traceWriter) u16(v uint16) { w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *traceWriter) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *traceWriter) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }

func (w *traceWriter) beginObject(name string, version, minReader int) {
	w.b = append(w.b, tagBeginPrivateObject, tagBeginPrivateObject, tagNullReference)
	w.u32(uint32(version))
	w.u32(uint32(minReader))
	w.u32(uint32(len(name)))
	w.b = append(w.b, name...)
	w.b = append(w.b, tagEndObject)
}

// block writes a block object whose payload starts at a 4-byte file offset.
func (w *traceWriter) block(name string, payload func(off int) []byte) {
	w.beginObject(name, 2, 2)
	sizeAt := len(w.b)
	w.u32(0)
	for len(w.b)%4 != 0 {
		w.b = append(w.b, 0)
	}
	p := payload(len(w.b))
	binary.LittleEndian.PutUint32(w.b[sizeAt:], uint32(len(p)))
	w.b = append(w.b, p...)
	w.b = append(w.b, tagEndObject)
}

func (w *traceWriter) end() []byte { return append(w.b, tagNullReference) }

func utf16z(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return append(b, 0, 0)
}

// ev is one event blob to write.
type ev struct {
	meta      uint32
	thread    uint64
	stack     uint32
	timestamp int64
	payload   []byte
}

// blobs encodes events for an EventBlock or MetadataBlock starting at file
// offset off.
func (w *traceWriter) blobs(off int, evs []ev) []byte {
	var p []byte
	hdr := make([]byte, 20)
	binary.LittleEndian.PutUint16(hdr, 20)
	if w.compressed {
		binary.LittleEndian.PutUint16(hdr[2:], 1)
	}
	p = append(p, hdr...)
	var prev eventHeader
	for _, e := range evs {
		if w.compressed {
			flags := byte(1 | 4 | 8 | 128)
			if e.meta != 0 {
				flags |= 2
			}
			p = append(p, flags)
			p = binary.AppendUvarint(p, uint64(e.meta))
			if e.meta != 0 {
				p = binary.AppendUvarint(p, 0) // sequence delta
				p = binary.AppendUvarint(p, e.thread)
				p = binary.AppendUvarint(p, 0) // processor
			}
			p = binary.AppendUvarint(p, e.thread)
			p = binary.AppendUvarint(p, uint64(e.stack))
			p = binary.AppendUvarint(p, uint64(e.timestamp-prev.timestamp))
			p = binary.AppendUvarint(p, uint64(len(e.payload)))
			p = append(p, e.payload...)
			prev.timestamp = e.timestamp
			continue
		}
		var h []byte
		h = binary.LittleEndian.AppendUint32(h, e.meta)
		h = binary.LittleEndian.AppendUint32(h, 1) // sequence
		h = binary.LittleEndian.AppendUint64(h, e.thread)
		h = binary.LittleEndian.AppendUint64(h, e.thread)
		h = binary.LittleEndian.AppendUint32(h, 0) // processor
		h = binary.LittleEndian.AppendUint32(h, e.stack)
		h = binary.LittleEndian.AppendUint64(h, uint64(e.timestamp))
		h = append(h, make([]byte, 32)...) // activity ids
		h = binary.LittleEndian.AppendUint32(h, uint32(len(e.payload)))
		size := len(h) + len(e.payload)
		p = binary.LittleEndian.AppendUint32(p, uint32(size))
		p = append(p, h...)
		p = append(p, e.payload...)
		for (off+len(p))%4 != 0 {
			p = append(p, 0)
		}
	}
	return p
}

// metadata writes a MetadataBlock defining id as provider/eventID.
func (w *traceWriter) metadata(defs ...metaDef) {
	var evs []ev
	for _, d := range defs {
		var p []byte
		p = binary.LittleEndian.AppendUint32(p, d.id)
		p = append(p, utf16z(d.provider)...)
		p = binary.LittleEndian.AppendUint32(p, uint32(d.eventID))
		p = append(p, utf16z(d.name)...)
		p = binary.LittleEndian.AppendUint64(p, 0) // keywords
		p = binary.LittleEndian.AppendUint32(p, 2) // version
		p = binary.LittleEndian.AppendUint32(p, 5) // level
		p = binary.LittleEndian.AppendUint32(p, 0) // no fields
		evs = append(evs, ev{payload: p})
	}
	w.block("MetadataBlock", func(off int) []byte { return w.blobs(off, evs) })
}

type metaDef struct {
	id       uint32
	provider string
	eventID  int
	name     string
}

// stacks writes a StackBlock with ids first, first+1, ...
func (w *traceWriter) stacks(first uint32, stacks ...[]uint64) {
	w.block("StackBlock", func(int) []byte {
		var p []byte
		p = binary.LittleEndian.AppendUint32(p, first)
		p = binary.LittleEndian.AppendUint32(p, uint32(len(stacks)))
		for _, s := range stacks {
			p = binary.LittleEndian.AppendUint32(p, uint32(len(s)*w.ptr))
			for _, ip := range s {
				if w.ptr == 8 {
					p = binary.LittleEndian.AppendUint64(p, ip)
				} else {
					p = binary.LittleEndian.AppendUint32(p, uint32(ip))
				}
			}
		}
		return p
	})
}

func (w *traceWriter) events(evs ...ev) {
	w.block("EventBlock", func(off int) []byte { return w.blobs(off, evs) })
}

func (w *traceWriter) sequencePoint(ts int64) {
	w.block("SPBlock", func(int) []byte {
		var p []byte
		p = binary.LittleEndian.AppendUint64(p, uint64(ts))
		p = binary.LittleEndian.AppendUint32(p, 0)
		return p
	})
}

// methodPayload is a MethodLoadVerbose / MethodDCEndVerbose payload.
func methodPayload(moduleID, start uint64, size uint32, ns, name string) []byte {
	var p []byte
	p = binary.LittleEndian.AppendUint64(p, start^0xfeed) // method id
	p = binary.LittleEndian.AppendUint64(p, moduleID)
	p = binary.LittleEndian.AppendUint64(p, start)
	p = binary.LittleEndian.AppendUint32(p, size)
	p = binary.LittleEndian.AppendUint32(p, 0x06000001) // token
	p = binary.LittleEndian.AppendUint32(p, 8)          // flags: jitted
	p = append(p, utf16z(ns)...)
	p = append(p, utf16z(name)...)
	p = append(p, utf16z("void ()")...)
	return binary.LittleEndian.AppendUint16(p, 0) // ClrInstanceID
}

// modulePayload is a ModuleLoad payload.
func modulePayload(id uint64, path string) []byte {
	var p []byte
	p = binary.LittleEndian.AppendUint64(p, id)
	p = binary.LittleEndian.AppendUint64(p, id+1) // assembly id
	p = binary.LittleEndian.AppendUint32(p, 8)    // flags
	p = binary.LittleEndian.AppendUint32(p, 0)
	p = append(p, utf16z(path)...)
	p = append(p, utf16z("")...)
	return binary.LittleEndian.AppendUint16(p, 0)
}

func samplePayload(typ int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(typ)) }
