package gotrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The batch framing of Go 1.22 and later traces (the runtime's
// internal/trace/tracev2): after the 16-byte header, each batch is an
// event-batch byte, four unsigned varints (generation, thread, time stamp,
// length) and length bytes of events. Go 1.23 added experimental batches,
// whose type byte is followed by an experiment byte; Go 1.26 ends each
// generation with a one-byte event.
const (
	headerLen         = 16
	evEventBatch      = 1
	evExperimentBatch = 49
	evEndOfGeneration = 52
	maxBatchSize      = 64 << 10
)

// batchFrame is where one batch lies in a trace: its first byte, its
// header's time stamp and length fields (each up to the next field), the
// first byte of its events, and the time stamp and length.
type batchFrame struct {
	start, tsOff, sizeOff, events int
	ts, size                      uint64
}

// walkBatches reads the batch framing of a trace of Go 1.minor (22 or
// later), calling fn for each batch whose header reads. It returns where
// the framing ends early (cut: the file ends inside a batch, named), or
// ok false where it holds a byte no batch starts with, or a varint or
// length no writer makes (corrupt, not cut). Both are zero when the
// framing reads to the end.
func walkBatches(data []byte, minor int, fn func(batchFrame)) (cut string, ok bool) {
	for off := headerLen; off < len(data); {
		b := batchFrame{start: off}
		switch data[off] {
		case evEventBatch:
			off++
		case evExperimentBatch:
			if minor < 23 {
				return "", false
			}
			off += 2
		case evEndOfGeneration:
			if minor < 26 {
				return "", false
			}
			off++
			continue
		default:
			return "", false
		}
		for i := range 4 { // generation, thread, time stamp, length
			if off >= len(data) {
				return fmt.Sprintf("the file ends at byte %d inside the header of the batch at byte %d", len(data), b.start), true
			}
			v, n := binary.Uvarint(data[off:])
			switch {
			case n == 0:
				return fmt.Sprintf("the file ends at byte %d inside the header of the batch at byte %d", len(data), b.start), true
			case n < 0:
				return "", false
			}
			switch i {
			case 2:
				b.tsOff, b.ts = off, v
			case 3:
				b.sizeOff, b.size = off, v
			}
			off += n
		}
		if b.size > maxBatchSize {
			return "", false
		}
		b.events = off
		fn(b)
		if uint64(len(data)-off) < b.size {
			return fmt.Sprintf("the file ends at byte %d inside the batch at byte %d, which holds %d bytes of events", len(data), b.start, b.size), true
		}
		off += int(b.size)
	}
	return "", true
}

// cutShort says where a trace that its parser refused was cut: the batch
// whose header or events run past the end of data (Go 1.22 and later), or,
// for the older formats, which have no such framing, the end of data when
// the parser ran out of it (err is io.EOF or io.ErrUnexpectedEOF). It
// returns "" when nothing shows a cut.
func cutShort(data []byte, version string, err error) string {
	minor, _ := strconv.Atoi(strings.TrimPrefix(version, "1."))
	if minor < 22 {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Sprintf("the file ends at byte %d, before its events do", len(data))
		}
		return ""
	}
	cut, _ := walkBatches(data, minor, func(batchFrame) {})
	return cut
}
