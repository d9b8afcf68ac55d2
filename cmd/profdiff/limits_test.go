package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The size limit holds memory: a source that would expand past
// --max-size 64MiB fails with exit 2 as it passes the limit, peaking at
// no more than 1.5 times the limit plus 50 MB (the program's own). Each
// bomb is 1 GiB once expanded, so a reader that held what it decoded, or
// believed what a header said, would peak past 1 GB and fail the bound
// by far; 1 GiB rather than more keeps each test about a second.
const (
	limitFlag = "64MiB"
	limitPeak = 64<<20*3/2 + 50e6
)

// checkBounded runs profdiff top on source under the limit and checks the
// exit status, the error and the peak.
func checkBounded(t *testing.T, source, want string) {
	t.Helper()
	stderr, code, _, rss := runMeasured(t, t.TempDir(), "top", "--max-size", limitFlag, source)
	t.Logf("exit %d, peak RSS %.1f MB", code, float64(rss)/1e6)
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, want)
	}
	if rss > limitPeak && !raceEnabled {
		t.Errorf("peak RSS %.1f MB past the %.1f MB bound", float64(rss)/1e6, float64(limitPeak)/1e6)
	}
}

// A gzip file of 1 GiB of zeros, as 64 MiB members: every trailer says
// 64 MiB, the limit itself, so the fast inflater decodes the first member
// before it finds more, and the streaming reader that reads it again
// fails past the limit.
func TestLimitGzipBombFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bomb.pb.gz")
	if err := os.WriteFile(path, gzipBomb(1024), 0o644); err != nil {
		t.Fatal(err)
	}
	checkBounded(t, path, "gzip stream expands past the 64MiB limit")
}

// An HTTP body without end: zeros until the client hangs up.
func TestLimitHTTPEndlessBody(t *testing.T) {
	t.Parallel()
	chunk := make([]byte, 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	checkBounded(t, srv.URL+"/debug/pprof/heap", "larger than the 64MiB limit")
}

// An HTTP gzip bomb, as the body itself (a .pb.gz served as it is) and as
// a Content-Encoding that Go's client decodes as it reads.
func TestLimitHTTPGzipBomb(t *testing.T) {
	t.Parallel()
	bomb := gzipBomb(1024)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("encoded") {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Write(bomb)
	}))
	defer srv.Close()
	checkBounded(t, srv.URL+"/debug/pprof/heap", "gzip stream expands past the 64MiB limit")
	checkBounded(t, srv.URL+"/debug/pprof/heap?encoded=1", "larger than the 64MiB limit")
}

// A zip archive of one member that inflates to 256 MiB of zeros (past
// the bound even once, so a reader that held it all would fail): with
// its sizes as archive/zip writes them it is refused before inflating;
// with a central directory that says 64 MiB, the limit, the member is
// inflated and fails where the stream passes it.
func TestLimitZipBomb(t *testing.T) {
	t.Parallel()
	const size = 256 << 20
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	crc := crc32.NewIEEE()
	zeros := make([]byte, 1<<20)
	for range size / len(zeros) {
		fw.Write(zeros)
		crc.Write(zeros)
	}
	fw.Close()
	for _, c := range []struct {
		name     string
		declared uint64
		want     string
	}{
		{"honest.zip", size, "zip member zeros.pb expands to 268435456 bytes, past the 64MiB limit"},
		{"lying.zip", 64 << 20, "zip member zeros.pb expands past the 67108864 bytes the archive's directory gives"},
	} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "zeros.pb", Method: zip.Deflate, CRC32: crc.Sum32(),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: c.declared})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		checkBounded(t, path, c.want)
	}
}

// Within the limit, a body of unknown length (chunked, as net/http/pprof
// sends a large profile) is held once: its pieces are joined into one
// buffer as each is given back, so 256 MiB peaks under 256 MiB and an
// eighth plus the program's 50 MB, where pieces or a growing buffer
// copied whole held it twice (541 and 581 MB), as did, now and then on a
// busy machine, the runtime's zeroing of the joined buffer (569 MB; see
// bounded's TestReadAllJoinTouchesTheDataOnce).
func TestLimitChunkedBodyHeldOnce(t *testing.T) {
	t.Parallel()
	const size = 256 << 20
	chunk := make([]byte, 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range size / len(chunk) {
			w.Write(chunk)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	stderr, code, _, rss := runMeasured(t, t.TempDir(), "top", srv.URL+"/debug/pprof/heap")
	t.Logf("exit %d, peak RSS %.1f MB", code, float64(rss)/1e6)
	if code != 2 || !strings.Contains(stderr, "unknown binary format") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2, no profile", code, stderr)
	}
	if bound := int64(size + size/8 + 50e6); rss > bound && !raceEnabled {
		t.Errorf("peak RSS %.1f MB past %.1f MB", float64(rss)/1e6, float64(bound)/1e6)
	}
}

// A gzip of a gzip bomb whose inner stream is 1000 members of 64 MiB of
// zeros, 65 MB, just under the limit: the inner stream is never held
// beside what it expands to (both layers are read as one stream), so it
// fails holding the limit once, under the limit plus 50 MB, a file and an
// HTTP body alike (160 MB when the inner stream was held; that is close
// to the 1.5x bound, so this test asks for less).
func TestLimitDoubleGzipBomb(t *testing.T) {
	t.Parallel()
	var outer bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&outer, gzip.BestSpeed)
	zw.Write(gzipBomb(1000 * 64))
	zw.Close()
	path := filepath.Join(t.TempDir(), "double.pb.gz.gz")
	if err := os.WriteFile(path, outer.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(outer.Bytes()) }))
	defer srv.Close()
	for _, source := range []string{path, srv.URL + "/debug/pprof/heap"} {
		stderr, code, _, rss := runMeasured(t, t.TempDir(), "top", "--max-size", limitFlag, source)
		t.Logf("%s: exit %d, peak RSS %.1f MB", source, code, float64(rss)/1e6)
		if code != 2 || !strings.Contains(stderr, "gzip stream expands past the 64MiB limit") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if bound := int64(64<<20 + 50e6); rss > bound && !raceEnabled {
			t.Errorf("peak RSS %.1f MB past %.1f MB", float64(rss)/1e6, float64(bound)/1e6)
		}
	}
}

// The default limit holds too (the long run only: the child takes about
// 1.1 GB): a 4 MB gzip of 4 GiB of zeros, as 64 MiB members, fails past
// 1 GiB peaking within 1.5 times it (plus the program's 50 MB), which is
// what keeps 1 GiB the default (1.12 GB; 3.35 GB before the bounded
// reader).
func TestLimitDefaultGzipBomb(t *testing.T) {
	if !longTests() {
		t.Skip("peaks at about 1.1 GB; PROFDIFF_TEST_LONG=1 runs it")
	}
	path := filepath.Join(t.TempDir(), "bomb.pb.gz")
	if err := os.WriteFile(path, gzipBomb(4096), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr, code, _, rss := runMeasured(t, t.TempDir(), "top", path)
	t.Logf("exit %d, peak RSS %.2f GB", code, float64(rss)/1e9)
	if code != 2 || !strings.Contains(stderr, "gzip stream expands past the 1GiB limit") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if bound := int64(1<<30*3/2 + 50e6); rss > bound && !raceEnabled {
		t.Errorf("peak RSS %.2f GB past %.2f GB", float64(rss)/1e9, float64(bound)/1e9)
	}
}
