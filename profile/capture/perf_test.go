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
	srv, dir := spinning(t)
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

// A recording whose samples cover less than half its window gets a note
// naming both causes and perf record's last words; one that covers the
// window, or has no samples (noted elsewhere), or no window, gets none.
// perf's "lost" lines are found among its others.
func TestPerfShortSpanAndLost(t *testing.T) {
	short := shortSpan(&File{Samples: 2, SpanNanos: 117_000}, time.Second, "[ perf record: Captured and wrote 0.01 MB perf.data (3 samples) ]")
	want := `perf: the recording's 2 samples span only 117µs of the 1s window: the process barely ran, or perf missed most of the window (perf record said: "[ perf record: Captured and wrote 0.01 MB perf.data (3 samples) ]")`
	if short != want {
		t.Errorf("short span:\n got %s\nwant %s", short, want)
	}
	for _, f := range []File{{Samples: 900, SpanNanos: int64(600 * time.Millisecond)}, {Samples: 0}} {
		if s := shortSpan(&f, time.Second, ""); s != "" {
			t.Errorf("%+v: %s", f, s)
		}
	}
	if s := shortSpan(&File{Samples: 1}, 0, ""); s != "" {
		t.Errorf("no window: %s", s)
	}
	out := "[ perf record: Woken up 3 times to write data ]\nWarning:\nProcessed 81234 events and lost 12 chunks!\n\nCheck IO/CPU overload!\n"
	if got := lostLine(out); got != "Processed 81234 events and lost 12 chunks!" {
		t.Errorf("lostLine: %q", got)
	}
	if got := lostLine("[ perf record: Captured and wrote 0.2 MB perf.data (1102 samples) ]\n"); got != "" {
		t.Errorf("lostLine of a clean run: %q", got)
	}
}

// A recording of this process while a goroutine spins spans most of its
// one-second window (SpanNanos in the manifest) and has no note of a
// short span or of lost events.
func TestCapturePerfSpan(t *testing.T) {
	srv, dir := spinning(t)
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := Capture(ctx, srv.URL, Options{Seconds: 1, Out: dir, Log: &log, Profiles: []string{"goroutine"}, PerfPID: os.Getpid()})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	f, ok := m.File(PerfKind)
	if !ok || f.Samples == 0 || time.Duration(f.SpanNanos) < 500*time.Millisecond {
		t.Fatalf("perf file %+v (ok %v); want samples over at least half the window\nnotes %q errors %q\n%s", f, ok, m.Notes, m.Errors, log.String())
	}
	for _, n := range m.Notes {
		if strings.Contains(n, "span only") || strings.Contains(n, " lost ") {
			t.Errorf("note %q", n)
		}
	}
	back, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := back.File(PerfKind); g.SpanNanos != f.SpanNanos {
		t.Errorf("manifest on disk: span %d; want %d", g.SpanNanos, f.SpanNanos)
	}
}

// spinning skips the test where perf cannot record; otherwise it keeps a
// goroutine of this process spinning until the test ends, and returns a
// pprof server and a capture folder's path.
func spinning(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	if st := ProbePerf(); st.Err != nil {
		t.Skipf("perf cannot record here: %v", st.Err)
	}
	var stop atomic.Bool
	t.Cleanup(func() { stop.Store(true) })
	go func() {
		x := 0
		for !stop.Load() {
			x++
		}
		_ = x
	}()
	srv := httptest.NewServer(pprofMux())
	t.Cleanup(srv.Close)
	return srv, filepath.Join(t.TempDir(), "cap")
}

// A recorder attached to this process is ready (perf acknowledges the
// "disable" that Ready sends from its main loop) within perf's start-up,
// and an "enable" after that is acknowledged at once: the window a
// capture opens then is recorded from its start.
func TestPerfReadyThenEnable(t *testing.T) {
	if st := ProbePerf(); st.Err != nil {
		t.Skipf("perf cannot record here: %v", st.Err)
	}
	rec := StartPerf(os.Getpid())
	defer rec.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	took, err := rec.Ready(ctx)
	if err != nil {
		t.Fatalf("not ready after %v: %v", took, err)
	}
	sent := time.Now()
	if err := <-rec.enable(); err != nil {
		t.Fatalf("enable: %v", err)
	}
	enabled := time.Since(sent)
	t.Logf("ready after %v, enabled %v later", took, enabled)
	if got, sent := rec.acked.Load(), rec.sent.Load(); got != 2 || sent != 2 {
		t.Errorf("%d acknowledgements of %d commands; want 2 of 2", got, sent)
	}
	if err := rec.stop(PerfStopGrace); err != nil {
		t.Errorf("stop: %v", err)
	}
	// Once perf has exited, a command is refused, not waited on.
	if err := <-rec.send("disable"); err == nil {
		t.Error("a command after perf exited was acknowledged")
	}
}
