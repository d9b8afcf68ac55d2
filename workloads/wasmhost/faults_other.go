//go:build !unix

package wasmhost

func minorFaults() int64 { return -1 }
