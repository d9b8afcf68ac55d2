package inflate

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/synth"
)

// inputs are the bytes the tests compress: a real profile's, text, runs
// of one byte (matches of distance 1), short periods (distances 2-7, the
// byte-wise copy), long periods, random bytes (stored blocks), and the
// sizes around the fast loop's margins.
func inputs(t testing.TB) map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := func(n, alphabet int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(alphabet))
		}
		return b
	}
	mixed := make([]byte, 300_000)
	for i := range mixed {
		if i > 16 && r.IntN(3) == 0 {
			mixed[i] = mixed[i-1-r.IntN(16)]
		} else {
			mixed[i] = byte(r.IntN(40))
		}
	}
	in := map[string][]byte{
		"empty":        {},
		"one byte":     {'x'},
		"text":         []byte(strings.Repeat("main.handler;runtime.gopark;sync.(*Mutex).Lock 12\n", 3000)),
		"run":          bytes.Repeat([]byte{0}, 100_000),
		"period 3":     bytes.Repeat([]byte("abc"), 30_000),
		"period 7":     bytes.Repeat([]byte("abcdefg"), 10_000),
		"period 5000":  bytes.Repeat(random(5000, 256), 20),
		"random":       random(200_000, 256),
		"small alpha":  random(100_000, 4),
		"mixed":        mixed,
		"synth pprof":  synthRaw(t, 2000),
		"258 bytes":    random(258, 3),
		"264 bytes":    random(264, 3),
		"265 run":      bytes.Repeat([]byte{7}, 265),
		"70000 random": random(70_000, 256), // more than one stored block
	}
	return in
}

// synthRaw is a synthetic CPU profile of n stacks, uncompressed.
func synthRaw(t testing.TB, n int) []byte {
	t.Helper()
	cfg := synth.DefaultConfig()
	cfg.Stacks = n
	var buf bytes.Buffer
	if err := synth.Generate(cfg).WriteUncompressed(&buf); err != nil { // the bytes a pprof file gzips
		t.Fatal(err)
	}
	return buf.Bytes()
}

func goGzip(t testing.TB, data []byte, level int, h stdgzip.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := stdgzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Header = h
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func klauspostGzip(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := kgzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func check(t *testing.T, name string, z, want []byte) {
	t.Helper()
	got, err := Gunzip(z, 0)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: %d bytes decoded, want %d (first difference at %d)", name, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Every block type and level of Go's and klauspost's writers decodes to
// what was compressed: stored blocks (level 0, and incompressible data),
// fixed and dynamic Huffman codes, Huffman-only blocks, and every header
// field a gzip header can carry.
func TestGunzipGoWriters(t *testing.T) {
	for name, in := range inputs(t) {
		for _, level := range []int{stdgzip.HuffmanOnly, stdgzip.NoCompression, 1, 2, 4, 6, 9} {
			check(t, fmt.Sprintf("%s, compress/gzip level %d", name, level), goGzip(t, in, level, stdgzip.Header{}), in)
		}
		for _, level := range []int{-3 /* ConstantCompression */, -2, 1, 3, 5, 7, 9} {
			check(t, fmt.Sprintf("%s, klauspost level %d", name, level), klauspostGzip(t, in, level), in)
		}
	}
	h := stdgzip.Header{Name: "cpu.pprof", Comment: "a comment", Extra: []byte("extra field")}
	in := []byte(strings.Repeat("header fields ", 100))
	check(t, "name, comment and extra", goGzip(t, in, 6, h), in)
}

// The gzip command (with its file name in the header, as it writes by
// default) at its fastest, default and best levels.
func TestGunzipGzipCommand(t *testing.T) {
	gz, err := exec.LookPath("gzip")
	if err != nil {
		t.Skip("gzip not found: skipping the gzip command's output")
	}
	dir := t.TempDir()
	for name, in := range inputs(t) {
		for _, level := range []string{"-1", "-6", "-9"} {
			f := filepath.Join(dir, "in")
			if err := os.WriteFile(f, in, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(gz, level, "-f", f).CombinedOutput(); err != nil {
				t.Fatalf("gzip %s: %v\n%s", level, err, out)
			}
			z, err := os.ReadFile(f + ".gz")
			if err != nil {
				t.Fatal(err)
			}
			if z[3]&(1<<3) == 0 {
				t.Fatalf("gzip %s wrote no file name: the header case is not covered", level)
			}
			check(t, fmt.Sprintf("%s, gzip %s", name, level), z, in)
		}
	}
}

// Every gzipped file of the corpus of real profiles decodes as
// klauspost's reader decodes it.
func TestGunzipCorpus(t *testing.T) {
	dir := corpus.Need(t)
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		z, err := os.ReadFile(path)
		if err != nil || len(z) < 2 || z[0] != 0x1f || z[1] != 0x8b {
			return err
		}
		zr, err := kgzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Errorf("%s: klauspost: %v", path, err)
			return nil
		}
		want, err := io.ReadAll(zr)
		if err != nil {
			t.Errorf("%s: klauspost: %v", path, err)
			return nil
		}
		n++
		check(t, path, z, want)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no gzipped file in the corpus")
	}
	t.Logf("%d gzipped corpus files", n)
}

// What Gunzip does not read it refuses, never decoding wrong bytes or
// crashing: every cut of a member, every single-bit flip, a wrong trailer,
// two members, bytes after the member, a size past the limit, and a
// trailer announcing more than the input can expand to.
func TestGunzipRefuses(t *testing.T) {
	in := inputs(t)["mixed"][:6000]
	z := goGzip(t, in, 6, stdgzip.Header{})
	refused := func(name string, data []byte, maxSize int64) {
		t.Helper()
		if out, err := Gunzip(data, maxSize); !errors.Is(err, ErrNotHandled) || out != nil {
			t.Errorf("%s: %d bytes, %v; want ErrNotHandled", name, len(out), err)
		}
	}
	for n := range len(z) {
		refused(fmt.Sprintf("cut at %d of %d", n, len(z)), z[:n], 0)
	}
	bad := bytes.Clone(z)
	for i := range len(z) * 8 {
		bad[i/8] ^= 1 << (i % 8)
		out, err := Gunzip(bad, 0)
		if err == nil && !bytes.Equal(out, in) {
			t.Fatalf("bit %d flipped: decoded %d wrong bytes without an error", i, len(out))
		}
		if err != nil && !errors.Is(err, ErrNotHandled) {
			t.Fatalf("bit %d flipped: %v", i, err)
		}
		bad[i/8] ^= 1 << (i % 8)
	}
	crc := bytes.Clone(z)
	crc[len(crc)-8] ^= 1
	refused("wrong CRC-32", crc, 0)
	size := bytes.Clone(z)
	binary.LittleEndian.PutUint32(size[len(size)-4:], uint32(len(in)+1))
	refused("wrong size", size, 0)
	refused("two members", append(bytes.Clone(z), z...), 0)
	refused("a byte after the member", append(bytes.Clone(z), 0), 0)
	refused("past the limit", z, int64(len(in)-1))
	if _, err := Gunzip(z, int64(len(in))); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	// An empty member whose trailer claims 4 GiB - 1: refused before a
	// buffer of that size is made.
	huge := goGzip(t, nil, 6, stdgzip.Header{})
	binary.LittleEndian.PutUint32(huge[len(huge)-4:], 1<<32-1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	refused("a size the input cannot hold", huge, 0)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("a %d-byte input announcing 4 GiB allocated %d bytes", len(huge), grew)
	}
}

// The trailer's size is believed only as far as the data bears it out:
// a member that expands further than its first buffer is decoded again
// into larger ones and comes out whole, while a member cut short, whose
// last four bytes claim what they like, allocates by what it decodes.
func TestGunzipTrailerIsAHint(t *testing.T) {
	// Zeros expand about a thousand times: the first buffer (four times
	// the input) fills, the next one is the trailer's size.
	zeros := make([]byte, 4<<20)
	z := goGzip(t, zeros, 9, stdgzip.Header{})
	var out []byte
	var err error
	grew := allocatedBytes(func() { out, err = Gunzip(z, 0) })
	if err != nil || !bytes.Equal(out, zeros) {
		t.Fatalf("4 MiB of zeros in %d bytes: %d bytes back, %v", len(z), len(out), err)
	}
	if want := uint64(len(zeros)) + uint64(len(zeros))/growRatio + 1<<20; grew > want {
		t.Errorf("4 MiB of zeros: allocated %d bytes, want at most %d (the data once, an eighth before it)", grew, want)
	}

	// A member of text cut short: its trailer is four bytes of deflate
	// data, here made to claim a thousand times the input, within what
	// DEFLATE could expand to (maxRatio), so only the data refutes it.
	in := inputs(t)["mixed"]
	mixed := goGzip(t, in, 6, stdgzip.Header{})
	for _, n := range []int{len(mixed) / 4, len(mixed) / 2, len(mixed) - 9} {
		cut := bytes.Clone(mixed[:n])
		binary.LittleEndian.PutUint32(cut[len(cut)-4:], uint32(n*1000))
		var err error
		grew := allocatedBytes(func() { _, err = Gunzip(cut, 0) })
		if !errors.Is(err, ErrNotHandled) {
			t.Errorf("cut at %d of %d: %v, want ErrNotHandled", n, len(mixed), err)
		}
		if want := uint64(n)*firstRatio*growRatio*growRatio + 1<<20; grew > want {
			t.Errorf("cut at %d of %d, claiming %d bytes: allocated %d bytes, want at most %d", n, len(mixed), n*1000, grew, want)
		}
	}
}

func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// GunzipFile reads a file as Gunzip reads its bytes, and leaves the
// offset where it was, for the caller's streaming reader after a refusal.
func TestGunzipFile(t *testing.T) {
	in := synthRaw(t, 3000)
	path := filepath.Join(t.TempDir(), "cpu.pb.gz")
	if err := os.WriteFile(path, goGzip(t, in, 6, stdgzip.Header{}), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	out, err := GunzipFile(f, st.Size(), 0)
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("GunzipFile: %d bytes, %v", len(out), err)
	}
	if _, err := GunzipFile(f, st.Size(), int64(len(in)-1)); !errors.Is(err, ErrNotHandled) {
		t.Fatalf("past the limit: %v", err)
	}
	if off, err := f.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		t.Fatalf("offset after GunzipFile: %d, %v", off, err)
	}
}

// A file cut short after it was mapped faults when read past its new end:
// GunzipFile refuses it instead of crashing.
func TestGunzipFileCutWhileMapped(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("files are not mapped here")
	}
	in := synthRaw(t, 20_000)
	path := filepath.Join(t.TempDir(), "cpu.pb.gz")
	z := goGzip(t, in, 6, stdgzip.Header{})
	if len(z) < 1<<20 {
		t.Fatalf("the profile is %d bytes gzipped: too small to cut pages off", len(z))
	}
	if err := os.WriteFile(path, z, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap, ok := mapFile(f, int64(len(z)))
	if !ok {
		t.Fatal("mapFile failed")
	}
	defer unmap()
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	// As GunzipFile reads the mapping; the trailer, now past the file's
	// end, is the first read that faults.
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("panicked: %v", p)
			}
		}()
		out, err := gunzipMapped(data, 0)
		if !errors.Is(err, ErrNotHandled) || out != nil {
			t.Fatalf("cut while mapped: %d bytes, %v; want ErrNotHandled", len(out), err)
		}
	}()
}

// FuzzGunzip holds Gunzip to compress/gzip: whatever it decodes without
// an error, compress/gzip decodes to the same bytes as one member. It
// calls gunzip, without Gunzip's guard, so that a panic the guard would
// hide as ErrNotHandled fails the target. The
// seeds are members of each block type; the fuzzer also feeds its input
// through a writer at a level it picks, to reach valid streams deep.
func FuzzGunzip(f *testing.F) {
	for _, level := range []int{stdgzip.HuffmanOnly, 0, 1, 9} {
		f.Add(goGzip(f, []byte(strings.Repeat("abcabcabd", 50)), level, stdgzip.Header{}), uint8(0))
	}
	f.Add([]byte("plain bytes, compressed by the fuzz body"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		if mode%2 == 1 {
			z := goGzip(t, data, int(mode/2)%11-2, stdgzip.Header{})
			check(t, "round trip", z, data)
			return
		}
		out, err := gunzip(data, 1<<24) // unguarded: a panic is a finding
		if err != nil {
			if !errors.Is(err, ErrNotHandled) {
				t.Fatalf("error %v is not ErrNotHandled", err)
			}
			return
		}
		zr, err := stdgzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Gunzip decoded %d bytes; compress/gzip: %v", len(out), err)
		}
		zr.Multistream(false)
		want, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("Gunzip decoded %d bytes; compress/gzip: %v", len(out), err)
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("Gunzip decoded %d bytes, compress/gzip %d (first difference at %d)", len(out), len(want), firstDiff(out, want))
		}
	})
}

// BenchmarkGunzip inflates the 200k-stack synthetic profile (13.9 MB
// gzipped, 21.1 MB raw; MB/s of the gzipped bytes) with Gunzip and with
// the two streaming readers, each into one buffer of the output's size.
func BenchmarkGunzip(b *testing.B) {
	var buf bytes.Buffer
	if err := synth.Generate(synth.DefaultConfig()).Write(&buf); err != nil {
		b.Fatal(err)
	}
	z := buf.Bytes()
	size := int(binary.LittleEndian.Uint32(z[len(z)-4:]))
	stream := func(b *testing.B, open func(io.Reader) (io.Reader, error)) {
		out := make([]byte, size)
		b.SetBytes(int64(len(z)))
		for b.Loop() {
			zr, err := open(bytes.NewReader(z))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(zr, out); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("inflate", func(b *testing.B) {
		b.SetBytes(int64(len(z)))
		for b.Loop() {
			if _, err := Gunzip(z, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("klauspost", func(b *testing.B) {
		stream(b, func(r io.Reader) (io.Reader, error) { return kgzip.NewReader(r) })
	})
	b.Run("compress-gzip", func(b *testing.B) {
		stream(b, func(r io.Reader) (io.Reader, error) { return stdgzip.NewReader(r) })
	})
}
