package wasmhost

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// Pool is a pooling allocator for guest linear memories, modelled on
// Wasmtime's PoolingAllocationConfig:
//
//   - Size slots (Wasmtime's total_memories) of SlotSize bytes each are
//     reserved up front as one anonymous mapping (on Linux; MAP_NORESERVE,
//     so untouched slots cost address space, not memory).
//   - A slot is leased before a module is instantiated and handed to wazero
//     through experimental.WithMemoryAllocator. When the pool is full,
//     Acquire fails at once with a *FullError: no waiting, no queueing,
//     and never wazero's panic (wazero panics when an allocator cannot
//     provide the minimum size).
//   - When the instance's memory is freed, the slot is reset the way
//     Wasmtime resets it (linear_memory_keep_resident): the first
//     KeepResident bytes of the accessible size are zeroed with a memset
//     and stay resident; the rest is decommitted with madvise(MADV_DONTNEED),
//     which reads back as zero and faults fresh pages in on the next touch.
//     Either way the next lease sees only zeros.
//   - Free slots are reused most-recently-used first, as Wasmtime prefers a
//     warm slot already used by the same module (one module here).
type Pool struct {
	slotSize int
	size     int
	keep     int // KeepResident rounded up to the OS page size
	mem      slotMemory

	mu    sync.Mutex
	free  []int // free slots that have been used, most recent last
	fresh int   // slots [fresh, size) have never been leased
	inUse int
	peak  int

	refused   atomic.Int64
	resets    atomic.Int64
	memsetB   atomic.Int64
	decommitB atomic.Int64
}

// FullError is Acquire's error when every slot is leased; it names the
// limit, like Wasmtime's PoolConcurrencyLimitError. A command that sets
// the pool's size from a flag can match it with errors.As and name the
// flag.
type FullError struct{ Limit int }

func (e *FullError) Error() string {
	return fmt.Sprintf("plugin pool full: all %d memory slots are in use (the pool's size, Wasmtime's total_memories)", e.Limit)
}

// NewPool reserves size slots of slotSize bytes. slotSize is rounded up to
// the OS page size, keepResident too (0 resets every slot with madvise
// alone; a value at least the accessible size resets it with memset alone).
func NewPool(size, slotSize int, keepResident int64) (*Pool, error) {
	if size < 1 {
		return nil, fmt.Errorf("pool size must be at least 1, not %d", size)
	}
	if slotSize < 1 {
		return nil, fmt.Errorf("slot size must be positive, not %d", slotSize)
	}
	if keepResident < 0 {
		return nil, fmt.Errorf("keep-resident must not be negative, not %d", keepResident)
	}
	ps := osPageSize()
	slotSize = roundUp(slotSize, ps)
	keep := int64(slotSize)
	if keepResident < keep {
		keep = int64(roundUp(int(keepResident), ps))
	}
	if int64(size)*int64(slotSize) > 1<<40 {
		return nil, fmt.Errorf("pool of %d slots of %d bytes would reserve more than 1 TiB of address space", size, slotSize)
	}
	mem, err := newSlotMemory(size, slotSize)
	if err != nil {
		return nil, fmt.Errorf("reserving %d slots of %d bytes: %w", size, slotSize, err)
	}
	return &Pool{slotSize: slotSize, size: size, keep: int(keep), mem: mem}, nil
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// Size is the number of slots; SlotSize the bytes in each.
func (p *Pool) Size() int     { return p.size }
func (p *Pool) SlotSize() int { return p.slotSize }

// KeepResident is the reset's memset prefix in bytes (page-rounded).
func (p *Pool) KeepResident() int { return p.keep }

// Acquire leases a slot or fails at once with a *FullError. The lease must
// be released (Release) on every path; Free, called by wazero when the
// instance closes, releases it too, and releasing twice is harmless.
func (p *Pool) Acquire() (*Lease, error) {
	p.mu.Lock()
	var slot int
	switch {
	case len(p.free) > 0:
		slot = p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
	case p.fresh < p.size:
		slot = p.fresh
		p.fresh++
	default:
		p.mu.Unlock()
		p.refused.Add(1)
		return nil, &FullError{Limit: p.size}
	}
	p.inUse++
	if p.inUse > p.peak {
		p.peak = p.inUse
	}
	p.mu.Unlock()
	return &Lease{p: p, slot: slot, buf: p.mem.slot(slot)}, nil
}

func (p *Pool) put(slot int) {
	p.mu.Lock()
	p.free = append(p.free, slot)
	p.inUse--
	p.mu.Unlock()
}

// Close unmaps the slots. Leases must all be released first.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inUse != 0 {
		return fmt.Errorf("closing a pool with %d slots still leased", p.inUse)
	}
	return p.mem.close()
}

// PoolStats are the pool's counters.
type PoolStats struct {
	Size          int   `json:"size"`
	SlotBytes     int   `json:"slot_bytes"`
	KeepResident  int   `json:"keep_resident_bytes"`
	InUse         int   `json:"in_use"`
	Peak          int   `json:"peak_in_use"`
	SlotsTouched  int   `json:"slots_touched"` // distinct slots ever leased
	Refused       int64 `json:"refused"`       // Acquire calls that found the pool full
	Resets        int64 `json:"resets"`
	MemsetBytes   int64 `json:"memset_bytes"`
	DecommitBytes int64 `json:"decommit_bytes"`
}

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	s := PoolStats{Size: p.size, SlotBytes: p.slotSize, KeepResident: p.keep, InUse: p.inUse, Peak: p.peak, SlotsTouched: p.fresh}
	p.mu.Unlock()
	s.Refused = p.refused.Load()
	s.Resets = p.resets.Load()
	s.MemsetBytes = p.memsetB.Load()
	s.DecommitBytes = p.decommitB.Load()
	return s
}

// Lease is one leased slot. It implements wazero's
// experimental.MemoryAllocator and experimental.LinearMemory for the one
// instance it is handed to.
type Lease struct {
	p          *Pool
	slot       int
	buf        []byte // the whole slot
	accessible int    // the largest size handed out
	released   atomic.Bool
	allocated  bool
}

var (
	_ experimental.MemoryAllocator = (*Lease)(nil)
	_ experimental.LinearMemory    = (*Lease)(nil)
)

// Allocate implements experimental.MemoryAllocator: a lease backs one
// memory; a module asking for a second one gets nil from Reallocate.
func (l *Lease) Allocate(cap, max uint64) experimental.LinearMemory {
	if l.allocated {
		return noMemory{}
	}
	l.allocated = true
	return l
}

// Reallocate implements experimental.LinearMemory: the slot's first size
// bytes, or nil when size exceeds the slot (memory.grow then fails in the
// guest; instantiation never gets here with a module larger than a slot,
// which New checks).
func (l *Lease) Reallocate(size uint64) []byte {
	if size > uint64(len(l.buf)) || l.released.Load() {
		return nil
	}
	if int(size) > l.accessible {
		l.accessible = int(size)
	}
	return l.buf[:size:size]
}

// Free implements experimental.LinearMemory; wazero calls it when the
// instance is closed. It resets the slot and returns it to the pool.
func (l *Lease) Free() { l.Release() }

// Release resets the slot and returns it to the pool, once; later calls do
// nothing.
func (l *Lease) Release() {
	if !l.released.CompareAndSwap(false, true) {
		return
	}
	l.p.reset(l.buf, l.accessible)
	l.p.put(l.slot)
}

// reset zeroes what a lease may have dirtied, [0, accessible): a memset of
// the keep-resident prefix and a decommit of the rest.
func (p *Pool) reset(buf []byte, accessible int) {
	if accessible == 0 {
		return
	}
	keep := min(p.keep, accessible)
	clear(buf[:keep])
	p.memsetB.Add(int64(keep))
	if accessible > keep {
		end := roundUp(accessible, osPageSize())
		if end > len(buf) {
			end = len(buf)
		}
		p.mem.decommit(buf[keep:end])
		p.decommitB.Add(int64(end - keep))
	}
	p.resets.Add(1)
}

// noMemory is the LinearMemory for a second memory in one instance: it
// never provides bytes.
type noMemory struct{}

func (noMemory) Reallocate(uint64) []byte { return nil }
func (noMemory) Free()                    {}
