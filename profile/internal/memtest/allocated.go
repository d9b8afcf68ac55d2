package memtest

import "runtime/metrics"

// Allocated returns the bytes of heap that f allocated, as the runtime
// counts them (cumulative, so a collection during f hides nothing).
func Allocated(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}
