//go:build unix

package inflate

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only; unmap releases them.
// ok is false where f cannot be mapped (the caller reads it instead).
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	return b, func() { syscall.Munmap(b) }, true
}
