// Command goprog is the Go program of the ELF/DWARF/pclntab reader tests:
// a generic function (Sum), a method (Spin) with an inlined callee (add),
// a closure and a goroutine. It does the given number of rounds of work
// (a round is about a quarter of a millisecond of CPU in each of two
// goroutines) while runtime/pprof records a CPU profile into the file
// named by its first argument. Work, not time, bounds it, so a loaded
// machine stretches the run but not the number of samples.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
)

type number interface{ ~int | ~int64 | ~float64 }

// Sum is generic: the compiler names its instance Sum[go.shape.int].
//
//go:noinline
func Sum[T number](xs []T) T {
	var s T
	for _, x := range xs {
		s += x * x
	}
	return s
}

type Acc struct{ v uint64 }

// add is small enough to be inlined into Spin, and does most of its work,
// so that most samples of Spin have an inlined frame.
func (a *Acc) add(x uint64) {
	v := a.v*6364136223846793005 + x
	v ^= v >> 29
	v *= 0xbf58476d1ce4e5b9
	a.v = v ^ v>>32
}

//go:noinline
func (a *Acc) Spin(n int) {
	for i := 0; i < n; i++ {
		a.add(uint64(i))
	}
}

func main() {
	out, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rounds, _ := strconv.Atoi(os.Args[2])
	if err := pprof.StartCPUProfile(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	xs := make([]int, 4096)
	for i := range xs {
		xs[i] = i
	}
	var wg sync.WaitGroup
	var total int
	wg.Add(1)
	go func() { // the goroutine: main.main.gowrap1 runs main.main.func1
		defer wg.Done()
		for range rounds * 60 {
			total += Sum(xs)
		}
	}()
	acc := &Acc{}
	square := func(k int) int { return k * k } // the closure
	for range rounds {
		acc.Spin(square(300))
	}
	wg.Wait()
	pprof.StopCPUProfile()
	out.Close()
	fmt.Println(total, acc.v)
}
