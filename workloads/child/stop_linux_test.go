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
// Close, in the child, logs "closing", waits (10 s at most) for the file
// named by its one argument to exist, and logs "closed": a shutdown that
// a test can hold open.
func testTable() Table {
	t := Builtin()
	t["slow-close"] = func(p Params) (http.Handler, error) {
		if len(p.Args) != 1 {
			return nil, fmt.Errorf("slow-close: want one argument, the file to wait for")
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
	fmt.Fprintln(s.log, "slow-close: closing")
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(s.gate); err == nil {
			fmt.Fprintln(s.log, "slow-close: closed")
			return nil
		}
	}
	fmt.Fprintln(s.log, "slow-close: gave up waiting")
	return nil
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
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
	var log lockedBuf
	p, err := Start(context.Background(), testTable(), Spec{Workload: "slow-close", Args: []string{gate}, Log: &log, StopTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- p.Stop() }()
	for end := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "slow-close: closing"); time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-stopped:
			t.Fatalf("the child ended (Stop: %v; state %v) before it closed its workload; log:\n%s", err, p.cmd.ProcessState, log.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("the child never began closing; log:\n%s", log.String())
		}
	}
	if err := syscall.Kill(p.Pid, syscall.SIGTERM); err != nil {
		t.Fatalf("a second SIGTERM: %v", err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Stop: %v", err)
	}
	if out := log.String(); !strings.Contains(out, "slow-close: closed") {
		t.Errorf("the child did not finish closing (ended by the late SIGTERM?); state %v; log:\n%s", p.cmd.ProcessState, out)
	}
}
