package diff

// Probe goroutines for classify_go_test.go: each parks (or runs) in one
// well-known state inside a distinctively named, never-inlined function, so
// the test can find its samples in real profiles captured in-process.

import (
	"bytes"
	"iter"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/profdiff/profdiff/diff/rules"
)

// goProbe is one goroutine parked in (or running) a known state.
type goProbe struct {
	fn     string       // probe function name, e.g. "probeMutexLock"
	states []string     // acceptable goroutine states in runtime.Stack headers
	want   rules.Bucket // expected bucket in goroutine and wall-clock profiles
}

// probeDeadline and probeChecks bound every wait for a goroutine state:
// the runtime offers no event for a goroutine having parked (or run), so
// a wait checks between yields (runtime.Gosched), never sleeping.
const (
	probeDeadline = 30 * time.Second
	probeChecks   = 10_000_000
)

// goroutineStates returns, for every goroutine whose traceback contains a
// call of fn or of a closure in it (matched as ".fn(" or ".fn.func", so
// probeMutexLock does not match probeMutexLockX), the state from its header line, e.g. "chan receive"
// from "goroutine 7 [chan receive, 2 minutes]:".
func goroutineStates(dump []byte, fn string) []string {
	var states []string
	for _, g := range bytes.Split(dump, []byte("\n\n")) {
		s := string(g)
		if !strings.Contains(s, "."+fn+"(") && !strings.Contains(s, "."+fn+".func") {
			continue
		}
		open, close := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
		if !strings.HasPrefix(s, "goroutine ") || open < 0 || close < open {
			continue
		}
		state := s[open+1 : close]
		if i := strings.Index(state, ", "); i >= 0 {
			state = state[:i]
		}
		states = append(states, state)
	}
	return states
}

// waitFor checks cond between yields until it holds, failing the test
// after probeChecks checks or at probeDeadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(probeDeadline)
	for i := 0; !cond(); i++ {
		if i == probeChecks || time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%d checks, %v at most)", what, i, probeDeadline)
		}
		runtime.Gosched()
	}
}

// allStacks returns every goroutine's stack (runtime.Stack), in buf when
// it fits (a larger buffer, kept in *buf, when not).
func allStacks(buf *[]byte) []byte {
	if len(*buf) == 0 {
		*buf = make([]byte, 1<<20)
	}
	for {
		n := runtime.Stack(*buf, true)
		if n < len(*buf) {
			return (*buf)[:n]
		}
		*buf = make([]byte, 2*len(*buf))
	}
}

// waitForStates checks the goroutine dump, between yields, until every
// probe has at least one goroutine in one of its states, and fails the
// test after probeChecks checks or at the deadline with the states it saw.
// This is the synchronization that makes the profiles deterministic:
// nothing is captured before every probe is where it should be.
func waitForStates(t *testing.T, probes []goProbe) {
	t.Helper()
	deadline := time.Now().Add(probeDeadline)
	var buf []byte
	for i := 0; ; i++ {
		dump := allStacks(&buf)
		var missing []string
		for _, p := range probes {
			ok := false
			seen := goroutineStates(dump, p.fn)
			for _, s := range seen {
				for _, w := range p.states {
					ok = ok || s == w
				}
			}
			if !ok {
				missing = append(missing, p.fn+" (want "+strings.Join(p.states, "|")+", saw "+strings.Join(seen, ",")+")")
			}
		}
		if len(missing) == 0 {
			return
		}
		if i == probeChecks || time.Now().After(deadline) {
			t.Fatalf("probe goroutines did not reach their states in %d checks (%v at most): %s", i+1, probeDeadline, strings.Join(missing, "; "))
		}
		runtime.Gosched()
	}
}

//go:noinline
func probeMutexLock(mu *sync.Mutex) { mu.Lock(); mu.Unlock() }

//go:noinline
func probeRWMutexRLock(rw *sync.RWMutex) { rw.RLock(); rw.RUnlock() }

//go:noinline
func probeRWMutexLock(rw *sync.RWMutex) { rw.Lock(); rw.Unlock() }

//go:noinline
func probeMutexUnlock(mu *sync.Mutex) { mu.Unlock() }

//go:noinline
func probeRWMutexUnlock(rw *sync.RWMutex) { rw.Unlock() }

//go:noinline
func probeChanRecv(ch chan int) { <-ch }

//go:noinline
func probeChanSend(ch chan int) { ch <- 1 }

//go:noinline
func probeSelect(a, b chan int) {
	select {
	case <-a:
	case <-b:
	}
}

//go:noinline
func probeCondWait(mu *sync.Mutex, c *sync.Cond, ready *bool) {
	mu.Lock()
	for !*ready {
		c.Wait()
	}
	mu.Unlock()
}

//go:noinline
func probeWaitGroupWait(wg *sync.WaitGroup) { wg.Wait() }

//go:noinline
func probeNetRead(c net.Conn) {
	var b [1]byte
	c.Read(b[:])
}

//go:noinline
func probePipeRead(r *os.File) {
	var b [1]byte
	r.Read(b[:])
}

//go:noinline
func probePipeReadContended(r *os.File) {
	var b [1]byte
	r.Read(b[:]) // probePipeRead holds the fd's read lock: waits in fdMutex.rwlock
}

//go:noinline
func probeNetAccept(ln net.Listener) {
	if c, err := ln.Accept(); err == nil {
		c.Close()
	}
}

//go:noinline
func probeGosched(stop *atomic.Bool, started *atomic.Int64) {
	for !stop.Load() {
		started.Add(1)
		runtime.Gosched()
	}
}

// probeCoroSeq is an iter.Seq run by iter.Pull: between two calls of next
// its goroutine is parked in runtime.coroswitch (state "coroutine").
//
//go:noinline
func probeCoroSeq() iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 0; yield(i); i++ {
		}
	}
}

//go:noinline
func probeRawSyscall(fd int) {
	var b [1]byte
	syscall.Read(fd, b[:]) // a blocking fd: the thread sits in read(2)
}

//go:noinline
func probeSpin(stop *atomic.Bool, started *atomic.Int64) {
	x := uint64(1)
	for i := 0; !stop.Load(); i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&1023 == 0 {
			started.Add(1)
		}
	}
	spinSink.Add(x)
}

var spinSink atomic.Uint64

// Probes that can never be woken (select{}, time.Sleep) are started once per
// process and stay parked; they are the same goroutine in every test run.
var foreverOnce sync.Once

//go:noinline
func probeSelectForever() { select {} }

//go:noinline
func probeSleep() {
	for {
		time.Sleep(time.Hour) // the scenario: the probe goroutine sleeps
	}
}

// parkedProbes is the set of goroutine-state probes and the bucket each must
// land in in goroutine and wall-clock profiles.
var parkedProbes = []goProbe{
	{"probeMutexLock", []string{"sync.Mutex.Lock"}, rules.LockContention},
	{"probeRWMutexRLock", []string{"sync.RWMutex.RLock"}, rules.LockContention},
	{"probeRWMutexLock", []string{"sync.RWMutex.Lock"}, rules.LockContention},
	{"probeChanRecv", []string{"chan receive"}, rules.Wait},
	{"probeChanSend", []string{"chan send"}, rules.Wait},
	{"probeSelect", []string{"select"}, rules.Wait},
	{"probeSelectForever", []string{"select (no cases)"}, rules.Wait},
	{"probeCondWait", []string{"sync.Cond.Wait"}, rules.Wait},
	{"probeWaitGroupWait", []string{"sync.WaitGroup.Wait"}, rules.Wait},
	{"probeSleep", []string{"sleep"}, rules.Wait},
	{"probeNetRead", []string{"IO wait"}, rules.IO},
	{"probeNetAccept", []string{"IO wait"}, rules.IO},
	{"probePipeRead", []string{"IO wait"}, rules.IO},
	{"probePipeReadContended", []string{"semacquire"}, rules.LockContention},
	{"probeCoroSeq", []string{"coroutine"}, rules.Wait},
	{"probeRawSyscall", []string{"syscall"}, rules.Syscall},
	{"probeSpin", []string{"running", "runnable"}, rules.CPU},
	{"probeGosched", []string{"running", "runnable"}, rules.CPU},
}

// startParkedProbes starts every probe of parkedProbes, waits until each is
// in its state, and registers a cleanup that wakes them all and waits for
// them to return.
func startParkedProbes(t *testing.T) {
	t.Helper()
	var wg sync.WaitGroup
	var release, after []func()
	t.Cleanup(func() {
		for i := len(release) - 1; i >= 0; i-- {
			release[i]()
		}
		wg.Wait()
		for _, f := range after {
			f()
		}
	})
	// wg.Done runs after the probe function has returned, so a goroutine
	// still exiting never shows a probe frame in the next test's profiles.
	launch := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}

	var mu sync.Mutex
	mu.Lock()
	release = append(release, mu.Unlock)
	launch(func() { probeMutexLock(&mu) })

	var rwW sync.RWMutex // held for writing: RLock blocks
	rwW.Lock()
	release = append(release, rwW.Unlock)
	launch(func() { probeRWMutexRLock(&rwW) })

	var rwR sync.RWMutex // held for reading: Lock blocks
	rwR.RLock()
	release = append(release, rwR.RUnlock)
	launch(func() { probeRWMutexLock(&rwR) })

	recv, send := make(chan int), make(chan int)
	release = append(release, func() { recv <- 1; <-send })
	launch(func() { probeChanRecv(recv) })
	launch(func() { probeChanSend(send) })

	selA, selB := make(chan int), make(chan int)
	release = append(release, func() { close(selB) })
	launch(func() { probeSelect(selA, selB) })

	var condMu sync.Mutex
	cond := sync.NewCond(&condMu)
	ready := false
	// Broadcast after unlocking, so the woken probe re-locks condMu without
	// contention (a contended re-lock is a lock-contention event in the block
	// profile, which TestGoProbesBlockProfile must not see under Cond.Wait).
	release = append(release, func() { condMu.Lock(); ready = true; condMu.Unlock(); cond.Broadcast() })
	launch(func() { probeCondWait(&condMu, cond, &ready) })

	var gate sync.WaitGroup
	gate.Add(1)
	release = append(release, gate.Done)
	launch(func() { probeWaitGroupWait(&gate) })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		ln.Close()
		t.Fatalf("dial loopback: %v", err)
	}
	server, err := ln.Accept()
	if err != nil {
		ln.Close()
		client.Close()
		t.Fatalf("accept loopback: %v", err)
	}
	release = append(release, func() { server.Close(); client.Close() })
	launch(func() { probeNetRead(client) })
	release = append(release, func() { ln.Close() })
	launch(func() { probeNetAccept(ln) })

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	release = append(release, func() { pw.Close(); pr.Close() })
	launch(func() { probePipeRead(pr) })
	// Only after probePipeRead holds the read lock may the second reader
	// start, or the two could swap roles.
	waitForStates(t, []goProbe{{"probePipeRead", []string{"IO wait"}, rules.IO}})
	launch(func() { probePipeReadContended(pr) })

	// stopCoro returns once the sequence has returned and its goroutine exited.
	next, stopCoro := iter.Pull(probeCoroSeq())
	next()
	release = append(release, stopCoro)

	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil { // blocking, unlike os.Pipe
		t.Fatal(err)
	}
	release = append(release, func() { syscall.Write(fds[1], []byte{1}) })
	// The fds are closed only after the probe has returned from read(2).
	after = append(after, func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	launch(func() { probeRawSyscall(fds[0]) })

	var stop atomic.Bool
	var spins atomic.Int64
	release = append(release, func() { stop.Store(true) })
	launch(func() { probeSpin(&stop, &spins) })
	var yields atomic.Int64
	launch(func() { probeGosched(&stop, &yields) })

	foreverOnce.Do(func() {
		go probeSelectForever()
		go probeSleep()
	})

	waitForStates(t, parkedProbes)
	waitFor(t, "probeSpin and probeGosched to run", func() bool { return spins.Load() > 0 && yields.Load() > 0 })
}

// CPU workloads: each runs until stop is set and counts its progress in ops.

//go:noinline
func probeMutexHammer(mu *sync.Mutex, shared *uint64, stop *atomic.Bool, ops *atomic.Int64) {
	for !stop.Load() {
		mu.Lock()
		x := *shared
		// A very short critical section keeps the lock hot: with 32 rounds
		// the hammer spent 2-17% of its CPU in lock machinery on 2 cores
		// (and failed the 5% floor about one run in three); with 4, 19-49%.
		for i := 0; i < 4; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		*shared = x
		mu.Unlock()
		ops.Add(1)
	}
}

type gcNode struct {
	next *gcNode
	left *gcNode
	pad  [4]uintptr
}

//go:noinline
func probeGCAlloc(stop *atomic.Bool, ops *atomic.Int64) {
	// A live ring of linked lists (about 4 MB of pointer-dense objects) that
	// is constantly replaced: frequent GC cycles with real marking work.
	var ring [64]*gcNode
	for i := 0; !stop.Load(); i++ {
		var head *gcNode
		for j := 0; j < 1000; j++ {
			head = &gcNode{next: head, left: head}
		}
		ring[i%len(ring)] = head
		ops.Add(1)
	}
	gcSink.Store(ring[0])
}

var gcSink atomic.Pointer[gcNode]
