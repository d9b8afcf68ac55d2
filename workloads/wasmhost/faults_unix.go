//go:build unix

package wasmhost

import "syscall"

// minorFaults is the process's minor page faults so far (getrusage
// ru_minflt), or -1 when unavailable: a decommitted page touched again is
// one minor fault, which is what keep-resident trades against a memset.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return int64(ru.Minflt)
}
