//go:build linux

package child

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testTable is the built-in table and "slow-close", a workload whose
// Close, in the child, opens the FIFO named by its one argument, logs
// "closing", waits (10 s at most) for a byte on it, and logs "closed": a
// shutdown that a test can hold open and release by writing to the FIFO.
func testTable() Table {
	t := Builtin()
	t["slow-close"] = func(p Params) (http.Handler, error) {
		if len(p.Args) != 1 {
			return nil, fmt.Errorf("slow-close: want one argument, the FIFO to wait on")
		}
		return &slowClose{gate: p.Args[0], log: p.Log}, nil
	}
	return t
}

type slowClose struct {
	gate string
	log  io.Writer
}

func (s *slowClose) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusNoContent)
}

func (s *slowClose) Close() error {
	if s.log == io.Discard {
		return nil // Start's check of the arguments, in the parent
	}
	// Opened for reading and writing, a FIFO opens at once (Linux), is
	// pollable (a read deadline works), and a read waits for a byte rather
	// than seeing EOF; opened before "closing" is logged, the test's
	// write, which follows that line, always has a reader.
	f, err := os.OpenFile(s.gate, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(s.log, "slow-close: cannot open the gate:", err)
		return err
	}
	defer f.Close()
	if err := f.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		fmt.Fprintln(s.log, "slow-close: no deadline on the gate:", err)
		return err
	}
	fmt.Fprintln(s.log, "slow-close: closing")
	var b [1]byte
	if _, err := f.Read(b[:]); err != nil {
		fmt.Fprintln(s.log, "slow-close: gave up waiting:", err)
		return nil
	}
	fmt.Fprintln(s.log, "slow-close: closed")
	return nil
}

// lockedBuf is a log written by one goroutine and read by another; when
// returns a channel closed once the log holds a text.
type lockedBuf struct {
	mu      sync.Mutex
	b       bytes.Buffer
	waiters map[string]chan struct{}
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	for s, ch := range l.waiters {
		if strings.Contains(l.b.String(), s) {
			close(ch)
			delete(l.waiters, s)
		}
	}
	return n, err
}

func (l *lockedBuf) when(s string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(l.b.String(), s) {
		close(ch)
		return ch
	}
	if l.waiters == nil {
		l.waiters = map[string]chan struct{}{}
	}
	l.waiters[s] = ch
	return ch
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A SIGTERM that reaches the child while it shuts down (Stop sends one and
// closes stdin: whichever the child sees first starts the shutdown, and
// the other can arrive after) must not end it before its workload is
// closed: Close is where a workload logs its summary of failures (the
// wasm host's "pool-full: N request(s) failed in all"), and a child ended
// by the signal loses it while Stop reports a clean stop.
func TestLateSIGTERMDoesNotCutShutdown(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go-on")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	var log lockedBuf
	closing := log.when("slow-close: closing")
	p, err := Start(context.Background(), testTable(), Spec{Workload: "slow-close", Args: []string{gate}, Log: &log, StopTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- p.Stop() }()
	select {
	case <-closing:
	case err := <-stopped:
		t.Fatalf("the child ended (Stop: %v; state %v) before it closed its workload; log:\n%s", err, p.cmd.ProcessState, log.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("the child never began closing; log:\n%s", log.String())
	}
	if err := syscall.Kill(p.Pid, syscall.SIGTERM); err != nil {
		t.Fatalf("a second SIGTERM: %v", err)
	}
	// The child holds the FIFO open (it did before logging "closing"), so
	// a non-blocking open for writing finds a reader.
	w, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := <-stopped; err != nil {
		t.Errorf("Stop: %v", err)
	}
	if out := log.String(); !strings.Contains(out, "slow-close: closed") {
		t.Errorf("the child did not finish closing (ended by the late SIGTERM?); state %v; log:\n%s", p.cmd.ProcessState, out)
	}
}
