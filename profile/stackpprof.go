package profile

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync/atomic"

	kgzip "github.com/klauspost/compress/gzip"
)

// StackWriter writes a gzipped pprof profile of one sample type as its
// samples come, each a stack of frame ids and a value: a sample is encoded
// and compressed when it is added, so the writer holds only what names the
// frames (a location and function per frame id used, the strings of the
// labels), never the samples. Frame ids are small integers that the
// caller names at Close; each becomes one function and one location with
// that function as its only line (no address, file or line number). The
// string table and the functions are written after the samples, which
// protobuf and pprof's reader allow. Compression runs on a goroutine of
// its own, beside the encoding; Close ends it, and must be called. Use
// NewStackWriter.
type StackWriter struct {
	zw *kgzip.Writer
	// full carries encoded buffers to the goroutine that compresses
	// them (compress), so that encoding and compression overlap; free
	// brings them back. done closes when it has ended, with zerr.
	full, free chan []byte
	done       chan struct{}
	zerr       error
	failed     atomic.Bool
	buf        []byte
	body       []byte // a sample's encoding, before its length
	strs       []string
	str        map[string]int64
	loc        []uint64 // frame id → location id (= function id), 0: not used yet
	used       []int32  // the frame ids used, in order of their location ids
	stack      []uint64
}

// Wire numbers of profile.proto (github.com/google/pprof/proto).
const (
	fProfileSampleType = 1
	fProfileSample     = 2
	fProfileLocation   = 4
	fProfileFunction   = 5
	fProfileStrings    = 6
	fProfilePeriodType = 11
	fProfilePeriod     = 12
	fValueTypeType     = 1
	fValueTypeUnit     = 2
	fSampleLocation    = 1
	fSampleValue       = 2
	fSampleLabel       = 3
	fLabelKey          = 1
	fLabelStr          = 2
	fLocationID        = 1
	fLocationLine      = 4
	fLineFunction      = 1
	fFunctionID        = 1
	fFunctionName      = 2
	fFunctionSysName   = 3
	wireVarint         = 0
	wireBytes          = 2
)

// NewStackWriter starts a profile on w whose samples are of type typ in
// unit (period type the same, period 1).
func NewStackWriter(w io.Writer, typ, unit string) *StackWriter {
	zw, _ := kgzip.NewWriterLevel(w, kgzip.BestSpeed) // the level is valid; speed: the diff is written once, read rarely
	sw := &StackWriter{zw: zw, str: map[string]int64{}, full: make(chan []byte, 2), free: make(chan []byte, 3), done: make(chan struct{})}
	for range 3 {
		sw.free <- make([]byte, 0, flushAt+flushAt/4)
	}
	sw.buf = <-sw.free
	go sw.compress()
	sw.intern("")
	vt := sw.valueType(typ, unit)
	sw.buf = appendBytesField(sw.buf, fProfileSampleType, vt)
	sw.buf = appendBytesField(sw.buf, fProfilePeriodType, vt)
	sw.buf = appendVarintField(sw.buf, fProfilePeriod, 1)
	return sw
}

func (w *StackWriter) valueType(typ, unit string) []byte {
	var b []byte
	b = appendVarintField(b, fValueTypeType, uint64(w.intern(typ)))
	return appendVarintField(b, fValueTypeUnit, uint64(w.intern(unit)))
}

// intern returns the string table index of s.
func (w *StackWriter) intern(s string) int64 {
	if i, ok := w.str[s]; ok {
		return i
	}
	i := int64(len(w.strs))
	w.strs = append(w.strs, s)
	w.str[s] = i
	return i
}

// Add writes one sample: stack holds frame ids root first (non-negative),
// value is rounded to an integer, and labels are key, value pairs
// (a label with an empty value is left out). A sample of value 0 after
// rounding is skipped. After an error of the writer, Add does nothing.
func (w *StackWriter) Add(stack []int32, value float64, labels ...string) {
	v := int64(math.Round(value))
	if w.failed.Load() || v == 0 {
		return
	}
	w.stack = w.stack[:0]
	for i := len(stack) - 1; i >= 0; i-- { // pprof lists the leaf first
		w.stack = append(w.stack, w.location(stack[i]))
	}
	b := appendPacked(w.body[:0], fSampleLocation, w.stack)
	b = appendVarintField(b, fSampleValue, uint64(v)) // one value: not packed, as pprof reads either
	for i := 0; i+1 < len(labels); i += 2 {
		if labels[i+1] == "" {
			continue
		}
		var l [24]byte
		lb := appendVarintField(l[:0], fLabelKey, uint64(w.intern(labels[i])))
		lb = appendVarintField(lb, fLabelStr, uint64(w.intern(labels[i+1])))
		b = appendBytesField(b, fSampleLabel, lb)
	}
	w.body = b
	w.buf = appendBytesField(w.buf, fProfileSample, b)
	w.flush(false)
}

// location is the location id of frame id, given on first use.
func (w *StackWriter) location(id int32) uint64 {
	if int(id) >= len(w.loc) {
		w.loc = append(w.loc, make([]uint64, int(id)+1-len(w.loc))...)
	}
	if w.loc[id] == 0 {
		w.used = append(w.used, id)
		w.loc[id] = uint64(len(w.used))
	}
	return w.loc[id]
}

// Close writes the locations and functions of the frames used, named by
// name, and the string table, and ends the gzip stream (not w's writer).
func (w *StackWriter) Close(name func(id int32) string) error {
	for i, id := range w.used {
		if w.failed.Load() {
			break
		}
		n := uint64(i + 1)
		var line, loc, fn []byte
		line = appendVarintField(line, fLineFunction, n)
		loc = appendVarintField(loc, fLocationID, n)
		loc = appendBytesField(loc, fLocationLine, line)
		s := uint64(w.intern(name(id)))
		fn = appendVarintField(fn, fFunctionID, n)
		fn = appendVarintField(fn, fFunctionName, s)
		fn = appendVarintField(fn, fFunctionSysName, s)
		w.buf = appendBytesField(w.buf, fProfileLocation, loc)
		w.buf = appendBytesField(w.buf, fProfileFunction, fn)
		w.flush(false)
	}
	for _, s := range w.strs {
		if w.failed.Load() {
			break
		}
		w.buf = appendBytesField(w.buf, fProfileStrings, []byte(s))
		w.flush(false)
	}
	w.flush(true)
	close(w.full)
	<-w.done
	if w.zerr != nil {
		return fmt.Errorf("writing pprof: %w", w.zerr)
	}
	return nil
}

// flush hands what w.buf holds to compress once it holds flushAt bytes,
// or when all is set.
func (w *StackWriter) flush(all bool) {
	if !all && len(w.buf) < flushAt {
		return
	}
	w.full <- w.buf
	w.buf = (<-w.free)[:0]
}

// compress compresses the buffers flush hands it, in order, until full
// closes, then ends the gzip stream; after an error it only hands them
// back (Add and Close then stop encoding).
func (w *StackWriter) compress() {
	defer close(w.done)
	for b := range w.full {
		if w.zerr == nil {
			if _, w.zerr = w.zw.Write(b); w.zerr != nil {
				w.failed.Store(true)
			}
		}
		w.free <- b
	}
	if err := w.zw.Close(); w.zerr == nil {
		w.zerr = err
	}
}

// flushAt is how much encoding StackWriter gathers before compressing it.
const flushAt = 64 << 10

func appendVarintField(b []byte, field int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|wireVarint)
	return binary.AppendUvarint(b, v)
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendPacked appends vs as one packed repeated field.
func appendPacked(b []byte, field int, vs []uint64) []byte {
	n := 0
	for _, v := range vs {
		n += varintLen(v)
	}
	b = binary.AppendUvarint(b, uint64(field)<<3|wireBytes)
	b = binary.AppendUvarint(b, uint64(n))
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
