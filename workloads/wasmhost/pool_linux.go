//go:build linux

package wasmhost

import (
	"os"

	"golang.org/x/sys/unix"
)

func osPageSize() int { return os.Getpagesize() }

// slotMemory on Linux is one private anonymous mapping holding every slot,
// reserved with MAP_NORESERVE: a slot costs memory only once touched, as
// Wasmtime's pooling allocator reserves its slots.
type slotMemory struct {
	region   *[]byte // nil after close
	slotSize int
}

func newSlotMemory(size, slotSize int) (slotMemory, error) {
	b, err := unix.Mmap(-1, 0, size*slotSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return slotMemory{}, err
	}
	return slotMemory{region: &b, slotSize: slotSize}, nil
}

func (m slotMemory) slot(i int) []byte {
	r := *m.region
	return r[i*m.slotSize : (i+1)*m.slotSize : (i+1)*m.slotSize]
}

// decommit drops the pages of b (page-aligned start): they read back as
// zero and fault in fresh on the next touch. When madvise fails (it should
// not on a private anonymous mapping) the bytes are zeroed by hand, so a
// slot is never handed out dirty.
func (m slotMemory) decommit(b []byte) {
	if len(b) == 0 {
		return
	}
	if err := unix.Madvise(b, unix.MADV_DONTNEED); err != nil {
		clear(b)
	}
}

func (m slotMemory) close() error {
	if *m.region == nil {
		return nil
	}
	err := unix.Munmap(*m.region)
	*m.region = nil
	return err
}
