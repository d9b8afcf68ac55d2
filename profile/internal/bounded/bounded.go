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

// minChunk is the smallest piece ReadAll reads into.
const minChunk = 32 << 10

// ReadAll reads r to its end and returns its bytes in one buffer. Once
// more than maxSize bytes have arrived it fails with ErrPastLimit, having
// held at most maxSize bytes: what arrives is kept in pieces that are
// never copied while the stream goes on, each no larger than what the
// limit leaves, so a stream that runs past the limit (a compression
// bomb, an endless body) is refused holding the limit and nothing more.
// A stream that ends is joined into one buffer, its bytes then held twice
// for the length of the copy, unless it fitted one piece.
//
// hint is the size r is said to have (0: unknown), and first the most
// its word alone may allocate (0: no bound, for a hint that is a regular
// file's own stat). A right hint within first fills one piece of exactly
// that size, never copied; a larger one is believed in steps (see
// growRatio). On an error of r it returns, with the error, what it read.
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
	var (
		pieces [][]byte // full pieces before buf, in order
		held   int64    // the bytes in pieces
		buf    = make([]byte, 0, min(c, maxSize))
	)
	join := func() []byte {
		if len(pieces) == 0 {
			return buf
		}
		out := make([]byte, 0, held+int64(len(buf)))
		for i, p := range pieces {
			out = append(out, p...)
			pieces[i] = nil // garbage as soon as copied
		}
		return append(out, buf...)
	}
	for {
		if len(buf) == cap(buf) {
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
			total := held + int64(len(buf))
			if total >= maxSize {
				return nil, ErrPastLimit
			}
			next := max(total/2, minChunk) // no hint, or past it
			if hint > total {
				if total*growRatio*growRatio >= hint {
					// The hint is within reach: one buffer of its size
					// holds what came and what is still to come.
					whole := make([]byte, 0, min(hint, maxSize))
					for _, p := range pieces {
						whole = append(whole, p...)
					}
					buf = append(append(whole, buf...), one[0])
					pieces, held = nil, 0
					continue
				}
				next = max(next, total*(growRatio-1))
			}
			pieces = append(pieces, buf)
			held = total
			buf = make([]byte, 0, min(next, maxSize-total))
			buf = append(buf, one[0])
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return join(), nil
		}
		if err != nil {
			return join(), err
		}
	}
}
