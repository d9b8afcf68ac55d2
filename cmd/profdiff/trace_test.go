package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordTrace writes an execution trace of this process to path while
// four goroutines take turns on one mutex (contended) or each sleep
// (not), for about 30 ms.
func recordTrace(t *testing.T, path string, contended bool) {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("tracing unavailable: %v", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				if contended {
					mu.Lock()
					time.Sleep(time.Millisecond) // the scenario: the traced goroutine sleeps holding the mutex
					mu.Unlock()
				} else {
					time.Sleep(time.Millisecond) // the scenario: the traced goroutine sleeps
				}
			}
		}()
	}
	wg.Wait()
	trace.Stop()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A Go execution trace is read directly by diff and top, and a capture
// folder's trace.out with --kind trace.
func TestTraceFiles(t *testing.T) {
	dir := t.TempDir()
	base, news := filepath.Join(dir, "base.trace"), filepath.Join(dir, "new.trace")
	recordTrace(t, base, false)
	recordTrace(t, news, true)

	// By leaf frame: the lock's own frame (by caller, the default for
	// traces, names the test's goroutine instead).
	out, stderr, code := profdiff(t, "", "top", "--by", "frame", news)
	if code != 0 {
		t.Fatalf("top: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"execution trace: time per state", "lock-contention", "Scheduler latency (runnable):", "sync.(*Mutex).Lock"} {
		if !strings.Contains(out, want) {
			t.Errorf("top output lacks %q:\n%s", want, out)
		}
	}

	out, stderr, code = profdiff(t, "", "diff", "--format", "json", base, news)
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	type result struct {
		Kind    string `json:"kind"`
		Buckets []struct {
			Bucket    string
			Base, New float64
		} `json:"buckets"`
		Sched *struct{ Base, New float64 } `json:"sched_latency"`
	}
	var r result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Kind != "trace" || r.Sched == nil {
		t.Errorf("kind %q, sched %v", r.Kind, r.Sched)
	}
	for _, b := range r.Buckets {
		if b.Bucket == "lock-contention" && !(b.New > b.Base+0.05) {
			t.Errorf("lock-contention %.3f → %.3f: the contended trace should show much more", b.Base, b.New)
		}
	}

	// Capture folders hold trace.out; --kind trace diffs those.
	var dirs []string
	for _, src := range []string{base, news} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/debug/pprof/trace" {
				http.NotFound(w, r)
				return
			}
			w.Write(data)
		}))
		d := filepath.Join(dir, "cap-"+filepath.Base(src))
		if _, stderr, code := profdiff(t, "", "capture", srv.URL, "--seconds", "1", "--profiles", "trace", "--out", d); code != 0 {
			srv.Close()
			t.Fatalf("capture: exit %d: %s", code, stderr)
		}
		srv.Close()
		dirs = append(dirs, d)
	}
	out2, stderr, code := profdiff(t, "", "diff", "--kind", "trace", "--format", "json", dirs[0], dirs[1])
	if code != 0 {
		t.Fatalf("diff of capture folders: exit %d: %s", code, stderr)
	}
	var r2 result
	if err := json.Unmarshal([]byte(out2), &r2); err != nil {
		t.Fatal(err)
	}
	if r2.Kind != "trace" || len(r2.Buckets) != len(r.Buckets) {
		t.Errorf("capture folders: %+v", r2)
	}
	for i := range r.Buckets {
		if r.Buckets[i] != r2.Buckets[i] {
			t.Errorf("capture folders diff differently from the files: %+v vs %+v", r2.Buckets[i], r.Buckets[i])
		}
	}
}

// A broken trace fails with the file's name and what is wrong.
func TestTraceBroken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.trace")
	recordTrace(t, path, false)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.trace")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := profdiff(t, "", "top", cut)
	if code != 2 || !strings.Contains(stderr, cut+": ") || !strings.Contains(stderr, "Go execution trace") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
