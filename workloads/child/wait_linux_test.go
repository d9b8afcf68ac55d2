//go:build linux

package child

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// gone reports whether pid no longer exists (or is a zombie nobody reaped
// yet, which runs nothing).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && strings.HasPrefix(s[i+1:], " Z")
}

// TestParentKilledLeavesNoOrphan kills a parent outright (SIGKILL, no
// chance to clean up) and checks that its child goes too.
func TestParentKilledLeavesNoOrphan(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envTestParent+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(20 * time.Second):
		t.Fatal("parent did not report its child in 20 s")
	}
	pidStr, ok := strings.CutPrefix(line, "CHILDPID ")
	if !ok {
		t.Fatalf("parent said %q", line)
	}
	pid, _ := strconv.Atoi(pidStr)
	if gone(pid) {
		t.Fatalf("child %d not running before the parent was killed", pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !waitGone(pid, 10*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("child %d outlived its SIGKILLed parent", pid)
	}
}

// waitGone waits until pid has exited, through a pidfd (an event, Linux
// 5.3+), or, where pidfds are unavailable, by checking a bounded number of
// times.
func waitGone(pid int, limit time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return gone(pid) || pollGone(pid, limit)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		n, err := unix.Poll(fds, int(time.Until(deadline)/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		// Readable: the process has exited (it may linger as a zombie
		// until its new parent reaps it).
		return n > 0 || gone(pid)
	}
	return gone(pid)
}

// pollGone is waitGone without pidfds (Linux before 5.3): the exit of a
// process that is not this one's child raises no event here, so it checks
// on a ticker, a bounded number of times until the deadline.
func pollGone(pid int, limit time.Duration) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for i := 0; i < 1000 && !gone(pid); i++ {
		select {
		case <-tick.C:
		case <-deadline.C:
			return gone(pid)
		}
	}
	return gone(pid)
}
