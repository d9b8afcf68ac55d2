//go:build unix

package workloads

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/workloads/wasmhost"
)

// cancelOn is a Run log that cancels the run's context when a line
// containing trigger is written, as Ctrl-C at that moment would.
type cancelOn struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	trigger string
	cancel  context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if c.trigger != "" && bytes.Contains(p, []byte(c.trigger)) {
		c.trigger = ""
		c.cancel()
	}
	return len(p), nil
}

func (c *cancelOn) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

var serverPid = regexp.MustCompile(`server pid (\d+) `)

// reaped checks that the child whose pid the log names is gone (not even
// a zombie is left).
func reaped(t *testing.T, log *cancelOn) {
	t.Helper()
	m := serverPid.FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no server pid in the log:\n%s", log)
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d still exists after Run returned (kill 0: %v)", pid, err)
	}
}

// TestRunInterrupted cancels a run in its warmup and in its capture window:
// Run returns promptly with an error that says it was interrupted and
// names the folder, the child has been reaped (no process, not even a
// zombie, is left with its pid), and a folder that was written is marked
// interrupted. Perf records where it can, as in profdiff workload, so the
// run stops a perf recording too; the test runs beside the package's other
// parallel tests, which mostly wait.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and drives load")
	}
	t.Parallel()
	wasm := RunConfig{Workload: "wasm", Variant: "pooling", Path: "/loop", Loop: true,
		Args: wasmhost.Config{PoolSize: 4, Pages: 4, Touch: 64 << 10}.Args()}
	for _, c := range []struct {
		name, trigger string
		warmup        time.Duration
		want          string
		base          RunConfig
	}{
		// The log line that cancels comes once the child is up: the
		// warmup is still running, whatever its length.
		{"warmup", "server pid ", 5 * time.Second, "interrupted during the warmup: nothing captured in ", RunConfig{Workload: "json", Variant: "baseline"}},
		{"window", "capture: 2 s from ", 100 * time.Millisecond, "interrupted: capture folder ", RunConfig{Workload: "json", Variant: "baseline"}},
		// The wasm host's in-process loop (the wasm sweep's loop mode).
		{"wasm-loop", "capture: 2 s from ", 100 * time.Millisecond, "interrupted: capture folder ", wasm},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			log := &cancelOn{trigger: c.trigger, cancel: cancel}
			out := filepath.Join(t.TempDir(), "run")
			rc := c.base
			rc.Cores, rc.Connections, rc.Warmup, rc.Seconds, rc.Out, rc.Log = 1, 2, c.warmup, 2, out, log
			start := time.Now()
			_, err := Run(ctx, rc)
			// Well inside the child's 5 s stop grace: the child exits on
			// SIGTERM rather than being killed.
			if d := time.Since(start); d > c.warmup+3*time.Second {
				t.Errorf("Run took %v after an interruption", d)
			}
			if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), c.want+out) {
				t.Fatalf("err = %v; want %q with the folder, wrapping context.Canceled", err, c.want)
			}
			reaped(t, log)
			if !strings.Contains(log.String(), "interrupted: the load and the server (pid ") {
				t.Errorf("the interruption is not logged:\n%s", log)
			}
			if c.name == "warmup" {
				return
			}
			var ie *capture.InterruptedError
			if !errors.As(err, &ie) || len(ie.Missing) == 0 {
				t.Errorf("err %v is not an *InterruptedError listing what is missing", err)
			}
			man, rerr := capture.ReadManifest(out)
			if rerr != nil || !man.Interrupted {
				t.Errorf("manifest: %v, %+v; want one marked interrupted", rerr, man)
			}
		})
	}
}

// A load cut short after every profile had arrived: the run marks the
// manifest itself and names the load report as what is missing.
func TestLoadInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	r := &run{cfg: RunConfig{Out: out}}
	err := r.loadInterrupted(ctx, &capture.Manifest{Format: capture.ManifestFormat, Files: []capture.File{}}, nil)
	if want := "interrupted: capture folder " + out + " is incomplete (load report missing)"; err == nil || err.Error() != want || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v; want %q wrapping context.Canceled", err, want)
	}
	man, rerr := capture.ReadManifest(out)
	if rerr != nil || !man.Interrupted || len(man.Errors) != 1 {
		t.Errorf("manifest: %v %+v", rerr, man)
	}
}
