package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFlagDefaults: by default loadcmp checks the default engine at the
// three connection counts the target is stated for, against 95% of wrk.
func TestFlagDefaults(t *testing.T) {
	c, err := parseFlags([]string{"-only", "loadgen"}) // no wrk needed
	if err != nil {
		t.Fatal(err)
	}
	if len(c.conns) != 3 || c.conns[0] != 64 || c.conns[1] != 128 || c.conns[2] != 256 {
		t.Errorf("connection counts %v, want [64 128 256]", c.conns)
	}
	if c.target != 0.95 || c.engine != "" || !c.dedicated || c.rounds != 3 || c.dur != 5*time.Second {
		t.Errorf("target %v engine %q dedicated %v rounds %d duration %v", c.target, c.engine, c.dedicated, c.rounds, c.dur)
	}
	c, err = parseFlags([]string{"-only", "loadgen", "-c", "8, 16", "-engine", "goroutines", "-target", "0.9"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.conns) != 2 || c.conns[1] != 16 || c.engine != "goroutines" || c.target != 0.9 {
		t.Errorf("conns %v engine %q target %v", c.conns, c.engine, c.target)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-only", "loadgen", "-c", "64,x"}, `bad -c "x"`},
		{[]string{"-only", "loadgen", "-c", "0"}, `bad -c "0"`},
		{[]string{"-only", "both"}, "-only wants wrk or loadgen"},
		{[]string{"-only", "loadgen", "-rounds", "0"}, "want 1..50 rounds"},
		{[]string{"-only", "loadgen", "extra"}, "unexpected arguments"},
		{[]string{"-wrk", "/nonexistent/wrk"}, "wrk not found"},
	} {
		if _, err := parseFlags(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestMedianAndOther(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3 = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4 = %v", m)
	}
	// 3 CPU-seconds busy over 2s, 1 of them the server's and 1 the
	// generator's: the others used half a CPU.
	if o := other(3*time.Second, time.Second, time.Second, 2*time.Second); o != 0.5 {
		t.Errorf("other = %v, want 0.5", o)
	}
	if o := other(time.Second, time.Second, time.Second, time.Second); o != 0 {
		t.Errorf("other = %v, want 0 (never negative)", o)
	}
}

func TestPairs(t *testing.T) {
	var p pairs
	p.add(result{rps: 100, clientUS: 10}, result{rps: 90, clientUS: 8})
	p.add(result{rps: 100, clientUS: 12}, result{rps: 110, clientUS: 0}) // no CPU reading
	p.add(result{rps: 0}, result{rps: 50})                               // no wrk result
	if len(p.ratio) != 2 || p.ratio[0] != 0.9 || p.ratio[1] != 1.1 {
		t.Errorf("ratios %v", p.ratio)
	}
	if len(p.wrkUS) != 1 || p.wrkUS[0] != 10 || p.lgUS[0] != 8 {
		t.Errorf("CPU pairs %v %v", p.wrkUS, p.lgUS)
	}
}

// TestWaitQuietInterrupted: an interrupt ends the wait for a quiet machine
// (it used to sleep out -quiet-wait first).
func TestWaitQuietInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// maxOther 0 can never be met: only the context ends the wait.
	if err := waitQuiet(ctx, time.Hour, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("waitQuiet after cancel: %v", err)
	}
}
