package capture

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// GzipBomb is a real gzip stream (compress/gzip's) of n MiB of zeros, as
// members of 64 MiB each, which gzip readers read on as one stream: a 2 GiB
// bomb is about 2 MB and takes a fraction of a second to make.
func GzipBomb(t testing.TB, mib int) []byte {
	t.Helper()
	const chunk = 64
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range min(mib, chunk) {
		zw.Write(zeros)
	}
	zw.Close()
	var out bytes.Buffer
	for left := mib; left > 0; left -= chunk {
		out.Write(member.Bytes())
	}
	return out.Bytes()
}

// bombServer serves a gzip bomb at every path.
func bombServer(t *testing.T, bomb []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(bomb)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A 2 GiB gzip bomb under a 10 MiB limit stops at the limit for every
// kind, at once: nothing is written but a manifest that says the capture
// is not complete, and no download is left behind. (The memory bound is
// measured in a subprocess by cmd/profdiff's TestCaptureBombMemory.)
func TestCaptureGzipBomb(t *testing.T) {
	t.Parallel()
	srv := bombServer(t, GzipBomb(t, 2048))
	dir := filepath.Join(t.TempDir(), "cap")
	start := time.Now()
	m, err := Capture(context.Background(), srv.URL, Options{Seconds: 1, Out: dir, MaxSize: 10 << 20})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), "cpu, wall, mutex, block, goroutine: decompresses to more than 10MiB") ||
		!strings.Contains(err.Error(), "trace: not a Go execution trace") {
		t.Fatalf("err = %v", err)
	}
	if m.Complete || len(m.Files) != 0 {
		t.Errorf("manifest %+v", m)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != ManifestName {
		t.Errorf("folder holds %v; want only the manifest", ents)
	}
}

// A body past MaxSize is refused as it arrives.
func TestCaptureDownloadLimit(t *testing.T) {
	t.Parallel()
	srv := bombServer(t, bytes.Repeat([]byte("x"), 3<<20))
	dir := filepath.Join(t.TempDir(), "cap")
	_, err := Capture(context.Background(), srv.URL, Options{Seconds: 1, Out: dir, MaxSize: 1 << 20, Profiles: []string{"cpu"}})
	if err == nil || !strings.Contains(err.Error(), "cpu: GET /debug/pprof/profile: larger than 1MiB") {
		t.Fatalf("err = %v", err)
	}
}

// loopbackOnly is the check profdiff's CLI gives: loopback hosts only.
func loopbackOnly(u *url.URL) error {
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address", u.Hostname())
	}
	return nil
}

// Redirects: to a loopback URL they are followed, to any other host they
// are refused before a connection is made (192.0.2.1 is TEST-NET-1, which
// nothing answers), and a loop is cut after MaxRedirects.
func TestCaptureRedirects(t *testing.T) {
	t.Parallel()
	good := fakeServer(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/goroutine", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, good.URL+"/debug/pprof/goroutine", http.StatusFound)
	})
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.0.2.1/debug/pprof/profile?"+r.URL.RawQuery, http.StatusFound)
	})
	var hops atomic.Int32
	mux.HandleFunc("/debug/pprof/trace", func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		http.Redirect(w, r, r.URL.String(), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dir := filepath.Join(t.TempDir(), "cap")
	opts := Options{Seconds: 1, Out: dir, CheckURL: loopbackOnly, Profiles: []string{"cpu", "goroutine", "trace"}}
	m, err := Capture(context.Background(), srv.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 1 || m.Files[0].Kind != "goroutine" {
		t.Errorf("files %+v; want the goroutine profile, through its loopback redirect", m.Files)
	}
	want := "cpu: redirected to http://192.0.2.1/debug/pprof/profile?seconds=1: 192.0.2.1 is not a loopback address"
	if len(m.Errors) != 2 || m.Errors[0] != want || !strings.HasPrefix(m.Errors[1], "trace: more than 3 redirects (the last to "+srv.URL+"/debug/pprof/trace") {
		t.Errorf("errors %q; want %q and the trace's redirect loop", m.Errors, want)
	}
	if n := hops.Load(); n != MaxRedirects+1 {
		t.Errorf("the redirect loop was requested %d times; want %d", n, MaxRedirects+1)
	}
	if _, err := os.Stat(filepath.Join(dir, "cpu.pb.gz")); err == nil {
		t.Error("the refused redirect's profile was written")
	}
}

// fakeServer serves a goroutine profile of this process.
func fakeServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(pprofMux())
	t.Cleanup(srv.Close)
	return srv
}

// A dead port: the error says the cause once for all kinds, the manifest
// left behind says the capture is not complete, and a retry into the same
// folder, once the server is up, replaces it.
func TestCaptureDeadPortThenRetry(t *testing.T) {
	// Not parallel: the port freed below must stay dead, and the package's
	// parallel tests start servers on ephemeral ports all the time (one
	// took it once, and the "dead" port answered with resets).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := filepath.Join(t.TempDir(), "cap")
	var log bytes.Buffer
	_, err = Capture(context.Background(), "http://"+addr, Options{Seconds: 1, Out: dir, Log: &log})
	if err == nil || strings.Count(err.Error(), "connection refused") != 1 ||
		!strings.Contains(err.Error(), "cpu, wall, mutex, block, goroutine, trace: dial tcp "+addr) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(log.String(), "refused") {
		t.Errorf("the log repeats the cause:\n%s", log.String())
	}
	// A leftover download is cleared too; anything else is not ours.
	os.WriteFile(filepath.Join(dir, ".cpu.pb.gz.123"+partSuffix), []byte("x"), 0o644)

	srv := fakeServer(t)
	m, err := Capture(context.Background(), srv.URL, Options{Seconds: 1, Out: dir, Profiles: []string{"goroutine"}})
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if !m.Complete || len(m.Files) != 1 || len(m.Errors) != 0 {
		t.Errorf("retry manifest %+v", m)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("folder after the retry: %v", ents)
	}
	// Now complete, the folder is not captured into again.
	if _, err := Capture(context.Background(), srv.URL, Options{Seconds: 1, Out: dir, Profiles: []string{"goroutine"}}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("capture into a complete folder: %v", err)
	}
}

// An incomplete folder holding a file Capture does not write is left
// alone; a format-1 manifest (before Complete) counts as complete.
func TestPrepareDirKeepsOthersFiles(t *testing.T) {
	dir := t.TempDir()
	if err := WriteManifest(dir, &Manifest{Format: ManifestFormat, Interrupted: true, Files: []File{}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	if err := prepareDir(dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("prepareDir with a foreign file: %v", err)
	}
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, ManifestName), []byte(`{"format":1,"files":[]}`), 0o644)
	if m, err := ReadManifest(old); err != nil || !m.Complete {
		t.Errorf("format 1: %+v %v", m, err)
	}
	if err := prepareDir(old); err == nil {
		t.Error("a format-1 capture was cleared")
	}
}

// A symbolic link as the output folder is refused, and the incomplete
// capture it points to is left as it was.
func TestPrepareDirRefusesSymlink(t *testing.T) {
	target := t.TempDir()
	if err := WriteManifest(target, &Manifest{Format: ManifestFormat, Interrupted: true, Files: []File{}}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "out")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := prepareDir(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("prepareDir through a symbolic link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, ManifestName)); err != nil {
		t.Errorf("the linked folder was cleared: %v", err)
	}
}
