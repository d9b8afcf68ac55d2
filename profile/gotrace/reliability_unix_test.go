//go:build unix

package gotrace

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// batchHeaders walks the batches of a trace the running Go wrote, or skips
// when its framing does not read to the end.
func batchHeaders(t *testing.T, data []byte) []batchFrame {
	t.Helper()
	var hs []batchFrame
	minor, _ := strconv.Atoi(strings.TrimPrefix(Version(data), "1."))
	if cut, ok := walkBatches(data, minor, func(b batchFrame) { hs = append(hs, b) }); cut != "" || !ok {
		t.Skipf("unexpected trace layout (go %s): %s", Version(data), cut)
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
	_, _, err := Parse(patch(data, h.sizeOff, h.events, 1<<40), Options{})
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
		_, _, err := Parse(patch(data, h.tsOff, h.sizeOff, target), Options{})
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
