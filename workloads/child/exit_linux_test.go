//go:build linux

package child

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// A child killed by someone else is reported by Exited with its signal; a
// stopped (SIGSTOP) child, which SIGTERM cannot end, is ended by Kill at
// once and counts as ended by the parent.
func TestExitedAndKill(t *testing.T) {
	p, err := Start(context.Background(), Builtin(), Spec{Workload: "json", Variant: "baseline", Cores: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if e := p.Exited(); e != nil {
		t.Errorf("Exited() = %v while the child runs", e)
	}
	syscall.Kill(p.Pid, syscall.SIGKILL)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the killed child was not reaped")
	}
	e := p.Exited()
	if e == nil || e.Reason() != "killed by signal 9 (killed)" || e.Pid != p.Pid {
		t.Fatalf("Exited() = %v", e)
	}
	if err := p.Stop(); err == nil {
		t.Error("Stop after a crash returned nil")
	}

	q, err := Start(context.Background(), Builtin(), Spec{Workload: "json", Variant: "baseline", Cores: 1, StopTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(q.Pid, syscall.SIGSTOP)
	start := time.Now()
	if err := q.Kill(); err != nil {
		t.Errorf("Kill: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Kill took %v", d)
	}
	if !gone(q.Pid) {
		t.Errorf("child %d still exists after Kill", q.Pid)
	}
	if e := q.Exited(); e != nil {
		t.Errorf("Exited() = %v after Kill", e)
	}
	if err := q.Stop(); err != nil {
		t.Errorf("Stop after Kill: %v", err)
	}
}
