//go:build linux

package child

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func sysProcAttr() *syscall.SysProcAttr {
	// Pdeathsig fires when the parent thread that forked the child exits;
	// Go keeps its threads unless a goroutine exits while locked to one,
	// which nothing here does. Go's fork code also kills the child at once
	// if the parent died before the prctl took effect.
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// clockTicks is USER_HZ, the unit of /proc/PID/stat's utime and stime. It
// is 100 on every Linux architecture Go supports (sysconf(_SC_CLK_TCK)
// needs cgo to ask).
const clockTicks = 100

// procCPUTime reads utime+stime (fields 14 and 15) of /proc/PID/stat.
func procCPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	var ticks int64
	for _, x := range f[11:13] { // fields 14 and 15; f[0] is field 3
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// restrictCPUs pins every thread of this process to the first n CPUs of
// its current affinity mask, when the mask holds at least n. Affinity is
// per thread on Linux: the runtime already runs several threads, so each
// one in /proc/self/task is set; threads created later inherit the mask
// of their creator. Three passes catch threads started during a pass.
func restrictCPUs(n int) (cpus []int, note string) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Sprintf("not pinned: sched_getaffinity: %v", err)
	}
	var allowed []int
	for c := 0; c < len(set)*64 && len(allowed) < n; c++ {
		if set.IsSet(c) {
			allowed = append(allowed, c)
		}
	}
	if len(allowed) < n {
		return nil, fmt.Sprintf("not pinned: %d CPUs available, fewer than GOMAXPROCS=%d", set.Count(), n)
	}
	var want unix.CPUSet
	want.Zero()
	for _, c := range allowed {
		want.Set(c)
	}
	for pass := 0; pass < 3; pass++ {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return nil, fmt.Sprintf("not pinned: %v", err)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &want); err != nil && err != unix.ESRCH {
				return nil, fmt.Sprintf("not pinned: sched_setaffinity(%d): %v", tid, err)
			}
		}
	}
	return allowed, ""
}
