// Command waitprog is the test program of package wait: goroutines that
// wait on each other in known functions for known times, profiled with
// Go's mutex and block profiles and an execution trace at once. It writes
// mutex.pb.gz, block.pb.gz, trace.out and truth.json (what it measured of
// itself) into -out. Tests build and run it; see ../README.md.
//
//	waitprog -mode holdslow -hold 8ms -out DIR
//
// holdslow: goroutine A loops holding mu in holdSlow for -hold doing known
// work (a spin) and then working -outside (-hold/4 by default: it holds mu
// 80% of its time) outside it; four goroutines loop in waitHere locking mu
// for a moment, then sleeping 2ms.
//
// chain: goroutine A loops holding mu in holdSlow (known work), taking it
// again at once; B loops taking mu in passOn (handed it by A's Unlock,
// since B has waited long enough for the mutex's starvation mode) and
// sending a value on a channel; C receives it in waitChan. C's wait is
// A's work, passed on by B.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"time"
)

var (
	mu   sync.Mutex
	sink int
	stop time.Time
)

// spin works for d on the CPU: the known work.
//
//go:noinline
func spin(d time.Duration) {
	x := 0
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 200; i++ {
			x += i
		}
	}
	sink += x
}

type span struct{ from, to time.Time }

// truth is what the program measured of itself, in nanoseconds.
type truth struct {
	WallNs int64 `json:"wall_ns"`
	// HeldNs is the time holdSlow held mu.
	HeldNs int64 `json:"held_ns"`
	// WaitedNs is the time the goroutines in waitHere (holdslow) or
	// passOn (chain) waited in mu.Lock; DuringHoldNs the part of it
	// while holdSlow held mu.
	WaitedNs     int64 `json:"waited_ns"`
	DuringHoldNs int64 `json:"during_hold_ns"`
	// ChanWaitNs is the time waitChan waited for its values (chain).
	ChanWaitNs int64 `json:"chan_wait_ns"`
}

// holdSlow holds mu while it does its known work.
//
//go:noinline
func holdSlow(hold time.Duration) span {
	mu.Lock()
	s := span{from: time.Now()}
	spin(hold)
	s.to = time.Now()
	mu.Unlock()
	return s
}

// waitHere waits for mu and holds it for a moment.
//
//go:noinline
func waitHere() span {
	t0 := time.Now()
	mu.Lock()
	s := span{t0, time.Now()}
	sink++
	mu.Unlock()
	return s
}

// passOn waits for mu, as waitHere does, then sends on ch.
//
//go:noinline
func passOn(ch chan<- int) span {
	s := waitHere()
	ch <- 1
	return s
}

// waitChan waits for a value on ch.
//
//go:noinline
func waitChan(ch <-chan int) (time.Duration, bool) {
	t0 := time.Now()
	_, ok := <-ch
	return time.Since(t0), ok
}

// holder loops in holdSlow, working outside the lock for outside after
// each hold.
func holder(hold, outside time.Duration, holds *[]span, wg *sync.WaitGroup) {
	defer wg.Done()
	for time.Now().Before(stop) {
		*holds = append(*holds, holdSlow(hold))
		spin(outside)
	}
}

// overlap is the time the spans of waits spent inside the spans of holds.
func overlap(waits, holds []span) time.Duration {
	var d time.Duration
	for _, w := range waits {
		for _, h := range holds {
			from, to := w.from, w.to
			if h.from.After(from) {
				from = h.from
			}
			if h.to.Before(to) {
				to = h.to
			}
			if to.After(from) {
				d += to.Sub(from)
			}
		}
	}
	return d
}

func main() {
	mode := flag.String("mode", "holdslow", "holdslow or chain")
	hold := flag.Duration("hold", 8*time.Millisecond, "how long holdSlow holds mu each time")
	outsideFlag := flag.Duration("outside", -1, "how long A works outside the lock after each hold (default -hold/4; chain: 0)")
	dur := flag.Duration("duration", time.Second, "how long to run")
	out := flag.String("out", ".", "folder to write the profiles and truth.json into")
	flag.Parse()

	runtime.SetMutexProfileFraction(1)
	runtime.SetBlockProfileRate(1)
	tf, err := os.Create(filepath.Join(*out, "trace.out"))
	check(err)
	check(trace.Start(tf))

	start := time.Now()
	stop = start.Add(*dur)
	var holds []span
	var waits [][]span
	var chanWait time.Duration
	var wg sync.WaitGroup
	outside := *outsideFlag
	switch {
	case outside >= 0:
	case *mode == "chain":
		outside = 0
	default:
		outside = *hold / 4
	}
	wg.Add(1)
	go holder(*hold, outside, &holds, &wg)
	switch *mode {
	case "holdslow":
		waits = make([][]span, 4)
		for i := range waits {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					waits[i] = append(waits[i], waitHere())
					time.Sleep(2 * time.Millisecond)
				}
			}()
		}
	case "chain":
		waits = make([][]span, 1)
		ch := make(chan int)
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer close(ch)
			for time.Now().Before(stop) {
				waits[0] = append(waits[0], passOn(ch))
			}
		}()
		go func() {
			defer wg.Done()
			for {
				d, ok := waitChan(ch)
				if !ok {
					return
				}
				chanWait += d
			}
		}()
	default:
		check(fmt.Errorf("unknown -mode %q", *mode))
	}
	wg.Wait()
	trace.Stop()
	check(tf.Close())

	t := truth{WallNs: int64(time.Since(start)), ChanWaitNs: int64(chanWait)}
	for _, h := range holds {
		t.HeldNs += int64(h.to.Sub(h.from))
	}
	for _, ws := range waits {
		for _, w := range ws {
			t.WaitedNs += int64(w.to.Sub(w.from))
		}
		t.DuringHoldNs += int64(overlap(ws, holds))
	}
	for _, name := range []string{"mutex", "block"} {
		f, err := os.Create(filepath.Join(*out, name+".pb.gz"))
		check(err)
		check(pprof.Lookup(name).WriteTo(f, 0))
		check(f.Close())
	}
	b, err := json.Marshal(t)
	check(err)
	check(os.WriteFile(filepath.Join(*out, "truth.json"), b, 0o644))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "waitprog:", err)
		os.Exit(1)
	}
}
