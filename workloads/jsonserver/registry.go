package jsonserver

import (
	"math/bits"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// historyLen is the number of recent wait durations each registry shard
// keeps and re-scans on every change while holding its lock. It sets the
// hold time: the scan plus the map and list upkeep take about 1 µs per
// acquisition on a 2020s x86 core (measured by BenchmarkRegistryHold), three
// acquisitions per request. That is the ".NET wait subsystem" cost model:
// a little real bookkeeping under one process-wide lock, harmless at one
// core and a bottleneck once hold time × acquisitions per second nears 1.
const historyLen = 1024

// waiter is one blocked request: the registry's record of a waiting thread
// (.NET's ThreadWaitInfo).
type waiter struct {
	id    uint64
	idx   int   // position in the shard's wait list
	start int64 // time.Now().UnixNano() at register
	woken bool
	ch    chan struct{} // capacity 1: the wake signal

	// Filled by the worker before it wakes the waiter; the channel send
	// orders these writes before the waiter's reads.
	body []byte
	err  error
}

// registryShard is one lock and the waiters it guards. The global-lock
// variant has one; sharded has many.
type registryShard struct {
	mu      sync.Mutex
	waiters map[uint64]*waiter
	list    []*waiter          // registration order, swap-removed
	history [historyLen]uint32 // recent wait durations in µs, a ring
	pos     int
	// Bookkeeping recomputed by audit on every change.
	maxWaitUS  uint32
	meanWaitUS uint32
	// Lock statistics, kept under mu: every acquisition is counted, and
	// one in holdSampleEvery is timed from the Lock's return to the
	// Unlock (two monotonic clock reads, ~50 ns, once per 64 holds of
	// ~1 µs: under 0.1% of the hold time).
	acquisitions uint64
	timedHolds   uint64
	timedHoldNS  int64
	holdStart    int64    // clock() when a timed hold began, else 0
	_            [64]byte // keep neighbouring shards' locks off one cache line
}

// holdSampleEvery is how often a hold is timed: every 64th acquisition of
// a shard (a power of two).
const holdSampleEvery = 64

// epoch is the origin of clock.
var epoch = time.Now()

// clock is monotonic nanoseconds since epoch (never 0 in use: a timed hold
// starts after the process's first instructions).
func clock() int64 { return int64(time.Since(epoch)) + 1 }

// waitRegistry is a table of waiting requests, guarded by one mutex per
// shard. With one shard it is the process-wide wait lock of .NET's managed
// wait subsystem: a waiter registers under the lock, the waker takes the
// same lock to find it and signal it, and the waiter takes it again to
// unregister.
type waitRegistry struct {
	shards []registryShard
	mask   uint64
	// audits is how many times each hold recomputes the statistics (1;
	// heavyAudits in the gc-lock variants, see newDispatcher).
	audits int
}

// newWaitRegistry makes a registry of n shards; n must be a power of two.
func newWaitRegistry(n int) *waitRegistry {
	r := &waitRegistry{shards: make([]registryShard, n), mask: uint64(n - 1), audits: 1}
	for i := range r.shards {
		r.shards[i].waiters = make(map[uint64]*waiter, 64)
	}
	return r
}

func (r *waitRegistry) shard(id uint64) *registryShard {
	// Ids are sequential, so the low bits spread consecutive requests over
	// all shards.
	return &r.shards[id&r.mask]
}

// acquire takes a shard's lock. The lock and unlock calls live in these
// two small functions (the counterpart of .NET's WaitSubsystem.LockHolder
// around s_lock), so every contention sample, whether recorded at the lock
// (block, wall and CPU profiles) or at the unlock (mutex profile), has a
// registry frame right above sync.Mutex, and a cumulative diff ranks it
// first.
//
//go:noinline
func (r *waitRegistry) acquire(s *registryShard) {
	s.mu.Lock()
	s.acquisitions++
	if s.acquisitions&(holdSampleEvery-1) == 0 {
		s.holdStart = clock()
	}
}

// release drops a shard's lock.
//
//go:noinline
func (r *waitRegistry) release(s *registryShard) {
	if s.holdStart != 0 {
		s.timedHoldNS += clock() - s.holdStart
		s.timedHolds++
		s.holdStart = 0
	}
	s.mu.Unlock()
}

// LockStats are a registry's lock counters since the server started
// (the JSON of GET /stats): what a projection of the lock's throughput
// bound needs.
type LockStats struct {
	Variant string `json:"variant"`
	// Requests counts the requests dispatched through the registry.
	Requests uint64 `json:"requests"`
	// Shards is the number of locks; Acquisitions counts every Lock of
	// any of them, MaxShardAcquisitions those of the busiest one.
	Shards int `json:"shards"`
	// ShardsPerP, when set, is the server's sharding rule: it makes
	// ShardsPerP × GOMAXPROCS shards (a power of two, at least Shards at
	// GOMAXPROCS 1), so on more cores it has more locks.
	ShardsPerP           int    `json:"shards_per_p,omitempty"`
	Acquisitions         uint64 `json:"acquisitions"`
	MaxShardAcquisitions uint64 `json:"max_shard_acquisitions"`
	// TimedHolds holds were timed (one in HoldSampleEvery), TimedHoldNS
	// in all: their mean is the lock's hold time.
	TimedHolds      uint64 `json:"timed_holds"`
	TimedHoldNS     int64  `json:"timed_hold_ns"`
	HoldSampleEvery int    `json:"hold_sample_every"`
}

// stats reads every shard's counters under its lock (not counted as an
// acquisition).
func (r *waitRegistry) stats() LockStats {
	st := LockStats{Shards: len(r.shards), HoldSampleEvery: holdSampleEvery}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		st.Acquisitions += s.acquisitions
		st.MaxShardAcquisitions = max(st.MaxShardAcquisitions, s.acquisitions)
		st.TimedHolds += s.timedHolds
		st.TimedHoldNS += s.timedHoldNS
		s.mu.Unlock()
	}
	return st
}

// register records w as waiting. Called by the request before it hands its
// work to a worker, so a fast worker always finds it.
//
//go:noinline
func (r *waitRegistry) register(w *waiter) {
	s := r.shard(w.id)
	r.acquire(s)
	w.idx = len(s.list)
	s.list = append(s.list, w)
	s.waiters[w.id] = w
	r.audit(s)
	r.release(s)
}

// wake finds the waiter with this id and signals it, under the lock, as the
// wait subsystem's signaller does. It reports whether a waiter was found.
//
//go:noinline
func (r *waitRegistry) wake(id uint64) bool {
	s := r.shard(id)
	r.acquire(s)
	w := s.waiters[id]
	found := w != nil && !w.woken
	if found {
		w.woken = true
		s.record(time.Now().UnixNano() - w.start)
		w.ch <- struct{}{}
	}
	r.audit(s)
	r.release(s)
	return found
}

// unregister removes w after it has been woken (or given up).
//
//go:noinline
func (r *waitRegistry) unregister(w *waiter) {
	s := r.shard(w.id)
	r.acquire(s)
	delete(s.waiters, w.id)
	last := len(s.list) - 1
	if w.idx <= last && s.list[w.idx] == w {
		s.list[w.idx] = s.list[last]
		s.list[w.idx].idx = w.idx
		s.list[last] = nil
		s.list = s.list[:last]
	}
	r.audit(s)
	r.release(s)
}

// record adds one wait duration to the history ring. Callers hold s.mu.
func (s *registryShard) record(ns int64) {
	us := ns / 1000
	if us > 1<<31 {
		us = 1 << 31
	}
	s.history[s.pos] = uint32(us)
	s.pos = (s.pos + 1) % historyLen
}

// audit recomputes the shard's wait statistics (longest and mean recent
// wait) by scanning the history ring: the fixed-cost bookkeeping done
// under the lock on every change. Callers hold s.mu.
func (s *registryShard) audit() {
	var maxUS, sum uint32
	for _, v := range &s.history {
		sum += v
		if v > maxUS {
			maxUS = v
		}
	}
	s.maxWaitUS = maxUS
	s.meanWaitUS = sum / historyLen
}

// audit is the bookkeeping of one hold: r.audits scans of s's history.
func (r *waitRegistry) audit(s *registryShard) {
	for range r.audits {
		s.audit()
	}
}

// heavyAudits is the audits of the gc-lock variants: a hold about 8 µs
// long, so that their one lock is contended on the 2 cores of a CI
// machine, where the 1 µs hold of global-lock needs more cores than that
// to matter.
const heavyAudits = 8

// shardsPerP is the sharded variant's shards per P (defaultShards).
const shardsPerP = 4

// dispatcher runs requests through a worker pool and the wait registry.
type dispatcher struct {
	reg    *waitRegistry
	queues []chan *waiter // one per worker, so workers share no queue lock
	nextID atomic.Uint64
	pool   sync.Pool
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

// defaultWorkers is the pool size: one worker per P, as a thread pool
// sizes itself to the cores.
func defaultWorkers() int { return runtime.GOMAXPROCS(0) }

// defaultShards is the sharded variant's shard count: 4 × GOMAXPROCS,
// rounded up to a power of two, at least 8. Four shards per P keep the
// chance that two running requests meet on a shard low.
func defaultShards() int {
	n := shardsPerP * runtime.GOMAXPROCS(0)
	if n < 8 {
		n = 8
	}
	return 1 << bits.Len(uint(n-1))
}

func newDispatcher(shards, workers int) *dispatcher {
	d := &dispatcher{
		reg:    newWaitRegistry(shards),
		queues: make([]chan *waiter, workers),
		done:   make(chan struct{}),
	}
	d.pool.New = func() any { return &waiter{ch: make(chan struct{}, 1)} }
	for i := range d.queues {
		// A short queue per worker: requests beyond it wait to enqueue,
		// which is back-pressure, not loss.
		d.queues[i] = make(chan *waiter, 64)
		d.wg.Add(1)
		go d.work(d.queues[i])
	}
	return d
}

// serve is the request side: register, hand off, wait to be woken,
// unregister, respond.
func (d *dispatcher) serve(rw http.ResponseWriter, req *http.Request) {
	id := d.nextID.Add(1)
	w := d.pool.Get().(*waiter)
	w.id, w.start, w.woken, w.body, w.err = id, time.Now().UnixNano(), false, nil, nil
	d.reg.register(w)
	select {
	case d.queues[id%uint64(len(d.queues))] <- w:
	case <-d.done:
		d.reg.unregister(w)
		http.Error(rw, "server closing", http.StatusServiceUnavailable)
		return
	}
	select {
	case <-w.ch:
	case <-d.done:
		// The worker may still wake w; it is dropped, not reused.
		d.reg.unregister(w)
		http.Error(rw, "server closing", http.StatusServiceUnavailable)
		return
	}
	d.reg.unregister(w)
	body, err := w.body, w.err
	w.body, w.err = nil, nil
	d.pool.Put(w)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(rw, body)
}

// work is one pool worker: serialize for the waiter, then wake it through
// the registry by id.
func (d *dispatcher) work(q chan *waiter) {
	defer d.wg.Done()
	for {
		select {
		case w := <-q:
			w.body, w.err = serialize()
			d.reg.wake(w.id)
		case <-d.done:
			return
		}
	}
}

func (d *dispatcher) close() {
	d.once.Do(func() { close(d.done) })
	d.wg.Wait()
}
