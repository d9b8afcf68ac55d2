//go:build unix

package memtest

import (
	"os"
	"syscall"
)

// maxRSS is the peak resident memory rusage gives for a process that
// ended, in bytes (Maxrss is in KiB on Linux), and whether it is known.
func maxRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return ru.Maxrss << 10, true
}
