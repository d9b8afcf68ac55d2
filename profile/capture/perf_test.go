package capture

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile"
)

// TestCapturePerfUnavailable: with no perf in PATH, a capture asked to
// record a process with perf says why in the manifest's notes, and
// captures the rest.
func TestCapturePerfUnavailable(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	srv := httptest.NewServer(pprofMux())
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "cap")
	var log strings.Builder
	m, err := Capture(context.Background(), srv.URL, Options{Seconds: 1, Out: dir, Log: &log, Profiles: []string{"goroutine"}, PerfPID: os.Getpid()})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	want := "perf: not recorded: perf is not installed (not found in PATH)"
	if len(m.Notes) != 1 || m.Notes[0] != want || len(m.Errors) != 0 {
		t.Errorf("notes %q, errors %q; want the note %q", m.Notes, m.Errors, want)
	}
	if _, ok := m.File(PerfKind); ok || !m.Complete {
		t.Errorf("files %+v, complete %v", m.Files, m.Complete)
	}
	if !strings.Contains(log.String(), want) {
		t.Errorf("log lacks the note:\n%s", log.String())
	}
	back, err := ReadManifest(dir)
	if err != nil || len(back.Notes) != 1 || back.Params["perf_pid"] != float64(os.Getpid()) {
		t.Errorf("manifest on disk: %v %+v", err, back)
	}
}

// TestCapturePerfBounded records this test process with perf while a
// goroutine spins, with a perf script limit far below what a second of
// stacks takes: the text is cut at a whole sample, under the limit, said
// in a note, and still loads as a CPU profile.
func TestCapturePerfBounded(t *testing.T) {
	if st := ProbePerf(); st.Err != nil {
		t.Skipf("perf cannot record here: %v", st.Err)
	}
	var stop atomic.Bool
	defer stop.Store(true)
	go func() {
		x := 0
		for !stop.Load() {
			x++
		}
		_ = x
	}()
	srv := httptest.NewServer(pprofMux())
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "cap")
	var log strings.Builder
	const limit = 32 << 10
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := Capture(ctx, srv.URL, Options{Seconds: 1, Out: dir, Log: &log, Profiles: []string{"goroutine"}, PerfPID: os.Getpid(), PerfMaxScript: limit})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	f, ok := m.File(PerfKind)
	if !ok {
		t.Fatalf("no perf file: notes %q errors %q\n%s", m.Notes, m.Errors, log.String())
	}
	if f.Bytes > limit || f.Bytes == 0 || f.Samples == 0 {
		t.Errorf("perf file %+v; want 1 to %d bytes with samples", f, limit)
	}
	cut := false
	for _, n := range m.Notes {
		cut = cut || strings.Contains(n, "perf script output cut at the limit of 32KiB")
	}
	if !cut {
		t.Errorf("no note of the cut: %q", m.Notes)
	}
	// Stored gzipped: the text inside ends at a whole sample.
	raw, err := os.ReadFile(filepath.Join(dir, f.Path))
	if err == nil && !isGzip(raw) {
		t.Errorf("%s is not gzipped", f.Path)
	}
	b, err := profile.Decompress(raw, limit)
	if err != nil || !strings.HasSuffix(string(b), "\n\n") {
		t.Errorf("not cut at a blank line: %v, ends %q", err, string(b[max(0, len(b)-40):]))
	}
	l, err := profile.Load(ctx, filepath.Join(dir, f.Path), profile.Options{})
	if err != nil || l.Kind != profile.KindCPU {
		t.Fatalf("load: %v (kind %v)", err, l)
	}
}
