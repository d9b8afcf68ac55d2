package profile

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"strconv"
	"testing"

	"github.com/profdiff/profdiff/profile/inflate"
	"github.com/profdiff/profdiff/profile/internal/bounded"
	"github.com/profdiff/profdiff/profile/internal/memtest"
)

// The tests of this file hold the loader to one rule: no size that input
// announces is allocated on its word. A gzip trailer's ISIZE, a zip
// entry's uncompressed size and an HTTP Content-Length are hints; a file
// that is cut short or lies fails having allocated memory bounded by the
// bytes it really holds. They assert on the bytes allocated (the
// runtime's own count), never on time.

// longTests says whether the exhaustive variants run: every cut of every
// file, bigger inputs. PROFDIFF_TEST_LONG=1 turns them on (.ci/run does);
// the default run takes a representative subset.
func longTests() bool { return os.Getenv("PROFDIFF_TEST_LONG") != "" }

// allocated returns the bytes of heap that f allocated, and the most the
// bounded reader had mapped at once outside the heap meanwhile.
func allocated(f func()) uint64 {
	var heap uint64
	peak := bounded.MappedPeak(func() { heap = memtest.Allocated(f) })
	return heap + uint64(peak)
}

// allocBound is the most a failed load of n input bytes may allocate: the
// decompressors' own state (the streaming reader's window and tables,
// taken once inflate gives up and the streaming reader words the error),
// a first buffer of a few times the input, and a margin for the error's
// text. A trailer that was believed would cost its claim: a gigabyte.
func allocBound(n int) uint64 { return 1<<20 + 24*uint64(n) }

// goHeapProfile is this test binary's heap profile as runtime/pprof
// writes it: a gzipped protobuf written by Go's own profiler.
func goHeapProfile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	if !isGzip(buf.Bytes()) {
		t.Fatalf("runtime/pprof wrote no gzip stream (%d bytes)", buf.Len())
	}
	return buf.Bytes()
}

// withISIZE returns a copy of a gzip stream whose trailer says it
// expands to size bytes.
func withISIZE(gz []byte, size uint32) []byte {
	out := bytes.Clone(gz)
	binary.LittleEndian.PutUint32(out[len(out)-4:], size)
	return out
}

// cuts are the lengths a file of n bytes is cut to: every one in the long
// run; by default the first and last 64 (the header, and the trailer
// that a cut turns into four bytes of deflate data) and about most more
// spread evenly between (a cut costs the work of reading it, so every
// cut of a 40 kB profile is seconds).
func cuts(n, most int) []int {
	step := max(1, n/most)
	var out []int
	for c := 1; c < n; c++ {
		if longTests() || c <= 64 || c >= n-64 || c%step == 0 {
			out = append(out, c)
		}
	}
	return out
}

// Parse of a real gzipped profile cut at any length fails, saying it is
// cut short, having allocated memory bounded by the cut file, whatever
// its last four bytes say (every length with PROFDIFF_TEST_LONG).
func TestGzipCutAnywhereAllocatesByTheData(t *testing.T) {
	gz := goHeapProfile(t)
	if _, err := Parse("heap.pb.gz", gz, 0); err != nil {
		t.Fatalf("the whole profile: %v", err)
	}
	worst, worstAt := uint64(0), 0
	for _, n := range cuts(len(gz), 1000) {
		var err error
		got := allocated(func() { _, err = Parse("cut.pb.gz", gz[:n], 0) })
		if err == nil {
			t.Errorf("cut at %d of %d bytes: loaded", n, len(gz))
			continue
		}
		checkError(t, err, "cut.pb.gz")
		if n > 18 && !errors.Is(err, ErrCorrupt) {
			t.Errorf("cut at %d: %v, want ErrCorrupt", n, err)
		}
		if got > allocBound(n) {
			t.Errorf("cut at %d of %d bytes (its trailer says %d): allocated %d bytes, want at most %d",
				n, len(gz), gzipSize(gz[:n]), got, allocBound(n))
		}
		if got > worst {
			worst, worstAt = got, n
		}
	}
	t.Logf("%d-byte heap profile: the most any cut allocated was %d KiB (cut at %d)", len(gz), worst>>10, worstAt)
}

// Load reads a gzipped file by another path than Parse (the file mapped
// and inflated in one buffer, then the streaming reader from the file,
// which words the error): it is bounded the same way.
func TestGzipFileCutAnywhereAllocatesByTheData(t *testing.T) {
	gz := goHeapProfile(t)
	dir := t.TempDir()
	for _, n := range cuts(len(gz), 300) {
		path := fmt.Sprintf("%s/cut-%d.pb.gz", dir, n)
		if err := os.WriteFile(path, gz[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		got := allocated(func() { _, err = Load(context.Background(), path, Options{}) })
		if err == nil {
			t.Errorf("cut at %d of %d bytes: loaded", n, len(gz))
			continue
		}
		checkError(t, err, path)
		// Load reads the file (n bytes) before the usual reader.
		if got > allocBound(n)+uint64(n) {
			t.Errorf("cut at %d of %d bytes: Load allocated %d bytes, want at most %d", n, len(gz), got, allocBound(n)+uint64(n))
		}
		os.Remove(path)
	}
}

// A whole, valid gzip stream whose trailer alone lies: the data decodes
// cleanly, so only the size check (and the CRC) can catch it. Claims past
// the limit, far past the data, and the 4 GiB that four bytes allow are
// each a clear error with memory bounded by the data; a claim within the
// data's own reach too.
func TestGzipLyingTrailer(t *testing.T) {
	gz := goHeapProfile(t)
	raw, err := Decompress(gz, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []uint32{1, uint32(len(raw)) - 1, uint32(len(raw)) + 1, uint32(len(raw)) * 64, 1<<30 - 1, 1 << 30, 1<<32 - 1} {
		lied := withISIZE(gz, claim)
		for _, via := range []string{"Parse", "Load"} {
			var err error
			got := allocated(func() {
				if via == "Parse" {
					_, err = Parse("lied.pb.gz", lied, 0)
					return
				}
				path := writeTemp(t, "lied.pb.gz", lied)
				_, err = Load(context.Background(), path, Options{})
			})
			if err == nil || !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s, trailer claiming %d of %d bytes: %v, want ErrCorrupt", via, claim, len(raw), err)
			}
			if bound := allocBound(len(lied)) + 3*uint64(len(raw)); got > bound {
				t.Errorf("%s, trailer claiming %d of %d bytes: allocated %d bytes, want at most %d", via, claim, len(raw), got, bound)
			}
		}
	}
}

// A small crafted file: the gzip of a few hundred bytes of folded stacks,
// its trailer claiming nearly 4 GiB. The same as a gzip inside a gzip,
// and with the inner stream's trailer lying.
func TestGzipCraftedSmallFile(t *testing.T) {
	var folded bytes.Buffer
	for i := 0; folded.Len() < 2000; i++ {
		fmt.Fprintf(&folded, "main;worker%d;runtime.futex %d\n", i%37, i)
	}
	crafted := withISIZE(gzipT(t, folded.Bytes()), 0xffff_fff0)
	nested := gzipT(t, crafted)
	for name, data := range map[string][]byte{"crafted.folded.gz": crafted, "nested.folded.gz.gz": nested} {
		var err error
		got := allocated(func() { _, err = Parse(name, data, 0) })
		checkError(t, err, name)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s (%d bytes): %v, want ErrCorrupt", name, len(data), err)
		}
		if got > allocBound(len(data)) {
			t.Errorf("%s (%d bytes): allocated %d bytes, want at most %d", name, len(data), got, allocBound(len(data)))
		}
	}
}

// A zip member whose sizes are written as archive/zip's CreateRaw is told
// them: the central directory says the member expands to 900 MiB, within
// the default limit, while it holds a few kilobytes. The member fails as
// archive/zip finds the size wrong, having allocated by the data.
func TestZipLyingMemberSize(t *testing.T) {
	folded := bytes.Repeat([]byte("main;a;b 1\n"), 500)
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(folded)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: "stacks.folded", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(folded),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: 900 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	got := allocated(func() { _, err = Parse("lied.zip", buf.Bytes(), 0) })
	checkError(t, err, "lied.zip", "stacks.folded")
	if got > allocBound(buf.Len()) {
		t.Errorf("zip member claiming 900 MiB in %d bytes: allocated %d bytes, want at most %d", buf.Len(), got, allocBound(buf.Len()))
	}
}

// A server whose Content-Length claims 512 MiB and that sends a profile
// of a few kilobytes, then closes: the body is read as it arrives, and
// the error says it was cut short, with memory bounded by what came.
func TestHTTPLyingContentLength(t *testing.T) {
	gz := goHeapProfile(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(512<<20))
		w.Write(gz)
		// Returning with the body short of its length: net/http closes
		// the connection, and the client sees an unexpected EOF.
	}))
	defer srv.Close()
	url := srv.URL + "/debug/pprof/heap"
	var err error
	got := allocated(func() { _, err = Load(context.Background(), url, Options{}) })
	if err == nil {
		t.Fatalf("a body short of its Content-Length loaded")
	}
	if bound := allocBound(len(gz)) + 4<<20; got > bound { // the client's own buffers and connection
		t.Errorf("Content-Length 512 MiB, %d bytes sent: allocated %d bytes, want at most %d (%v)", len(gz), got, bound, err)
	}
}

// A right hint is still taken whole: a gzip stream of 8 MiB is read
// into one buffer of its size, not grown from a small guess and copied
// (the data and one buffer, plus the decompressor's state).
func TestGzipRightHintHeldOnce(t *testing.T) {
	var raw bytes.Buffer
	for i := 0; raw.Len() < 8<<20; i++ {
		fmt.Fprintf(&raw, "main;handler;encode%d;runtime.mallocgc %d\n", i%977, i%13+1)
	}
	gz := gzipT(t, raw.Bytes())
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	got := allocated(func() { out, err = readAll(zr, 1<<30, gzipSize(gz), inflate.FirstSize(int64(len(gz)))) })
	if err != nil || !bytes.Equal(out, raw.Bytes()) {
		t.Fatalf("read %d of %d bytes: %v", len(out), raw.Len(), err)
	}
	// The text compresses about 10 times: the first buffer holds four
	// times the input, the next is the hint itself.
	if want := uint64(raw.Len()) + 4*uint64(len(gz)) + 1<<20; got > want {
		t.Errorf("8 MiB with a right hint: allocated %d bytes, want at most %d", got, want)
	}
	if cap(out) != raw.Len() {
		t.Errorf("buffer capacity %d, want exactly the hint %d", cap(out), raw.Len())
	}
}
