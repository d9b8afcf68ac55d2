//go:build !linux

package child

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// Without Pdeathsig the standard-input pipe is the guard against orphans:
// the child exits when it reads EOF.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func terminate(p *os.Process) error {
	if runtime.GOOS == "windows" {
		return p.Kill()
	}
	return p.Signal(syscall.SIGTERM)
}

func procCPUTime(pid int) (time.Duration, error) {
	return 0, errors.New("child: CPU time of a running child is read from /proc, Linux only")
}

func restrictCPUs(n int) ([]int, string) {
	return nil, fmt.Sprintf("not pinned: CPU affinity is set on Linux only (%s); GOMAXPROCS=%d still applies", runtime.GOOS, n)
}
