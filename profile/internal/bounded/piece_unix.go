//go:build unix

package bounded

import (
	"fmt"
	"syscall"
)

// newPiece returns an empty slice of n bytes' capacity in anonymous
// memory outside the Go heap, which freePiece gives back to the system at
// once.
func newPiece(n int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("no memory for %d more bytes: %v", n, err)
	}
	return b[:0], nil
}

// freePiece unmaps a piece of newPiece. Nothing may refer to it after.
func freePiece(b []byte) { syscall.Munmap(b[:cap(b)]) }
