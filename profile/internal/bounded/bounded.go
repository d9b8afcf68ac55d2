// Package bounded reads a stream whose size nobody vouches for (a gzip or
// zip member inflating, an HTTP body, standard input) into one buffer,
// failing as soon as more than a limit has arrived, having held no more
// than the limit.
//
// Package profile reads files, bodies and containers with it, and package
// fleet the answers of continuous profilers; it lives here so that both
// can, fleet being imported by profile.
package bounded

import (
	"errors"
	"io"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"unsafe"
)

// ErrPastLimit is ReadAll's error for a reader with more than the limit.
// It says nothing of the source or the limit: the caller words the error.
var ErrPastLimit = errors.New("past the size limit")

// growRatio is how far one step believes a size hint beyond the bytes that
// really arrived: a step allocates at most growRatio-1 times them, and
// the hint is taken whole (one buffer of its size, the bytes so far copied
// in) once it is within growRatio² of them. A right hint thus costs one
// buffer, or a buffer and pieces adding up to a sixteenth of it; a lying
// one (a truncated file's last four bytes, a crafted trailer, a false
// Content-Length) costs at most growRatio² times the data that arrived,
// never what the lie says.
const growRatio = 4

// minChunk is the smallest piece ReadAll reads into, and maxPiece the
// largest after the first: a stream that ends is joined into one buffer
// of its size, each piece unmapped once copied, so the join holds the
// data once and a piece.
const (
	minChunk = 32 << 10
	maxPiece = 8 << 20
)

// ReadAll reads r to its end and returns its bytes in one buffer. Once
// more than maxSize bytes have arrived it fails with ErrPastLimit, having
// held at most maxSize bytes: what arrives is kept in pieces that are
// never copied while the stream goes on, each no larger than what the
// limit leaves, so a stream that runs past the limit (a compression
// bomb, an endless body) is refused holding the limit and nothing more.
// A stream that ends is joined into one buffer; the pieces after the
// first are mapped outside the Go heap and each is unmapped as soon as it
// is copied, so the join peaks at the data and one piece (8 MiB), not
// twice the data, and leaves nothing for the collector.
//
// hint is the size r is said to have (0: unknown), and first the most
// its word alone may allocate (0: no bound, for a hint that is a regular
// file's own stat). A right hint within first fills one buffer of exactly
// that size, never copied; a larger one is believed in steps (see
// growRatio), and a hint past maxSize not at all. On an error of r it
// returns, with the error, what it read.
func ReadAll(r io.Reader, maxSize, hint, first int64) ([]byte, error) {
	if hint > maxSize {
		// Wrong, or the stream fails anyway: either way no reason to
		// believe any of it.
		hint = 0
	}
	c := hint
	if c <= 0 {
		c = minChunk
	}
	if first > 0 {
		c = min(c, first)
	}
	// head is the first buffer (on the heap: returned as it is when the
	// stream fits it); pieces are the mapped ones after it, the last the
	// one being filled. held counts the bytes of the full ones.
	head := make([]byte, 0, min(c, maxSize))
	var pieces [][]byte
	defer func() {
		for _, p := range pieces {
			unmapPiece(p)
		}
	}()
	held := int64(0)
	// drain hands every byte so far to add, in order, unmapping each
	// piece once handed.
	drain := func(add func([]byte)) {
		add(head)
		for i, p := range pieces {
			add(p)
			unmapPiece(p)
			pieces[i] = nil
		}
		pieces = nil
	}
	join := func() []byte {
		if len(pieces) == 0 {
			return head
		}
		return joinUnzeroed(held+int64(len(pieces[len(pieces)-1])), drain)
	}
	buf := &head
	for {
		if len(*buf) == cap(*buf) {
			// Full: one more byte says whether there is more, so that a
			// right hint, or data of exactly maxSize, takes no further
			// piece.
			var one [1]byte
			n, err := io.ReadFull(r, one[:])
			if n == 0 {
				if err == io.EOF {
					return join(), nil
				}
				return join(), err
			}
			total := held + int64(len(*buf))
			if total >= maxSize {
				return nil, ErrPastLimit
			}
			if hint > total && total*growRatio*growRatio >= hint {
				// The hint is within reach: one buffer of its size
				// holds what came and what is still to come.
				out := make([]byte, 0, min(hint, maxSize))
				drain(func(p []byte) { out = append(out, p...) })
				head = append(out, one[0])
				held, buf = 0, &head
				continue
			}
			held = total
			next := max(total/2, minChunk) // no hint, or past it
			if hint > total {
				next = max(next, total*(growRatio-1))
			}
			p, err := mapPiece(int(min(next, maxPiece, maxSize-total)))
			if err != nil {
				return nil, err
			}
			pieces = append(pieces, append(p, one[0]))
			buf = &pieces[len(pieces)-1]
		}
		n, err := r.Read((*buf)[len(*buf):cap(*buf)])
		*buf = (*buf)[:len(*buf)+n]
		if err == io.EOF {
			return join(), nil
		}
		if err != nil {
			return join(), err
		}
	}
}

// joinUnzeroed returns the n bytes that drain hands over, in one heap
// buffer that the runtime does not zero first (strings.Builder's Grow
// allocates so). make zeroes a large allocation at once when the heap
// used its pages before; done for the join while every piece is still
// mapped, that would touch the whole buffer before the first piece is
// copied, and the process would hold the data twice (where the pages
// are depends on when collections ran: on a busy machine, now and then).
// The builder and its string are dropped here, so the returned bytes are
// the caller's to write.
func joinUnzeroed(n int64, drain func(add func([]byte))) []byte {
	var b strings.Builder
	b.Grow(int(n))
	drain(func(p []byte) { b.Write(p) })
	s := b.String()
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// mapped counts the bytes of pieces mapped now, and mappedPeak the most
// at once, for MappedPeak: mapped memory is not the heap's, so the
// runtime's counts miss it.
var mapped, mappedPeak atomic.Int64

// MappedPeak runs f and returns the most bytes of pieces that were
// mapped at once meanwhile, beyond those mapped before: what tests that
// count the heap's allocations add to them. Reads running beside f, in
// other goroutines, count too.
func MappedPeak(f func()) int64 {
	base := mapped.Load()
	mappedPeak.Store(base)
	f()
	return mappedPeak.Load() - base
}

// mapPiece is newPiece, counted.
func mapPiece(n int) ([]byte, error) {
	p, err := newPiece(n)
	if err == nil {
		now := mapped.Add(int64(cap(p)))
		for peak := mappedPeak.Load(); now > peak && !mappedPeak.CompareAndSwap(peak, now); peak = mappedPeak.Load() {
		}
	}
	return p, err
}

// unmapPiece is freePiece, counted.
func unmapPiece(p []byte) {
	mapped.Add(-int64(cap(p)))
	freePiece(p)
}

// largeGarbage is the size of an abandoned buffer that DropLarge collects
// at once.
const largeGarbage = 16 << 20

// DropLarge collects at once a buffer of n bytes that its caller has
// just abandoned (no reference to it may remain), when it is large, and
// gives its pages back to the system. A caller that reads its input
// again (another decoder, one more layer) may fill as much memory anew,
// partly in pieces mapped outside the heap, and the runtime set its next
// collection's goal while the buffer was live: without this the two
// would be resident together.
func DropLarge(n int64) {
	if n >= largeGarbage {
		debug.FreeOSMemory()
	}
}
