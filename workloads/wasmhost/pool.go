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
//   - Slots are chosen as Wasmtime's module-affine index allocator chooses
//     them (max_unused_warm_slots): a free slot is warm, bound to the
//     module that used it last. A lease for a module takes that module's
//     most recently used warm slot; when it has none, it takes a cold
//     slot (never leased) while at most MaxUnusedWarm warm slots are free,
//     otherwise (or when no cold slot is left) the least recently used
//     warm slot of another module, which is rebound: the other module's
//     memory image (its data segment's page) is decommitted first.
type Pool struct {
	slotSize int
	size     int
	keep     int // KeepResident rounded up to the OS page size
	maxWarm  int // max_unused_warm_slots
	mem      slotMemory

	mu       sync.Mutex
	warm     slotList   // free warm slots, least recently released first
	byModule []slotList // free warm slots bound to each module, same order
	link     []slotLink // each slot's place in warm and in its module's list
	affinity []int      // the module each slot is bound to (-1: cold)
	fresh    int        // slots [fresh, size) have never been leased
	inUse    int
	peak     int
	hits     int64 // leases that found a warm slot of their module
	colds    int64 // leases that took a cold slot
	rebinds  int64 // leases that took another module's warm slot

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
	return NewAffinePool(size, slotSize, keepResident, DefaultMaxUnusedWarmSlots)
}

// DefaultMaxUnusedWarmSlots is Wasmtime's default max_unused_warm_slots.
const DefaultMaxUnusedWarmSlots = 100

// NewAffinePool is NewPool with Wasmtime's max_unused_warm_slots: how many
// free slots may stay bound to other modules before a module without a
// warm slot of its own takes one of theirs rather than a cold one.
func NewAffinePool(size, slotSize int, keepResident int64, maxUnusedWarm int) (*Pool, error) {
	if maxUnusedWarm < 0 {
		return nil, fmt.Errorf("max unused warm slots must not be negative, not %d", maxUnusedWarm)
	}
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
	p := &Pool{slotSize: slotSize, size: size, keep: int(keep), maxWarm: maxUnusedWarm, mem: mem,
		link: make([]slotLink, size), affinity: make([]int, size), warm: emptyList()}
	for i := range p.affinity {
		p.affinity[i] = -1
	}
	return p, nil
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// Size is the number of slots; SlotSize the bytes in each.
func (p *Pool) Size() int     { return p.size }
func (p *Pool) SlotSize() int { return p.slotSize }

// KeepResident is the reset's memset prefix in bytes (page-rounded).
func (p *Pool) KeepResident() int { return p.keep }

// Acquire leases a slot for module 0; see AcquireFor.
func (p *Pool) Acquire() (*Lease, error) { return p.AcquireFor(0) }

// AcquireFor leases a slot for a module (0, 1, ...) or fails at once with a
// *FullError. The lease must be released (Release) on every path; Free,
// called by wazero when the instance closes, releases it too, and
// releasing twice is harmless.
func (p *Pool) AcquireFor(module int) (*Lease, error) {
	if module < 0 {
		return nil, fmt.Errorf("module index %d is negative", module)
	}
	p.mu.Lock()
	for len(p.byModule) <= module {
		p.byModule = append(p.byModule, emptyList())
	}
	slot, rebind := -1, -1
	switch mine := &p.byModule[module]; {
	case mine.tail >= 0:
		slot = mine.tail
		p.hits++
	case p.fresh < p.size && p.warm.n <= p.maxWarm:
		slot = p.fresh
		p.fresh++
		p.colds++
	case p.warm.head >= 0:
		slot = p.warm.head
		rebind = p.affinity[slot]
		p.rebinds++
	default:
		p.mu.Unlock()
		p.refused.Add(1)
		return nil, &FullError{Limit: p.size}
	}
	if a := p.affinity[slot]; a >= 0 {
		p.unlink(slot, a)
	}
	p.affinity[slot] = module
	p.inUse++
	if p.inUse > p.peak {
		p.peak = p.inUse
	}
	p.mu.Unlock()
	buf := p.mem.slot(slot)
	if rebind >= 0 {
		// Another module's image is in the slot: drop its page, as
		// Wasmtime remaps a slot's image when the module changes.
		p.mem.decommit(buf[ImageOffset : ImageOffset+osPageRound(ImageSize)])
		p.decommitB.Add(int64(osPageRound(ImageSize)))
	}
	return &Lease{p: p, slot: slot, buf: buf}, nil
}

func osPageRound(n int) int { return roundUp(n, osPageSize()) }

func (p *Pool) put(slot int) {
	p.mu.Lock()
	m := p.affinity[slot]
	p.warm.push(p.link, slot, false)
	p.byModule[m].push(p.link, slot, true)
	p.inUse--
	p.mu.Unlock()
}

// unlink takes a free slot out of the warm list and its module's list.
func (p *Pool) unlink(slot, module int) {
	p.warm.remove(p.link, slot, false)
	p.byModule[module].remove(p.link, slot, true)
}

// slotLink is a slot's neighbours in two doubly linked lists: all free warm
// slots, and those of its module (-1: none).
type slotLink struct{ prev, next, mprev, mnext int }

// slotList is a doubly linked list of slots threaded through []slotLink,
// least recently released at head.
type slotList struct{ head, tail, n int }

func emptyList() slotList { return slotList{head: -1, tail: -1} }

func links(l []slotLink, s int, byModule bool) (prev, next *int) {
	if byModule {
		return &l[s].mprev, &l[s].mnext
	}
	return &l[s].prev, &l[s].next
}

func (q *slotList) push(l []slotLink, s int, byModule bool) {
	prev, next := links(l, s, byModule)
	*prev, *next = q.tail, -1
	if q.tail >= 0 {
		_, tn := links(l, q.tail, byModule)
		*tn = s
	} else {
		q.head = s
	}
	q.tail = s
	q.n++
}

func (q *slotList) remove(l []slotLink, s int, byModule bool) {
	prev, next := links(l, s, byModule)
	if *prev >= 0 {
		_, pn := links(l, *prev, byModule)
		*pn = *next
	} else {
		q.head = *next
	}
	if *next >= 0 {
		np, _ := links(l, *next, byModule)
		*np = *prev
	} else {
		q.tail = *prev
	}
	*prev, *next = -1, -1
	q.n--
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
	Size         int `json:"size"`
	SlotBytes    int `json:"slot_bytes"`
	KeepResident int `json:"keep_resident_bytes"`
	InUse        int `json:"in_use"`
	Peak         int `json:"peak_in_use"`
	SlotsTouched int `json:"slots_touched"` // distinct slots ever leased
	// Leases by how their slot was found: a warm slot of the same module,
	// a cold slot, or another module's warm slot (rebound).
	WarmHits      int64 `json:"warm_hits"`
	ColdLeases    int64 `json:"cold_leases"`
	Rebinds       int64 `json:"rebinds"`
	MaxUnusedWarm int   `json:"max_unused_warm_slots"`
	Refused       int64 `json:"refused"` // Acquire calls that found the pool full
	Resets        int64 `json:"resets"`
	MemsetBytes   int64 `json:"memset_bytes"`
	DecommitBytes int64 `json:"decommit_bytes"`
}

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	s := PoolStats{Size: p.size, SlotBytes: p.slotSize, KeepResident: p.keep, InUse: p.inUse, Peak: p.peak, SlotsTouched: p.fresh,
		WarmHits: p.hits, ColdLeases: p.colds, Rebinds: p.rebinds, MaxUnusedWarm: p.maxWarm}
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
