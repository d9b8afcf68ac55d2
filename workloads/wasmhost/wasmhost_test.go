package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/profdiff/profdiff/workloads/loadgen"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newHost(t *testing.T, cfg Config) *Host {
	t.Helper()
	h, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

func fnv32a(b []byte) uint32 {
	f := fnv.New32a()
	f.Write(b)
	return f.Sum32()
}

func TestGuestComputesInGuestMemory(t *testing.T) {
	h := newHost(t, Config{Pages: 4, Touch: 64 << 10, PoolSize: 2})
	for _, req := range []string{"", "a", "GET /plugin HTTP/1.1\r\n\r\n", strings.Repeat("xyz", 5000)} {
		rep, err := h.Handle(context.Background(), FuncHandle, []byte(req))
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		if want := fnv32a([]byte(req)); rep.Hash != want {
			t.Errorf("%q: guest hash %#x, want FNV-1a %#x", req, rep.Hash, want)
		}
		if rep.Touched != 64<<10 {
			t.Errorf("touched %d, want %d", rep.Touched, 64<<10)
		}
	}
	// The guest really dirtied its working set: one instance's memory
	// after the call holds the pattern every 64 bytes.
	st := h.Pool().Stats()
	if st.Resets != 4 || st.InUse != 0 || st.SlotsTouched != 1 {
		t.Errorf("pool stats %+v: want 4 resets, nothing leased, one warm slot reused (MRU)", st)
	}
}

func TestGuestRejectsBadSizes(t *testing.T) {
	if _, err := Guest(1); err == nil {
		t.Error("Guest(1) succeeded; the request area alone needs a page")
	}
	if _, err := New(context.Background(), Config{Pages: 2, Touch: 2 * PageSize}); err == nil || !strings.Contains(err.Error(), "cannot touch") {
		t.Errorf("touch beyond memory: err = %v", err)
	}
}

// firstNonZero is the index of the first non-zero byte of b, or -1. It
// compares 4KiB at a time with zeroes (memequal), which is many times
// faster than decoding the 2MiB slots rune by rune, 84 times over.
func firstNonZero(b []byte) int {
	var zero [4096]byte
	for off := 0; off < len(b); off += len(zero) {
		chunk := b[off:min(off+len(zero), len(b))]
		if !bytes.Equal(chunk, zero[:len(chunk)]) {
			return off + bytes.IndexFunc(chunk, func(r rune) bool { return r != 0 })
		}
	}
	return -1
}

// Every slot handed out is all zeros, whatever keep-resident is and however
// much of it the previous lease dirtied.
func TestPoolZeroesOnReuse(t *testing.T) {
	const slot = 2 << 20
	for _, keep := range []int64{0, 4096, 64 << 10, 1 << 20, 2 << 20, 8 << 20, 1000} {
		for _, accessible := range []uint64{slot, slot / 2, 3 * 4096, 100} {
			p, err := NewPool(2, slot, keep)
			if err != nil {
				t.Fatal(err)
			}
			for round := 0; round < 3; round++ {
				l, err := p.Acquire()
				if err != nil {
					t.Fatal(err)
				}
				mem := l.Allocate(slot, slot).Reallocate(accessible)
				if uint64(len(mem)) != accessible {
					t.Fatalf("Reallocate(%d) gave %d bytes", accessible, len(mem))
				}
				if i := firstNonZero(l.buf); i >= 0 {
					t.Fatalf("keep %d, accessible %d, round %d: slot not zero at byte %d", keep, accessible, round, i)
				}
				for i := range mem {
					mem[i] = byte(i%251 + 1)
				}
				l.Free()
				l.Release() // idempotent
			}
			st := p.Stats()
			if st.Resets != 3 || st.InUse != 0 || st.SlotsTouched != 1 {
				t.Errorf("keep %d: stats %+v", keep, st)
			}
			if want := min(int64(p.KeepResident()), int64(accessible)); st.MemsetBytes != 3*want {
				t.Errorf("keep %d accessible %d: memset %d bytes, want 3×%d", keep, accessible, st.MemsetBytes, want)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestPoolFullFailsAtOnceAndNamesTheLimit(t *testing.T) {
	p, err := NewPool(2, 65536, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Acquire()
	b, _ := p.Acquire()
	if _, err := p.Acquire(); err == nil || !strings.Contains(err.Error(), "all 2 memory slots") {
		t.Fatalf("third Acquire on a pool of 2: err = %v", err)
	}
	if err := p.Close(); err == nil {
		t.Error("Close with leases outstanding succeeded")
	}
	a.Release()
	if c, err := p.Acquire(); err != nil || c.slot != a.slot {
		t.Errorf("after a release: slot %v err %v, want the released slot %d again (MRU)", c, err, a.slot)
	} else {
		c.Release()
	}
	b.Release()
	if st := p.Stats(); st.Refused != 1 || st.Peak != 2 {
		t.Errorf("stats %+v: want 1 refused, peak 2", st)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// The isolation check can fail: a slot dirtied behind the pool's back is
// caught by the guest and the request fails, logged.
func TestIsolationCheckCatchesDirtyMemory(t *testing.T) {
	var log syncBuffer
	h := newHost(t, Config{Pages: 4, Touch: 128 << 10, PoolSize: 1, Log: &log})
	if _, err := h.Handle(context.Background(), FuncHandle, []byte("x")); err != nil {
		t.Fatal(err)
	}
	// Scribble into the (only, warm) slot as a pool that skipped the reset
	// would leave it.
	slot := h.pool.mem.slot(0)
	for i := RequestArea; i < RequestArea+4096; i++ {
		slot[i] = 0xff
	}
	_, err := h.Handle(context.Background(), FuncHandle, []byte("x"))
	if FailureKind(err) != FailIsolation {
		t.Fatalf("dirty slot: err = %v, want an isolation failure", err)
	}
	if !strings.Contains(log.String(), "isolation broken") {
		t.Errorf("isolation failure not logged; log:\n%s", log.String())
	}
	if _, err := h.Handle(context.Background(), FuncHandle, []byte("x")); err != nil {
		t.Errorf("after the reset the slot is clean again, but: %v", err)
	}
}

func TestFailuresAreLoggedAndSlotsReturned(t *testing.T) {
	var log syncBuffer
	h := newHost(t, Config{Pages: 4, Touch: 64 << 10, PoolSize: 1, Timeout: 100 * time.Millisecond, Log: &log, LogEvery: time.Hour})
	ctx := context.Background()

	_, err := h.Handle(ctx, FuncTrap, nil)
	if FailureKind(err) != FailTrap || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("trap: %v", err)
	}
	_, err = h.Handle(ctx, FuncSpin, nil)
	if FailureKind(err) != FailTimeout || !strings.Contains(err.Error(), "time limit") {
		t.Errorf("spin: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = h.Handle(cctx, FuncSpin, nil)
	if FailureKind(err) != FailCanceled || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("spin with a canceled request: %v", err)
	}
	_, err = h.Handle(ctx, "memory", nil)
	if FailureKind(err) != FailBadRequest {
		t.Errorf("fn=memory: %v", err)
	}
	lease, _ := h.pool.Acquire()
	for i := 0; i < 5; i++ {
		if _, err := h.Handle(ctx, FuncHandle, nil); FailureKind(err) != FailPoolFull {
			t.Errorf("pool full: %v", err)
		}
	}
	lease.Release()
	if st := h.Pool().Stats(); st.InUse != 0 {
		t.Errorf("%d slots still leased after failures", st.InUse)
	}
	// The host keeps serving.
	if _, err := h.Handle(ctx, FuncHandle, []byte("ok")); err != nil {
		t.Fatalf("after failures: %v", err)
	}
	s := h.Stats()
	want := map[string]int64{FailTrap: 1, FailTimeout: 1, FailCanceled: 1, FailBadRequest: 1, FailPoolFull: 5}
	for k, n := range want {
		if s.Failures[k] != n {
			t.Errorf("failures[%s] = %d, want %d (all: %v)", k, s.Failures[k], n, s.Failures)
		}
	}
	if s.Served != 1 {
		t.Errorf("served %d, want 1", s.Served)
	}
	out := log.String()
	// One line per kind (rate limit of an hour), the pool line naming the limit.
	if n := strings.Count(out, "plugin pool full: all 1 memory slots are in use (the pool's size"); n != 1 {
		t.Errorf("pool-full lines: %d, want 1 (rate-limited); log:\n%s", n, out)
	}
	for _, w := range []string{"plugin trapped", "time limit", "exports no function"} {
		if !strings.Contains(out, w) {
			t.Errorf("log lacks %q:\n%s", w, out)
		}
	}
	h.Close()
	if !strings.Contains(log.String(), "pool-full: 5 request(s) failed in all") {
		t.Errorf("Close did not log the pool-full total; log:\n%s", log.String())
	}
}

func TestRateLimitedLogCountsHeldLines(t *testing.T) {
	var b syncBuffer
	l := newLimitedLog(&b, time.Hour)
	for i := int64(1); i <= 4; i++ {
		l.event("k", i, "event %d", i)
	}
	l.last["k"] = time.Now().Add(-2 * time.Hour)
	l.event("k", 5, "event %d", 5)
	want := "event 1 (1 so far)\nevent 5 (5 so far; 3 like it not logged in the last 1h0m0s)\n"
	if b.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", b.String(), want)
	}
}

// Under concurrent use the pool never leases more than its size, every
// request either succeeds or is refused as pool-full, and every slot comes
// back. Run with -race.
func TestConcurrentUseStaysWithinPool(t *testing.T) {
	var log syncBuffer
	const size, workers, each = 3, 12, 40
	h := newHost(t, Config{Pages: 4, Touch: 64 << 10, PoolSize: size, Log: &log})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, full := 0, 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := h.Handle(context.Background(), FuncHandle, []byte{byte(w), byte(i)})
				mu.Lock()
				switch FailureKind(err) {
				case "":
					if err == nil {
						ok++
					}
				case FailPoolFull:
					full++
				default:
					t.Errorf("worker %d: %v", w, err)
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	st := h.Pool().Stats()
	if st.Peak > size || st.SlotsTouched > size || st.InUse != 0 {
		t.Errorf("pool stats %+v: want peak ≤ %d and nothing leased", st, size)
	}
	if ok+full != workers*each || int64(full) != st.Refused || int64(ok) != h.Stats().Served {
		t.Errorf("ok %d + refused %d != %d requests (pool refused %d, served %d)", ok, full, workers*each, st.Refused, h.Stats().Served)
	}
	if full > 0 && !strings.Contains(log.String(), "plugin pool full") {
		t.Errorf("%d refusals but no log line", full)
	}
}

func TestHTTP(t *testing.T) {
	var log syncBuffer
	h := newHost(t, Config{Pages: 4, Touch: 64 << 10, PoolSize: 1, Timeout: 100 * time.Millisecond, Log: &log})
	srv := httptest.NewServer(NewHandler(h))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/plugin")
	want := fnv32a([]byte("GET /plugin HTTP/1.1\r\n\r\n"))
	var reply struct {
		Plugin  string
		Hash    uint32
		Touched int
	}
	if code != 200 || json.Unmarshal([]byte(body), &reply) != nil || reply.Hash != want || reply.Touched != 64<<10 {
		t.Errorf("/plugin: %d %q, want 200 with hash %d", code, body, want)
	}
	if code, body := get("/plugin?fn=trap"); code != 500 || !strings.Contains(body, "trapped") {
		t.Errorf("trap: %d %q", code, body)
	}
	if code, body := get("/plugin?fn=spin"); code != 504 || !strings.Contains(body, "time limit") {
		t.Errorf("spin: %d %q", code, body)
	}
	if code, _ := get("/plugin?fn=nope"); code != 400 {
		t.Errorf("unknown fn: %d", code)
	}
	lease, _ := h.pool.Acquire()
	code, body = get("/plugin")
	lease.Release()
	if code != 503 || !strings.Contains(body, "all 1 memory slots are in use (the pool's size") {
		t.Errorf("pool full: %d %q, want 503 naming the limit", code, body)
	}
	if !strings.Contains(log.String(), "plugin pool full") {
		t.Errorf("503 without a log line; log:\n%s", log.String())
	}
	// The loop stops at max=50 iterations (its 60 s window is only a
	// bound). An iteration the machine delays past the host's 100ms limit
	// fails as a timeout (seen once in 50 with other tests running); the
	// counts must still add up.
	code, body = get("/loop?seconds=60&max=50")
	var rep loadgen.Report
	if code != 200 || json.Unmarshal([]byte(body), &rep) != nil || rep.Sent != 50 || rep.Engine != "loop" {
		t.Errorf("/loop: %d %s", code, body)
	}
	loopTimeouts := rep.Non2xx[FailTimeout]
	if rep.OK == 0 || rep.OK+loopTimeouts != 50 || len(rep.Non2xx) > 1 {
		t.Errorf("/loop: %d ok, failures %v: want 50 iterations, only timeouts failing", rep.OK, rep.Non2xx)
	}
	if code, _ := get("/loop?seconds=x"); code != 400 {
		t.Errorf("/loop bad seconds: %d", code)
	}
	code, body = get("/stats")
	var st Stats
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Served != 1+rep.OK || st.Failures[FailPoolFull] != 1 || st.Failures[FailTimeout] != 1+loopTimeouts {
		t.Errorf("/stats: %d %s; want %d served and %d timeouts", code, body, 1+rep.OK, 1+loopTimeouts)
	}
}

func TestSizesAndArgs(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "65536": 65536, "64KiB": 64 << 10, "1MiB": 1 << 20, "2mib": 2 << 20, "256k": 256 << 10, "1G": 1 << 30} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.5MiB", "MiB", "1TiB", "99999999999GiB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
	for _, n := range []int64{0, 1000, 64 << 10, 1 << 20, 3 << 30} {
		if got, err := ParseSize(FormatSize(n)); err != nil || got != n {
			t.Errorf("FormatSize(%d) = %q does not read back", n, FormatSize(n))
		}
	}
	warm := 3
	for _, c := range []Config{
		{KeepResident: 1 << 20, PoolSize: 8, Pages: 16, Touch: 4096, Timeout: time.Second, Interpreter: true},
		{KeepResident: 1 << 20, PoolSize: 8, Pages: 16, Touch: 4096, Timeout: time.Second, Modules: 8, MaxUnusedWarm: &warm},
	} {
		got, err := ParseArgs(c.Args())
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("ParseArgs(Args()) = %+v, %v; want %+v", got, err, c)
		}
	}
	if _, err := ParseArgs([]string{"--keep-resident=lots"}); err == nil {
		t.Error("bad keep-resident accepted")
	}
}

// Slots are chosen as Wasmtime's module-affine allocator chooses them: a
// module's own most recently used warm slot first; else a cold slot while
// at most max_unused_warm_slots warm slots are free; else another module's
// least recently used warm slot, rebound.
func TestPoolModuleAffinity(t *testing.T) {
	lease := func(p *Pool, m int) *Lease {
		t.Helper()
		l, err := p.AcquireFor(m)
		if err != nil {
			t.Fatal(err)
		}
		l.Allocate(128<<10, 128<<10).Reallocate(128 << 10)
		return l
	}
	p, err := NewAffinePool(4, 128<<10, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	a0, a1 := lease(p, 0), lease(p, 0) // cold, cold
	b0 := lease(p, 1)                  // cold
	a0.Release()
	a1.Release()
	b0.Release()
	// Module 0's most recent slot is a1's.
	if l := lease(p, 0); l.slot != a1.slot {
		t.Errorf("module 0 got slot %d, want its most recently used warm slot %d", l.slot, a1.slot)
	} else {
		l.Release()
	}
	// Module 2 has no warm slot; 3 warm slots are free, more than the limit
	// of 1, so it takes the least recently used one (a0's), not the cold one.
	c := lease(p, 2)
	if c.slot != a0.slot {
		t.Errorf("module 2 got slot %d, want the least recently used warm slot %d", c.slot, a0.slot)
	}
	st := p.Stats()
	if st.WarmHits != 1 || st.ColdLeases != 3 || st.Rebinds != 1 || st.SlotsTouched != 3 {
		t.Errorf("stats %+v: want 1 warm hit, 3 cold leases, 1 rebind", st)
	}
	c.Release()
	if l := lease(p, 2); l.slot != c.slot {
		t.Errorf("module 2 did not get back the slot rebound to it")
	} else {
		l.Release()
	}
	// With the limit at 100 a module without a warm slot takes a cold one.
	q, _ := NewAffinePool(3, 128<<10, 0, 100)
	x := lease(q, 0)
	x.Release()
	if y := lease(q, 1); y.slot == x.slot {
		t.Errorf("module 1 took module 0's warm slot with cold slots left and 1 warm slot free")
	} else {
		y.Release()
	}
	for _, pp := range []*Pool{p, q} {
		if err := pp.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewAffinePool(1, 4096, 0, -1); err == nil {
		t.Error("a negative max_unused_warm_slots was accepted")
	}
}

// Every module carries its own memory image, and requests are spread over
// the modules round robin.
func TestModulesHaveTheirOwnImage(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for id := range 3 {
		b, err := GuestModule(2, id)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		img, ok := mod.Memory().Read(ImageOffset, ImageSize)
		want := fmt.Sprintf("profdiff wasm plugin module %d\n", id)
		if !ok || !strings.HasPrefix(string(img), want) || bytes.IndexByte(img, 0) >= 0 {
			t.Errorf("module %d: image starts %q, want %q and no zero bytes", id, img[:40], want)
		}
		mod.Close(ctx)
	}
	h := newHost(t, Config{Pages: 4, Touch: 64 << 10, Modules: 3, PoolSize: 8})
	for range 9 {
		if _, err := h.Handle(ctx, FuncHandle, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	st := h.Stats()
	// One goroutine, three modules round robin: three cold slots, then
	// every lease finds its module's warm slot.
	if st.Modules != 3 || st.Pool.ColdLeases != 3 || st.Pool.WarmHits != 6 || st.Pool.Rebinds != 0 {
		t.Errorf("stats %+v: want 3 modules, 3 cold leases, 6 warm hits", st)
	}
	if _, err := h.HandleModule(ctx, 3, FuncHandle, nil); FailureKind(err) != FailBadRequest {
		t.Errorf("module 3 of 3: err = %v, want a bad request", err)
	}
}
