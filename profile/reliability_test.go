package profile

// The reliability suite of the loader: hostile inputs built at test time
// (compression bombs, empty and crowded zips), with the peak memory of
// loading them measured in a subprocess.

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/profdiff/profdiff/profile/inflate"
	"github.com/profdiff/profdiff/profile/internal/memtest"
)

// TestReliabilityChild is the subprocess of loadInChild (see package
// memtest): it loads the file it is given with the size limit given and
// prints the error, for the parent to read with the peak RSS. Run
// directly it does nothing.
func TestReliabilityChild(t *testing.T) {
	args := memtest.Args(t)
	maxSize, _ := strconv.ParseInt(args[1], 10, 64)
	memtest.Measure(func() {
		_, err := Load(context.Background(), args[0], Options{MaxSize: maxSize})
		fmt.Printf("LOAD-ERROR: %v\n", err)
	})
}

// loadInChild loads path with the size limit in a fresh process and returns
// what Load said and the process's peak resident memory in bytes.
func loadInChild(t *testing.T, path string, maxSize int64) (msg string, peak int64) {
	t.Helper()
	out, _, peak := memtest.RunFile(t, "TestReliabilityChild", path, strconv.FormatInt(maxSize, 10))
	_, msg, ok := strings.Cut(out, "LOAD-ERROR: ")
	if !ok {
		t.Fatalf("subprocess said nothing of the load:\n%s", out)
	}
	msg, _, _ = strings.Cut(msg, "\n")
	return msg, peak
}

// zerosGzip is a gzip stream of n zero bytes (1 GiB compresses to 1 MB).
func zerosGzip(t *testing.T, n int) []byte { return repeatGzip(t, 0, n) }

// repeatGzip is a gzip stream of n bytes c.
func repeatGzip(t *testing.T, c byte, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	chunk := bytes.Repeat([]byte{c}, 1<<20)
	for ; n > 0; n -= len(chunk) {
		if _, err := zw.Write(chunk[:min(n, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// childBase is what a test binary that loads nothing peaks at, with slack
// for the runtime's own growth.
const childBase = 48 << 20

func TestReliabilityGzipBombMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 256 MiB twice in subprocesses (about 3 s)")
	}
	const size = 256 << 20
	path := writeTemp(t, "bomb.pb.gz", zerosGzip(t, size))

	// Past the limit: the error comes once the limit is passed, having
	// held about the limit (it was 4 times the limit before the stream
	// was bounded as it arrives).
	const limit = 64 << 20
	msg, peak := loadInChild(t, path, limit)
	if want := path + ": gzip stream expands past the 64MiB limit"; msg != want {
		t.Errorf("error %q, want %q", msg, want)
	}
	if peak > limit+childBase {
		t.Errorf("a bomb past a 64 MiB limit peaked at %d MiB, want under %d MiB", peak>>20, (limit+childBase)>>20)
	}
	t.Logf("past the limit: peak %d MiB", peak>>20)

	// Within the limit: the 256 MiB are held once, in a buffer of the size
	// the gzip trailer announces (not grown by doubling, not copied
	// again), and the zeros are refused as no protobuf without a decoder
	// building anything.
	heldOnce(t, path, size, "gzip data that is not a profile")
}

// heldOnce loads path, which decompresses to size bytes, in a subprocess
// under the default limit, and checks that it failed saying want and
// peaked at the data plus an eighth (and the test binary's own memory).
func heldOnce(t *testing.T, path string, size int64, want string) {
	t.Helper()
	msg, peak := loadInChild(t, path, 1<<30)
	if !strings.Contains(msg, want) {
		t.Errorf("error %q, want one saying %q", msg, want)
	}
	if bound := size + size/8 + childBase; peak > bound {
		t.Errorf("%s (%d MiB decompressed) peaked at %d MiB, want under %d MiB", filepath.Base(path), size>>20, peak>>20, bound>>20)
	}
	t.Logf("%s within the limit: peak %d MiB", filepath.Base(path), peak>>20)
}

// Text is parsed in place: a 256 MiB gzip of one line of text is held once
// (a copy into a string made it twice), and fails as no profile.
func TestReliabilityTextBombMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 256 MiB in a subprocess (about 2 s)")
	}
	const size = 256 << 20
	path := writeTemp(t, "line.txt.gz", repeatGzip(t, 'a', size))
	heldOnce(t, path, size, "no sample count after the stack")
}

func TestReadLimitedAndDecompress(t *testing.T) {
	data, err := ReadLimited(bytes.NewReader(make([]byte, 100)), 100)
	if err != nil || len(data) != 100 {
		t.Errorf("100 bytes under a 100-byte limit: %d bytes, %v", len(data), err)
	}
	if _, err := ReadLimited(bytes.NewReader(make([]byte, 101)), 100); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "100B limit") {
		t.Errorf("101 bytes under a 100-byte limit: %v, want ErrTooLarge naming the limit", err)
	}
	big := bytes.Repeat([]byte("main;f 1\n"), 100000) // grows the buffer several times
	if data, err := ReadLimited(bytes.NewReader(big), 0); err != nil || !bytes.Equal(data, big) {
		t.Errorf("900 kB read back as %d bytes, %v", len(data), err)
	}

	gz := gzipT(t, gzipT(t, big))
	if out, err := Decompress(gz, 1<<20); err != nil || !bytes.Equal(out, big) {
		t.Errorf("two gzip layers: %d bytes, %v", len(out), err)
	}
	if _, err := Decompress(gz, 1000); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "expands past the 1000B limit") {
		t.Errorf("past the limit: %v", err)
	}
	if _, err := Decompress(gz[:len(gz)/2], 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v, want ErrCorrupt", err)
	}
	if out, err := Decompress(big, 10); err != nil || !bytes.Equal(out, big) {
		t.Errorf("not gzipped: %d bytes, %v (want the data as is)", len(out), err)
	}
}

// A gzip stream whose trailer lies about its size still reads whole: a
// short claim grows the buffer, a long one is only a first guess (and the
// gzip reader then reports the mismatch).
func TestGunzipWrongSizeHint(t *testing.T) {
	want := bytes.Repeat([]byte("main;a;b 7\n"), 5000)
	gz := gzipT(t, want)
	for _, claim := range []uint32{0, 10, uint32(len(want)) - 1, uint32(len(want)) + 1, 1 << 30} {
		lied := append([]byte(nil), gz...)
		lied[len(lied)-4], lied[len(lied)-3], lied[len(lied)-2], lied[len(lied)-1] = byte(claim), byte(claim>>8), byte(claim>>16), byte(claim>>24)
		out, err := readAll(mustGzipReader(t, lied), 1<<20, gzipSize(lied), inflate.FirstSize(int64(len(lied))))
		if !bytes.Equal(out, want) || !errors.Is(err, gzip.ErrChecksum) {
			t.Errorf("claimed size %d: read %d bytes (%v), want %d and a checksum error", claim, len(out), err, len(want))
		}
	}
}

func mustGzipReader(t *testing.T, data []byte) *gzip.Reader {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func TestLoadZipContainers(t *testing.T) {
	const folded = "main;a 3\nmain;b 1\n"
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	path := write("one.zip", zipT(t, map[string]string{"stacks.folded": folded}))
	l := mustLoad(t, path, Options{})
	if l.Format != FormatFolded || strings.Join(l.Containers, ",") != "zip" {
		t.Errorf("one-file zip: format %s, containers %v", l.Format, l.Containers)
	}

	// An empty archive is only its end-of-central-directory record; it
	// was read as a broken protobuf ("bad varint").
	path = write("empty.zip", zipT(t, nil))
	_, err := loadT(t, path, Options{})
	checkError(t, err, path, "empty zip archive")
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("empty zip: %v, want ErrEmpty", err)
	}

	path = write("many.zip", zipT(t, map[string]string{"a.pb.gz": folded, "b.pb.gz": folded, "c.pb.gz": folded, "d.pb.gz": folded, "e.pb.gz": folded}))
	_, err = loadT(t, path, Options{})
	checkError(t, err, path, "zip archive with 5 files (a.pb.gz, b.pb.gz, c.pb.gz, and 2 more)", "exactly one profile")

	// A member announced past the limit is refused before it is inflated.
	path = write("bomb.zip", zipT(t, map[string]string{"zeros.pb": string(make([]byte, 8<<20))}))
	_, err = loadT(t, path, Options{MaxSize: 1 << 20})
	checkError(t, err, path, "zip member zeros.pb expands to 8388608 bytes, past the 1MiB limit")
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("zip bomb: %v, want ErrTooLarge", err)
	}
}

// Text read in place (an owned, decompressed buffer) and text copied (a
// caller's buffer, which Parse must not keep) load the same.
func TestParseOwnedAndCallersText(t *testing.T) {
	text := []byte("\xEF\xBB\xBFmain;a 3\nmain;b 1\n")
	plain, err := Parse("x.folded", text, 0)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := Parse("x.folded.gz", gzipT(t, text), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*Loaded{plain, gz} {
		if got := fmt.Sprint(funcNames(l.Profile.Sample[0]), l.Profile.Sample[0].Value); got != "[a main] [3]" {
			t.Errorf("%s: first sample %s", l.Source, got)
		}
	}
	// The caller's buffer is free to change once Parse returns.
	for i := range text {
		text[i] = 'x'
	}
	if got := plain.Profile.Function[0].Name; got != "main" {
		t.Errorf("after the caller's buffer changed, the first function is %q", got)
	}
}

// One folded line of 500,000 distinct frames (3.9 MB) is a profile of
// 500,000 functions and locations: each costs about 200 bytes of model
// and a map entry while it is built (172 MiB in all here, 210 before
// build.Check replaced CheckValid's maps), and nothing grows faster than
// the line.
func TestReliabilityFoldedLongLineMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 500,000-frame profile in a subprocess (about 2 s)")
	}
	const frames = 500_000
	var b strings.Builder
	for i := range frames {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString("f" + strconv.Itoa(i))
	}
	b.WriteString(" 1\n")
	path := writeTemp(t, "long.folded", []byte(b.String()))
	msg, peak := loadInChild(t, path, 0)
	if msg != "<nil>" {
		t.Fatalf("load: %s", msg)
	}
	if bound := int64(frames*512 + childBase); peak > bound {
		t.Errorf("a line of %d distinct frames peaked at %d MiB, want under %d MiB", frames, peak>>20, bound>>20)
	}
	t.Logf("%d frames (%d kB): peak %d MiB", frames, b.Len()>>10, peak>>20)
}

// loopbackOnly is the check a command passes as Options.CheckURL.
func loopbackOnly(u *url.URL) error {
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback host", u.Hostname())
	}
	return nil
}

func TestLoadURLRedirectsAndSeconds(t *testing.T) {
	data := encodeT(t, testCPUProfile(), true)
	var requests atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write(data)
	})
	// /hop/N redirects N more times, then to the profile.
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		n, _ := strconv.Atoi(r.PathValue("n"))
		to := "/debug/pprof/profile"
		if n > 1 {
			to = "/hop/" + strconv.Itoa(n-1)
		}
		http.Redirect(w, r, to, http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Redirect(w, r, "http://192.0.2.1/debug/pprof/profile", http.StatusFound) // TEST-NET-1, never reached
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	opts := Options{CheckURL: loopbackOnly}

	mustLoad(t, srv.URL+"/hop/3", opts)
	for _, o := range []Options{opts, {HTTPClient: srv.Client()}} {
		src := srv.URL + "/hop/4"
		_, err := loadT(t, src, o)
		checkError(t, err, src, "more than 3 redirects")
	}

	src := srv.URL + "/away"
	requests.Store(0)
	_, err := loadT(t, src, opts)
	checkError(t, err, src, "redirected to http://192.0.2.1/debug/pprof/profile: 192.0.2.1 is not a loopback host")
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (the redirect is refused before it is followed)", n)
	}
	remote := "http://192.0.2.1/debug/pprof/profile"
	_, err = loadT(t, remote, opts)
	checkError(t, err, remote, "192.0.2.1 is not a loopback host")

	// seconds= past 24 hours (it overflowed the timeout) fails at once.
	requests.Store(0)
	for _, secs := range []string{"10000000000", "86401", "99999999999999999999"} {
		src := srv.URL + "/debug/pprof/profile?seconds=" + secs
		_, err := loadT(t, src, opts)
		checkError(t, err, src, "seconds="+secs+" is out of range: a profile takes at most 24 hours (86400 seconds)")
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests for out-of-range seconds", n)
	}
	mustLoad(t, srv.URL+"/debug/pprof/profile?seconds=86400", opts) // the server answers at once
}

// Data that starts with protobuf's field 0 skips pprof's decoders unless a
// legacy parser might read it; the legacy CPU format, which starts with
// zero words, still loads.
func TestNotLegacy(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want bool
	}{
		{"zeros", make([]byte, 1<<20), true},
		{"control bytes", []byte("\x01\x02junk\nmore"), true},
		{"legacy CPU", legacyCPU(), false},
		{"legacy CPU, 32-bit big-endian", []byte{0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0x27, 0x10, 0, 0, 0, 0}, false}, // period 10 ms
		{"words 0 and 3 alone", []byte{0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0}, true},
		{"a header after a control byte", []byte("\x00heap profile: 1: 2 [3: 4] @ heap/1\n"), false},
		{"a --- header after a control byte", []byte("\x00--- contention:\n"), false},
		{"text", []byte("main;a 1\n"), false},
		{"a protobuf", encodeT(t, testCPUProfile(), false), false},
	} {
		if got := notLegacy(c.data); got != c.want {
			t.Errorf("%s: notLegacy = %v, want %v", c.name, got, c.want)
		}
	}
	path := writeTemp(t, "cpu.prof", legacyCPU())
	if l := mustLoad(t, path, Options{}); l.Format != FormatPprofLegacy {
		t.Errorf("legacy CPU profile read as %s", l.Format)
	}
}

// gunzipFile inflates a gzipped regular file's first layer as it reads
// it, to what gunzip makes of its bytes, errors worded alike (truncated,
// corrupt, past the limit), and leaves what is not a gzipped regular
// file to the usual path (false). A second layer, or blank content, is
// the caller's to strip or refuse, as after gunzip.
func TestGunzipFile(t *testing.T) {
	want := bytes.Repeat([]byte("main;a;b 7\n"), 5000)
	gz := gzipT(t, want)
	dir := t.TempDir()
	write := func(name string, data []byte) string { return writeTemp(t, name, data) }
	bad := append([]byte(nil), gz...)
	bad[len(bad)/2] ^= 0xff
	for name, c := range map[string]struct {
		data []byte
		max  int64
	}{
		"whole":       {gz, 1 << 20},
		"truncated":   {gz[:len(gz)/2], 1 << 20},
		"corrupt":     {bad, 1 << 20},
		"too large":   {gz, int64(len(want)) - 1},
		"twice":       {gzipT(t, gz), 1 << 20},
		"blank":       {gzipT(t, []byte("  \n")), 1 << 20},
		"two members": {append(gzipT(t, want[:100]), gzipT(t, want[100:])...), 1 << 20},
	} {
		out, ok, err := gunzipFile(write(name, c.data), c.max)
		wantOut, wantErr := gunzip(c.data, c.max)
		if !ok || !bytes.Equal(out, wantOut) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s: %d bytes, %v, %v; want %d bytes, %v", name, len(out), ok, err, len(wantOut), wantErr)
		}
	}
	if _, _, err := gunzipFile(write("large", gz), int64(len(want))-1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("past the limit: %v, want ErrTooLarge", err)
	}
	if _, ok, _ := gunzipFile(write("plain", want), 1<<20); ok {
		t.Error("a plain file: true")
	}
	if _, ok, _ := gunzipFile(write("small.gz", gz), int64(len(gz))-1); ok {
		t.Error("a file past the limit itself: true")
	}
	if _, ok, _ := gunzipFile(filepath.Join(dir, "missing.gz"), 1<<20); ok {
		t.Error("a missing file: true")
	}
	if _, ok, _ := gunzipFile(dir, 1<<20); ok {
		t.Error("a directory: true")
	}
}

// A pprof file gzipped again (as in transit) loads through both layers,
// read as one stream (gunzipTwice), from a file and from memory alike: the
// containers say gzip twice, and the samples are the profile's own.
func TestLoadTwoGzipLayers(t *testing.T) {
	gz := goHeapProfile(t)
	twice := gzipT(t, gz)
	parse := func(name string, data []byte) *Loaded {
		l, err := Parse(name, data, 0)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// Load drops the profiler's own samples, Parse does not: each is
	// compared with its own kind of read of the profile gzipped once.
	for _, c := range []struct {
		name      string
		got, want *Loaded
	}{
		{"file", mustLoad(t, writeTemp(t, "heap.pb.gz.gz", twice), Options{AllowEmpty: true}), mustLoad(t, writeTemp(t, "heap.pb.gz", gz), Options{AllowEmpty: true})},
		{"memory", parse("heap.pb.gz.gz", twice), parse("heap.pb.gz", gz)},
	} {
		l, want := c.got, c.want
		if strings.Join(l.Containers, ",") != "gzip,gzip" || len(l.Profile.Sample) != len(want.Profile.Sample) || l.Format != want.Format {
			t.Errorf("%s: format %s, containers %v, %d samples; want %s in gzip,gzip, %d samples", c.name, l.Format, l.Containers, len(l.Profile.Sample), want.Format, len(want.Profile.Sample))
		}
	}
	// Cut short, the outer layer's error is the inner stream's.
	if _, err := Parse("cut.gz.gz", twice[:len(twice)-10], 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("cut short: %v, want ErrCorrupt", err)
	}
}
