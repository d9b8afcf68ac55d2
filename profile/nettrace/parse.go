package nettrace

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/profdiff/profdiff/profile/internal/loaderr"
)

// Providers and events profdiff reads. The CLR's runtime, rundown and
// sample-profiler events carry no field descriptions in their metadata, so
// their payloads are decoded by event id, as TraceEvent does, from the
// layouts in the runtime's ClrEtwAll.man.
const (
	providerSampleProfiler = "Microsoft-DotNETCore-SampleProfiler"
	providerRuntime        = "Microsoft-Windows-DotNETRuntime"
	providerRundown        = "Microsoft-Windows-DotNETRuntimeRundown"

	eventThreadSample = 0 // SampleProfiler ThreadSample

	eventMethodLoadVerbose   = 143 // runtime (JIT time); MethodDCStartVerbose in rundown
	eventMethodUnloadVerbose = 144 // runtime; MethodDCEndVerbose in rundown
	eventDomainModuleLoad    = 151 // runtime; DomainModuleDCStart in rundown
	eventModuleLoad          = 152 // runtime; DomainModuleDCEnd in rundown
	eventModuleDCStart       = 153 // rundown
	eventModuleDCEnd         = 154 // rundown
)

// Sample types of a ThreadSample event.
const (
	SampleError    = 0
	SampleExternal = 1 // the thread is in native or runtime code, or blocked
	SampleManaged  = 2 // the thread is running managed code
)

// metadata describes one kind of event.
type metadata struct {
	provider string
	eventID  int
	name     string
	version  int
	key      string // "Provider/Name", or "Provider/ID" when the metadata carries no name (the CLR's events)
	count    int    // events seen
}

// eventHeader is a decoded event blob header.
type eventHeader struct {
	metadataID  uint32
	seq         uint32
	threadID    uint64
	captureTID  uint64
	proc        uint32
	stackID     uint32
	timestamp   int64
	sorted      bool
	payloadSize uint32
}

// Sample is one ThreadSample event.
type Sample struct {
	Thread    uint64
	Timestamp int64 // QPC ticks
	Type      int   // SampleError, SampleExternal, SampleManaged
	Stack     int   // index into Trace.Stacks, -1 when the event has none
}

// Method is a JIT-compiled method's code range, from MethodLoadVerbose or
// the rundown's MethodDCStartVerbose/MethodDCEndVerbose.
type Method struct {
	Start, Size uint64
	ModuleID    uint64
	Timestamp   int64 // QPC ticks of the event
	Rundown     bool  // describes a method alive at the start or end of the trace
	// The namespace (type) and name: offsets and lengths of UTF-16 bytes in
	// the file's data, decoded only for methods a sample needs (a rundown
	// lists every method of the process; most are never sampled).
	nsOff, nsLen, nameOff, nameLen uint32
}

// Namespace and Name decode a method's type and member names.
func (t *Trace) Namespace(m *Method) string {
	return decodeUTF16(t.data[m.nsOff : m.nsOff+m.nsLen])
}
func (t *Trace) Name(m *Method) string {
	return decodeUTF16(t.data[m.nameOff : m.nameOff+m.nameLen])
}

// Trace is what Read took from a file.
type Trace struct {
	PointerSize int
	ProcessID   int
	Processors  int
	QPCFreq     int64
	SyncQPC     int64
	// SamplingInterval is ExpectedCPUSamplingRate: nanoseconds between
	// two samples of a thread (0 when the file does not say).
	SamplingInterval int64
	Samples          []Sample
	Stacks           [][]uint64 // interned; instruction pointers, leaf first
	Methods          []Method
	Modules          map[uint64]string // module id → IL (or native) path
	Stats            Stats
	Warnings         []string
	data             []byte // the file, which Method names point into
}

// Stats counts what the file holds.
type Stats struct {
	Events        int            // event blobs in EventBlocks
	Metadata      int            // metadata records
	ByEvent       map[string]int // Provider/Name (or Provider/ID) → events
	Blocks        map[string]int // object type → count
	StackRecords  int            // stacks defined in StackBlocks
	SamplesByType [3]int         // ThreadSample events by type: error, external, managed
	Threads       int            // distinct threads with ThreadSample events
	MinTimestamp  int64
	MaxTimestamp  int64
}

// Read decodes a V4/V5 nettrace file. It fails with a message that says
// where (byte offset) and what is wrong; a V6 file fails with ErrV6.
func Read(data []byte) (t *Trace, err error) {
	defer func() {
		// Every read is bounds-checked; this guards the invariants of the
		// decoders themselves, so no input can crash the caller.
		if rec := recover(); rec != nil {
			t, err = nil, fmt.Errorf("nettrace reader failed: %v", rec)
		}
	}()
	r := &reader{b: data}
	if err := readStreamHeader(r); err != nil {
		if r.err != nil && !errors.Is(err, ErrV6) {
			return nil, r.err
		}
		return nil, err
	}
	p := &parser{
		meta:     map[uint32]*metadata{},
		region:   map[uint32]int{},
		interned: map[string]int{},
		threads:  map[uint64]bool{},
		t: &Trace{
			data:    data,
			Modules: map[uint64]string{},
			Stats:   Stats{ByEvent: map[string]int{}, Blocks: map[string]int{}},
		},
	}
	ended := false
	for r.err == nil && r.left() > 0 {
		start := r.off
		tag := r.u8("object tag")
		if tag == tagNullReference {
			ended = true
			break
		}
		if tag != tagBeginPrivateObject {
			return nil, fmt.Errorf("at byte %d: object tag %d, want BeginPrivateObject (5) or the end of the stream (1)", start, tag)
		}
		name, version, minReader := readObjectType(r)
		if r.err != nil {
			break
		}
		p.t.Stats.Blocks[name]++
		if err := p.object(r, start, name, version, minReader); err != nil {
			return nil, err
		}
		if t := r.u8(name + " end tag"); r.err == nil && t != tagEndObject {
			return nil, fmt.Errorf("at byte %d: %s object ends with tag %d, want EndObject (6)", r.off-1, name, t)
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("truncated or corrupt nettrace: %w", r.err)
	}
	if !p.sawTrace {
		return nil, errors.New("nettrace file has no Trace object")
	}
	p.finish(ended)
	if err := p.checkSpan(); err != nil {
		return nil, err
	}
	return p.t, nil
}

// checkSpan fails when the events span more nanoseconds than an int64
// holds (timestamps are never negative, so the span in ticks fits).
func (p *parser) checkSpan() error {
	st, freq := &p.t.Stats, p.h.qpcFreq
	if span := st.MaxTimestamp - st.MinTimestamp; float64(span)*1e9/float64(freq) >= math.MaxInt64 {
		return fmt.Errorf("at byte %d: event timestamp %d is %d ticks after the first event's at %d ticks per second: more nanoseconds than a 64-bit integer holds (corrupt timestamps or frequency)", p.maxOff, st.MaxTimestamp, span, freq)
	}
	return nil
}

// object reads the body of one object of the stream, whose type header
// (at byte start) named it.
func (p *parser) object(r *reader, start int, name string, version, minReader int) error {
	switch name {
	case "Trace":
		if p.sawTrace {
			return fmt.Errorf("at byte %d: a second Trace object", start)
		}
		if version < 4 {
			return loaderr.Mark(loaderr.Unsupported, fmt.Errorf("at byte %d: Trace object version %d (the .netperf format of .NET Core 2.x) is not supported; nettrace files have version 4", start, version))
		}
		if minReader > 5 {
			return fmt.Errorf("at byte %d: Trace object version %d needs a reader of version %d; this one reads 4 and 5", start, version, minReader)
		}
		h := readTraceObject(r, version)
		p.h = h
		p.t.PointerSize, p.t.ProcessID, p.t.Processors = h.pointerSize, h.pid, h.procs
		p.t.QPCFreq, p.t.SyncQPC, p.t.SamplingInterval = h.qpcFreq, h.syncQPC, h.sampleRate
		p.sawTrace = true
	case "EventBlock", "MetadataBlock", "StackBlock", "SPBlock":
		if !p.sawTrace {
			return fmt.Errorf("at byte %d: %s before the Trace object", start, name)
		}
		if minReader > 2 {
			return fmt.Errorf("at byte %d: %s version %d needs a reader of version %d; this one reads 2", start, name, version, minReader)
		}
		size := int(r.u32(name + " size"))
		r.align4(name)
		payload := r.bytes(size, name)
		if r.err != nil {
			break
		}
		br := &reader{b: payload, base: r.base + r.off - size}
		switch name {
		case "EventBlock":
			p.eventBlock(br, false)
		case "MetadataBlock":
			p.eventBlock(br, true)
		case "StackBlock":
			p.stackBlock(br)
		case "SPBlock":
			p.spBlock(br)
		}
		if br.err != nil {
			return fmt.Errorf("%s: %w", name, br.err)
		}
	default:
		return fmt.Errorf("at byte %d: unknown object type %q (version %d)", start, name, version)
	}
	return nil
}

// finish adds the warnings about what the stream lacked and the event
// counts of the last metadata definitions.
func (p *parser) finish(ended bool) {
	if !ended {
		p.t.Warnings = append(p.t.Warnings, "the file ends without the end-of-stream tag: the trace was cut short (what was read is used)")
	}
	if p.unknownMeta > 0 {
		p.t.Warnings = append(p.t.Warnings, fmt.Sprintf("%d event(s) refer to metadata that was never defined; they are counted but not read", p.unknownMeta))
	}
	if p.missingStacks > 0 {
		p.t.Warnings = append(p.t.Warnings, fmt.Sprintf("%d sample(s) refer to a stack id that no StackBlock defined; they are kept without a stack", p.missingStacks))
	}
	for _, m := range p.defined {
		if m.count > 0 {
			p.t.Stats.ByEvent[m.key] += m.count
			m.count = 0
		}
	}
	p.t.Stats.Threads = len(p.threads)
}

type parser struct {
	sawTrace      bool // the Trace object was read
	h             header
	t             *Trace
	meta          map[uint32]*metadata
	region        map[uint32]int  // stack id → interned stack, until the next sequence point
	interned      map[string]int  // raw stack bytes → index in t.Stacks
	threads       map[uint64]bool // threads with samples
	unknownMeta   int
	missingStacks int
	maxOff        int         // file offset of the latest event's payload
	defined       []*metadata // every definition, for the counts
}

// eventBlock decodes an EventBlock or a MetadataBlock.
func (p *parser) eventBlock(r *reader, isMeta bool) {
	hdrSize := int(r.u16("block header size"))
	flags := r.u16("block flags")
	if r.err == nil && hdrSize < 4 {
		r.fail("block header size %d is less than its own fields", hdrSize)
		return
	}
	r.skip(hdrSize-4, "block header")
	compressed := flags&1 != 0
	var h eventHeader // the previous header: zero at the start of a block
	for r.err == nil && r.left() > 0 {
		if compressed {
			decodeCompressed(r, &h)
		} else {
			h = decodeUncompressed(r)
		}
		if r.err == nil && h.payloadSize > uint32(r.left()) {
			r.fail("event payload of %d bytes, %d left in the block", h.payloadSize, r.left())
		}
		payload := r.bytes(int(h.payloadSize), "event payload")
		payloadOff := r.base + r.off - len(payload)
		if !compressed {
			r.align4("event")
		}
		if r.err != nil {
			return
		}
		if isMeta {
			p.metadataRecord(r, payload)
		} else {
			p.event(&h, payload, payloadOff)
		}
	}
}

// decodeCompressed reads a compressed event header: absent fields repeat
// the previous event's, the sequence number and timestamp are deltas.
func decodeCompressed(r *reader, h *eventHeader) {
	flags := r.u8("event header flags")
	if flags&1 != 0 {
		h.metadataID = uint32(r.uvarint(32, "metadata id"))
	}
	if flags&2 != 0 {
		h.seq += uint32(r.uvarint(32, "sequence number"))
		h.captureTID = r.uvarint(64, "capture thread id")
		h.proc = uint32(r.uvarint(32, "processor number"))
	}
	if h.metadataID != 0 {
		h.seq++
	}
	if flags&4 != 0 {
		h.threadID = r.uvarint(64, "thread id")
	}
	if flags&8 != 0 {
		h.stackID = uint32(r.uvarint(32, "stack id"))
	}
	// Deltas are two's complement: writers step back in time between
	// thread buffers. A timestamp is never negative (decodeUncompressed and
	// this check keep it so), so a delta that wraps it past 2^63 or below 0
	// is corruption.
	d := int64(r.uvarint(64, "timestamp"))
	if ts := h.timestamp + d; ts < 0 {
		r.fail("timestamp %d plus delta %d is not between 0 and 2^63-1", h.timestamp, d)
	} else {
		h.timestamp = ts
	}
	if flags&16 != 0 {
		r.skip(16, "activity id")
	}
	if flags&32 != 0 {
		r.skip(16, "related activity id")
	}
	h.sorted = flags&64 != 0
	if flags&128 != 0 {
		h.payloadSize = uint32(r.uvarint(32, "payload size"))
	}
}

// decodeUncompressed reads a full event header.
func decodeUncompressed(r *reader) eventHeader {
	var h eventHeader
	size := int(r.u32("event size"))
	start := r.off
	id := r.u32("metadata id")
	h.metadataID, h.sorted = id&0x7fffffff, id&0x80000000 != 0
	h.seq = r.u32("sequence number")
	h.threadID = r.u64("thread id")
	h.captureTID = r.u64("capture thread id")
	h.proc = r.u32("processor number")
	h.stackID = r.u32("stack id")
	if ts := r.u64("timestamp"); ts > math.MaxInt64 {
		r.fail("timestamp %d does not fit a signed 64-bit integer", ts)
	} else {
		h.timestamp = int64(ts)
	}
	r.skip(32, "activity ids")
	h.payloadSize = r.u32("payload size")
	if r.err == nil && (size < r.off-start || uint64(h.payloadSize) > uint64(size-(r.off-start))) {
		r.fail("event size %d cannot hold its header and a %d-byte payload", size, h.payloadSize)
	}
	return h
}

// metadataRecord decodes a metadata payload: id, provider, event id, name,
// keywords, version, level (field descriptions and V5 tags are not needed).
func (p *parser) metadataRecord(block *reader, payload []byte) {
	r := &reader{b: payload, base: block.base + block.off - len(payload)}
	id := r.u32("metadata id")
	m := &metadata{}
	m.provider = r.utf16z("provider name")
	m.eventID = int(r.u32("event id"))
	m.name = r.utf16z("event name")
	r.skip(8, "keywords")
	m.version = int(r.u32("event version"))
	if r.err != nil {
		block.err = fmt.Errorf("metadata record: %w", r.err)
		return
	}
	if m.name != "" {
		m.key = m.provider + "/" + m.name
	} else {
		m.key = m.provider + "/" + strconv.Itoa(m.eventID)
	}
	if old := p.meta[id]; old != nil && old.count > 0 {
		// A redefined id: keep the old definition's count.
		p.t.Stats.ByEvent[old.key] += old.count
		old.count = 0
	}
	p.meta[id] = m
	p.defined = append(p.defined, m)
	p.t.Stats.Metadata++
}

// event dispatches one event; off is the payload's file offset.
func (p *parser) event(h *eventHeader, payload []byte, off int) {
	st := &p.t.Stats
	st.Events++
	if st.Events == 1 || h.timestamp < st.MinTimestamp {
		st.MinTimestamp = h.timestamp
	}
	if h.timestamp > st.MaxTimestamp {
		st.MaxTimestamp = h.timestamp
		p.maxOff = off
	}
	m := p.meta[h.metadataID]
	if m == nil {
		p.unknownMeta++
		st.ByEvent["?/metadata "+strconv.Itoa(int(h.metadataID))]++
		return
	}
	m.count++
	r := &reader{b: payload, base: off}
	switch {
	case m.provider == providerSampleProfiler && m.eventID == eventThreadSample:
		s := Sample{Thread: h.threadID, Timestamp: h.timestamp, Type: -1, Stack: -1}
		if len(payload) >= 4 {
			s.Type = int(int32(r.u32("sample type")))
		}
		if s.Type >= 0 && s.Type < 3 {
			st.SamplesByType[s.Type]++
		}
		if h.stackID != 0 {
			if i, ok := p.region[h.stackID]; ok {
				s.Stack = i
			} else {
				p.missingStacks++
			}
		}
		p.threads[h.threadID] = true
		p.t.Samples = append(p.t.Samples, s)
	case (m.provider == providerRuntime || m.provider == providerRundown) && (m.eventID == eventMethodLoadVerbose || m.eventID == eventMethodUnloadVerbose && m.provider == providerRundown):
		var mt Method
		mt.Timestamp = h.timestamp
		mt.Rundown = m.provider == providerRundown
		r.u64("method id")
		mt.ModuleID = r.u64("module id")
		mt.Start = r.u64("method start address")
		mt.Size = uint64(r.u32("method size"))
		r.u32("method token")
		r.u32("method flags")
		ns, nsOff := r.utf16zRaw("method namespace")
		name, nameOff := r.utf16zRaw("method name")
		mt.nsOff, mt.nsLen = uint32(nsOff), uint32(len(ns))
		mt.nameOff, mt.nameLen = uint32(nameOff), uint32(len(name))
		if r.err == nil && mt.Size > 0 {
			p.t.Methods = append(p.t.Methods, mt)
		}
	case m.provider == providerRuntime && m.eventID == eventModuleLoad,
		m.provider == providerRundown && (m.eventID == eventModuleDCStart || m.eventID == eventModuleDCEnd):
		id := r.u64("module id")
		r.u64("assembly id")
		r.u32("module flags")
		r.u32("reserved")
		p.module(id, r)
	case m.eventID == eventDomainModuleLoad && (m.provider == providerRuntime || m.provider == providerRundown),
		m.eventID == eventModuleLoad && m.provider == providerRundown: // DomainModuleDCStart/End
		id := r.u64("module id")
		r.u64("assembly id")
		r.u64("app domain id")
		r.u32("module flags")
		r.u32("reserved")
		p.module(id, r)
	}
}

func (p *parser) module(id uint64, r *reader) {
	ilRaw, _ := r.utf16zRaw("module IL path")
	nativeRaw, _ := r.utf16zRaw("module native path")
	il, native := decodeUTF16(ilRaw), decodeUTF16(nativeRaw)
	if r.err != nil {
		return
	}
	if il == "" {
		il = native
	}
	if il != "" {
		p.t.Modules[id] = il
	}
}

// stackBlock interns the block's stacks for the events up to the next
// sequence point.
func (p *parser) stackBlock(r *reader) {
	first := r.u32("first stack id")
	count := int(r.u32("stack count"))
	if r.err == nil && count > r.left()/4 {
		r.fail("%d stacks cannot fit in the %d bytes left", count, r.left())
		return
	}
	ps := p.h.pointerSize
	for i := 0; i < count && r.err == nil; i++ {
		n := int(r.u32("stack size"))
		if r.err == nil && (n > maxStackBytes || n%ps != 0) {
			r.fail("stack %d: %d bytes is not a whole number of %d-byte addresses below %d bytes", first+uint32(i), n, ps, maxStackBytes)
			return
		}
		raw := r.bytes(n, "stack")
		if r.err != nil {
			return
		}
		p.t.Stats.StackRecords++
		idx, ok := p.interned[string(raw)]
		if !ok {
			ips := make([]uint64, n/ps)
			sr := &reader{b: raw}
			for j := range ips {
				if ps == 8 {
					ips[j] = sr.u64("ip")
				} else {
					ips[j] = uint64(sr.u32("ip"))
				}
			}
			idx = len(p.t.Stacks)
			p.t.Stacks = append(p.t.Stacks, ips)
			p.interned[string(raw)] = idx
		}
		p.region[first+uint32(i)] = idx
	}
}

// spBlock is a sequence point: stack ids defined before it expire.
func (p *parser) spBlock(r *reader) {
	r.u64("sequence point timestamp")
	n := int(r.u32("thread count"))
	if r.err == nil && (n > maxSPThreads || n*12 > r.left()) {
		r.fail("%d threads cannot fit in the %d bytes left", n, r.left())
		return
	}
	r.skip(n*12, "sequence point threads")
	clear(p.region)
}
