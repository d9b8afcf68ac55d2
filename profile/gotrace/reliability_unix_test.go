//go:build unix

package gotrace

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// Batch header types of the Go 1.22+ trace format (internal/trace/tracev2
// in the Go tree): a batch is the type byte, for an experimental batch an
// experiment byte, then uvarints generation, M, base timestamp and size,
// then size bytes. An end-of-generation marker is one byte.
const (
	evEventBatch        = 1
	evExperimentalBatch = 49
	evEndOfGeneration   = 52 // Go 1.26
)

// batchHeader is where one batch's header fields lie in a trace.
type batchHeader struct {
	tsOff, tsEnd, sizeOff, sizeEnd int
	ts, size                       uint64
}

// batchHeaders walks the batches of a trace the running Go wrote, or skips
// when it does not look like that format.
func batchHeaders(t *testing.T, data []byte) []batchHeader {
	t.Helper()
	var hs []batchHeader
	uv := func(off int) (uint64, int) {
		v, n := binary.Uvarint(data[off:])
		if n <= 0 {
			t.Skipf("unexpected trace layout at byte %d", off)
		}
		return v, off + n
	}
	for off := 16; off < len(data); {
		switch data[off] {
		case evEndOfGeneration:
			off++
			continue
		case evEventBatch:
			off++
		case evExperimentalBatch:
			off += 2
		default:
			t.Skipf("unexpected batch type %d at byte %d (not the Go 1.26 layout)", data[off], off)
		}
		var h batchHeader
		_, off = uv(off) // generation
		_, off = uv(off) // M
		h.tsOff = off
		h.ts, off = uv(off)
		h.tsEnd, h.sizeOff = off, off
		h.size, off = uv(off)
		h.sizeEnd = off
		hs = append(hs, h)
		off += int(h.size)
	}
	return hs
}

// patch returns data with data[from:to] replaced by the uvarint v.
func patch(data []byte, from, to int, v uint64) []byte {
	out := append([]byte(nil), data[:from]...)
	out = binary.AppendUvarint(out, v)
	return append(out, data[to:]...)
}

// A captured trace whose first batch's length field claims 2^40 bytes
// fails (x/exp/trace bounds batches at 64 KiB) instead of allocating it.
func TestLyingBatchLength(t *testing.T) {
	data := captured(t)
	hs := batchHeaders(t, data)
	h := hs[0]
	_, _, err := Parse(patch(data, h.sizeOff, h.sizeEnd, 1<<40), Options{})
	if err == nil || !strings.Contains(err.Error(), "invalid batch size 1099511627776") {
		t.Errorf("error %v", err)
	}
}

// A captured trace with one batch's base timestamp patched far into the
// future: every goroutine alive at the end is charged up to there, and
// their total time would wrap. Parse must say so, never return negative
// or wrapped values.
func TestTimestampsOverflowTotal(t *testing.T) {
	data := captured(t)
	hs := batchHeaders(t, data)
	p, _, err := Parse(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Nanoseconds per tick: the trace's span over the ticks its batches
	// cover, near enough to aim below 2^63 after the conversion.
	minTS, maxTS := hs[0].ts, hs[0].ts
	for _, h := range hs {
		minTS, maxTS = min(minTS, h.ts), max(maxTS, h.ts)
	}
	if maxTS == minTS || p.DurationNanos <= 0 {
		t.Skip("the trace spans no time")
	}
	nsPerTick := float64(p.DurationNanos) / float64(maxTS-minTS)
	var tried []string
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		target := uint64(6e18 / nsPerTick) // about 2^62.4 ns: two such goroutines overflow
		_, _, err := Parse(patch(data, h.tsOff, h.tsEnd, target), Options{})
		if err == nil {
			tried = append(tried, fmt.Sprintf("batch %d: no error", i))
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "take the goroutine time past 2^63-1 ns") {
			t.Logf("batch %d patched: %v", i, err)
			return
		}
		tried = append(tried, fmt.Sprintf("batch %d: %v", i, err))
	}
	t.Errorf("no patched batch made the total overflow:\n%s", strings.Join(tried, "\n"))
}
