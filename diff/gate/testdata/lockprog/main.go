// Command lockprog is the gate's test program: workers that each do some
// arithmetic and fold the result into a shared total under a sync.Mutex.
// The base variant (-lock fold) holds the mutex only for the folding; the
// new one (-lock hold) holds it across the arithmetic too, the regression
// the gate must catch; -lock none folds into a per-worker total, so the
// mutex is never taken. It writes the run's mutex profile (-mutex) and block profile
// (-block) with runtime/pprof. Workers are joined by polling an atomic
// counter rather than a WaitGroup, so every blocked sample of the block
// profile is the one mutex.
package main

import (
	"flag"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
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

// item does one item's work and folds a tenth more of it into the shared
// total under the mutex; with lock "hold" the mutex is held across all of
// it, with "none" it folds into own instead.
//
//go:noinline
func item(x uint64, n int, lock string, own *uint64) uint64 {
	switch lock {
	case "none":
		x = work(x, n)
		*own = work(*own+x, n/10)
		return x
	case "hold":
		mu.Lock()
		x = work(x, n)
	default:
		x = work(x, n)
		mu.Lock()
	}
	total = work(total+x, n/10)
	mu.Unlock()
	return x
}

func main() {
	lock := flag.String("lock", "fold", "fold: the mutex only around the folding; hold: across the work too (the regression); none: no mutex")
	workers := flag.Int("workers", 4, "goroutines")
	items := flag.Int("items", 200, "items per worker")
	size := flag.Int("size", 20000, "arithmetic rounds per item")
	mutexOut := flag.String("mutex", "", "write the mutex profile here")
	blockOut := flag.String("block", "", "write the block profile here")
	flag.Parse()
	runtime.SetMutexProfileFraction(1)
	runtime.SetBlockProfileRate(1)

	var done atomic.Int32
	for w := range *workers {
		go func() {
			x, own := uint64(w+1), uint64(0)
			for range *items {
				x = item(x, *size, *lock, &own)
				runtime.Gosched() // between items, as a server between requests
			}
			done.Add(1)
		}()
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
