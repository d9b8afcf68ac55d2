package workloads

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc/stat's counters (USER_HZ), 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// ReadLoad takes a snapshot of the machine's counters: /proc/loadavg,
// /proc/stat's first line and getrusage. OK is false when one of them
// cannot be read.
func ReadLoad() LoadSnapshot {
	s := LoadSnapshot{Wall: time.Now()}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) > 0 {
			s.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	busy, ok := procStatBusy()
	if !ok {
		return s
	}
	s.Busy = busy
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return s
	}
	s.Own = rusageCPU(&self) + rusageCPU(&children)
	s.OK = true
	return s
}

func rusageCPU(r *syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// procStatBusy is the "cpu" line of /proc/stat summed without idle and
// iowait: user nice system idle iowait irq softirq steal (guest time is
// inside user already).
func procStatBusy() (time.Duration, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for i, v := range fields[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, true
}
