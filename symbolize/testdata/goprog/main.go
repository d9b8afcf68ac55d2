// Command goprog burns CPU in a few named functions under runtime/pprof's
// CPU profiler and writes the profile to os.Args[1]: the symbolize tests
// strip its names and name its addresses again.
package main

import (
	"os"
	"runtime/pprof"
)

//go:noinline
func spinA(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

//go:noinline
func spinB(n int) int {
	s := 1
	for i := 0; i < n; i++ {
		s ^= s<<1 + i
	}
	return s
}

var sink int

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	// Work, not time, bounds the run (about a quarter of a second of
	// CPU), so that a loaded machine stretches it but does not take away
	// samples.
	for range 800 {
		sink += spinA(1e5) + spinB(2e5)
	}
	pprof.StopCPUProfile()
	f.Close()
}
