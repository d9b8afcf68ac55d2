//go:build !linux

package wasmhost

import "os"

func osPageSize() int { return os.Getpagesize() }

// slotMemory elsewhere allocates each slot from the Go heap on first use;
// there is no madvise, so a reset zeroes the whole dirtied range with memset
// and keep-resident changes nothing but the counters.
type slotMemory struct {
	slots    [][]byte
	slotSize int
}

func newSlotMemory(size, slotSize int) (slotMemory, error) {
	return slotMemory{slots: make([][]byte, size), slotSize: slotSize}, nil
}

func (m slotMemory) slot(i int) []byte {
	if m.slots[i] == nil {
		m.slots[i] = make([]byte, m.slotSize)
	}
	return m.slots[i]
}

func (m slotMemory) decommit(b []byte) { clear(b) }

func (m slotMemory) close() error { return nil }
