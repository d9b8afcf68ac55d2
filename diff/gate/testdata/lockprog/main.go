// Command lockprog is the gate's test program: workers that each wait for
// an item's input, do some arithmetic and fold the result into a shared
// total under a sync.Mutex. The base variant (-lock fold) holds the mutex
// only for the folding; the new one (-lock hold) holds it across the wait
// and the arithmetic too, the regression the gate must catch; -lock none
// folds into a per-worker total, so the mutex is never taken. It writes
// the run's mutex profile (-mutex) and block profile (-block) with
// runtime/pprof. Workers are joined by polling an atomic counter rather
// than a WaitGroup (-join poll), and the wait is a sleep, which block
// profiles do not record, so every blocked sample of the block profile is
// the one mutex; -join wg waits on a sync.WaitGroup instead, which block
// profiles record as wait.
package main

import (
	"flag"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

var (
	total uint64
	mu    sync.Mutex
)

// work is the arithmetic of one item.
//
//go:noinline
func work(x uint64, n int) uint64 {
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// fetch is an item's wait for its input, as a read from a disk or a
// service would be: while it sleeps the other workers run, so a mutex held
// across it is contended even where the program gets a single CPU.
//
//go:noinline
func fetch(d time.Duration) { time.Sleep(d) }

// item fetches one item's input, does its work and folds a tenth more of
// it into the shared total under the mutex; with lock "hold" the mutex is
// held across all of it, with "none" it folds into own instead.
//
//go:noinline
func item(x uint64, n int, wait time.Duration, lock string, own *uint64) uint64 {
	switch lock {
	case "none":
		fetch(wait)
		x = work(x, n)
		*own = work(*own+x, n/10)
		return x
	case "hold":
		mu.Lock()
		fetch(wait)
		x = work(x, n)
	default:
		fetch(wait)
		x = work(x, n)
		mu.Lock()
	}
	total = work(total+x, n/10)
	// Yield while holding the mutex, so that another worker finds it held
	// on any number of CPUs: the base variant contends a little in every
	// run, and its profiles are never empty.
	runtime.Gosched()
	mu.Unlock()
	return x
}

func main() {
	lock := flag.String("lock", "fold", "fold: the mutex only around the folding; hold: across the work too (the regression); none: no mutex")
	workers := flag.Int("workers", 4, "goroutines")
	items := flag.Int("items", 50, "items per worker")
	wait := flag.Duration("fetch", 100*time.Microsecond, "each item's wait for its input")
	size := flag.Int("size", 20000, "arithmetic rounds per item")
	mutexOut := flag.String("mutex", "", "write the mutex profile here")
	blockOut := flag.String("block", "", "write the block profile here")
	join := flag.String("join", "poll", "how main waits for the workers: poll an atomic counter, or wg (a sync.WaitGroup)")
	flag.Parse()
	runtime.SetMutexProfileFraction(1)
	runtime.SetBlockProfileRate(1)

	var done atomic.Int32
	var wg sync.WaitGroup
	wg.Add(*workers)
	for w := range *workers {
		go func() {
			defer wg.Done()
			x, own := uint64(w+1), uint64(0)
			for range *items {
				x = item(x, *size, *wait, *lock, &own)
				runtime.Gosched() // between items, as a server between requests
			}
			done.Add(1)
		}()
	}
	if *join == "wg" {
		wg.Wait()
	}
	for done.Load() < int32(*workers) {
		runtime.Gosched()
	}
	for _, p := range []struct{ name, path string }{{"mutex", *mutexOut}, {"block", *blockOut}} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.Lookup(p.name).WriteTo(f, 0); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}
