//go:build !linux

package hugeheap

// Reserve does nothing where the system is not Linux: it returns 0.
func Reserve(n int64) int64 { return 0 }
