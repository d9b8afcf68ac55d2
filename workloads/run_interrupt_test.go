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

// TestRunInterrupted cancels a run in its warmup and in its capture window:
// Run returns promptly with an error that says it was interrupted and
// names the folder, the child has been reaped (no process, not even a
// zombie, is left with its pid), and a folder that was written is marked
// interrupted.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and drives load")
	}
	for _, c := range []struct {
		name, trigger string
		warmup        time.Duration
		want          string
	}{
		// The log line that cancels comes once the child is up: the
		// warmup is still running, whatever its length.
		{"warmup", "server pid ", 5 * time.Second, "interrupted during the warmup: nothing captured in "},
		{"window", "capture: 2 s from ", 100 * time.Millisecond, "interrupted: capture folder "},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			log := &cancelOn{trigger: c.trigger, cancel: cancel}
			out := filepath.Join(t.TempDir(), "run")
			_, err := Run(ctx, RunConfig{
				Workload: "json", Variant: "baseline", Cores: 1, Connections: 2,
				Warmup: c.warmup, Seconds: 2, Out: out, Log: log,
			})
			if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), c.want+out) {
				t.Fatalf("err = %v; want %q with the folder, wrapping context.Canceled", err, c.want)
			}
			m := serverPid.FindStringSubmatch(log.String())
			if m == nil {
				t.Fatalf("no server pid in the log:\n%s", log)
			}
			pid, _ := strconv.Atoi(m[1])
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("child %d still exists after Run returned (kill 0: %v)", pid, err)
			}
			if !strings.Contains(log.String(), "interrupted: load stopped, stopping the server") {
				t.Errorf("the interruption is not logged:\n%s", log)
			}
			if c.name != "window" {
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
