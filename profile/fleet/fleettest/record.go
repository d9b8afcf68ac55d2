package fleettest

import (
	"bytes"
	"math/rand/v2"
	"runtime/pprof"
	"slices"
	"time"

	pprofile "github.com/google/pprof/profile"
)

// CPUProfile records a real Go CPU profile (runtime/pprof) of this
// process for d while it sorts slices of ints with the generic
// slices.Sort (so the profile holds generic instantiations, named with
// [go.shape.int]) and, when hash is set, hashes bytes too (a second,
// distinct hot path). It fails when another CPU profile is running.
func CPUProfile(d time.Duration, hash bool) (*pprofile.Profile, error) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]int, 4096)
	var sink uint64
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := range xs {
			xs[i] = r.Int()
		}
		slices.Sort(xs)
		if hash {
			sink += fnvLoop(xs)
		}
	}
	pprof.StopCPUProfile()
	_ = sink
	return pprofile.Parse(&buf)
}

//go:noinline
func fnvLoop(xs []int) uint64 {
	h := uint64(14695981039346656037)
	for k := 0; k < 8; k++ {
		for _, x := range xs {
			h ^= uint64(x)
			h *= 1099511628211
		}
	}
	return h
}
