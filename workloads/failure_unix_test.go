//go:build unix

package workloads

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/capture"
)

// failingRun runs a workload of testTable for a window of seconds, with no
// warmup, and returns its error, its log and how long it took.
func failingRun(t *testing.T, ctx context.Context, rc RunConfig, seconds int) (error, *cancelOn, time.Duration) {
	t.Helper()
	log := &cancelOn{}
	rc.Path, rc.Cores, rc.Connections, rc.Seconds, rc.Table, rc.Log = "/json", 1, 2, seconds, testTable(), log
	rc.NoPerf = true // failure handling is the point; perf start-up would only add to the time measured
	if rc.Out == "" {
		rc.Out = filepath.Join(t.TempDir(), "run")
	}
	start := time.Now()
	_, err := Run(ctx, rc)
	return err, log, time.Since(start)
}

// A child that exits mid-window fails the run at once, with its exit
// status, the end of its stderr and the capture folder, which is marked
// incomplete; it is no interruption.
func TestRunChildDies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and drives load")
	}
	out := filepath.Join(t.TempDir(), "run")
	err, log, took := failingRun(t, context.Background(), RunConfig{Workload: "dies", Args: []string{"2000"}, Out: out}, 5)
	var ce *ChildError
	if !errors.As(err, &ce) || ce.Reason != "child exited (status 2)" || errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want a *ChildError with the exit status, no cancellation", err)
	}
	if took > 4*time.Second {
		t.Errorf("Run took %v: it waited out the 5s window after the child died", took)
	}
	for _, want := range []string{"dies server (1 cores, pid ", "): child exited (status 2); capture folder " + out + " is incomplete (",
		"; its stderr ends: dies: exiting after 2000 requests"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	t.Log(err)
	reaped(t, log)
	man, rerr := capture.ReadManifest(out)
	if !ce.Captured || rerr != nil || !man.Interrupted || !slices.Contains(man.Errors, "server: child exited (status 2)") {
		t.Errorf("captured %v; manifest %v %+v: want it marked interrupted with the exit", ce.Captured, rerr, man)
	}
	row := SweepRows([]*Result{Failed(RunConfig{Cores: 1, Out: out}, err)})[0]
	if row.Failed != "child exited (status 2)" || row.RequestsPerS != 0 {
		t.Errorf("sweep row %+v", row)
	}
}

// A child that stops answering altogether (SIGSTOP) fails the run within
// the hang timeout and is killed and reaped; one whose handler blocks
// every request while the process answers its debug port fails once the
// window has passed without a response, with its profiles kept. The two
// cases mostly wait (for the hang timeout, for the window), so they run
// side by side, and beside the package's other parallel tests.
func TestRunChildHangs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and drives load")
	}
	t.Parallel()
	stopped := func(t *testing.T) {
		// A short hang timeout: the child stops at its 1000th request, a
		// few milliseconds into the window, and every probe after that
		// goes unanswered. A probe that times out earlier, on a busy
		// machine, fails the run the same way.
		const hang = 200 * time.Millisecond
		err, log, took := failingRun(t, context.Background(), RunConfig{Workload: "hangs", Args: []string{"1000"}, HangTimeout: hang}, 8)
		var ce *ChildError
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.Reason, "child stopped answering (no answer from its debug port within 200ms)") || ce.Exit != nil {
			t.Fatalf("err = %v; want a *ChildError saying it stopped answering", err)
		}
		if took > 7*time.Second {
			t.Errorf("Run took %v for a child that hung at once (8s window, %v hang timeout)", took, hang)
		}
		if !strings.Contains(err.Error(), ce.Dir) || ce.Dir == "" {
			t.Errorf("error %q does not name the folder", err)
		}
		t.Log(err)
		reaped(t, log)
	}
	stalls := func(t *testing.T) {
		err, log, took := failingRun(t, context.Background(), RunConfig{Workload: "stalls"}, 1)
		var ce *ChildError
		if !errors.As(err, &ce) || ce.Reason != "server answered no request in the 1s window" || !ce.Complete {
			t.Fatalf("err = %v; want a *ChildError saying no request was answered", err)
		}
		if took > 5*time.Second {
			t.Errorf("Run took %v for a 1s window", took)
		}
		if want := "; its profiles are in " + ce.Dir; !strings.HasSuffix(err.Error(), want) {
			t.Errorf("error %q does not end with %q", err, want)
		}
		if _, err := capture.ReadManifest(ce.Dir); err != nil {
			t.Error(err)
		}
		reaped(t, log)
	}
	// Subtests started from goroutines run at once, not queued behind
	// go test's -parallel limit (GOMAXPROCS by default) as t.Parallel
	// subtests are.
	var wg sync.WaitGroup
	for name, f := range map[string]func(*testing.T){"stopped": stopped, "stalls": stalls} {
		wg.Go(func() { t.Run(name, f) })
	}
	wg.Wait()
}

// A real SIGTERM, through signal.NotifyContext as profdiff's main takes
// it, in the capture window: the error names the signal, the child is
// reaped and the folder is marked interrupted. It stays out of the
// parallel tests: the signal goes to the whole test process.
func TestRunSignalled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and drives load")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	out := filepath.Join(t.TempDir(), "run")
	log := &cancelOn{trigger: "capture: 2 s from ", cancel: func() { syscall.Kill(os.Getpid(), syscall.SIGTERM) }}
	_, err := Run(ctx, RunConfig{Workload: "json", Variant: "baseline", Cores: 1, Connections: 2, Warmup: 100 * time.Millisecond, Seconds: 2, Out: out, Log: log, NoPerf: true})
	if err == nil || !errors.Is(err, context.Canceled) || !errors.Is(err, context.Cause(ctx)) || !strings.Contains(err.Error(), out) {
		t.Fatalf("err = %v; want an interruption naming %s, wrapping the signal's cause", err, out)
	}
	if c := context.Cause(ctx); c == nil || c.Error() != "terminated signal received" || !strings.HasSuffix(err.Error(), ": "+c.Error()) {
		t.Errorf("cause %v; the error %q must end with it", c, err)
	}
	t.Log(err)
	reaped(t, log)
	if man, err := capture.ReadManifest(out); err != nil || !man.Interrupted {
		t.Errorf("manifest %v %+v: want it marked interrupted", err, man)
	}
}
