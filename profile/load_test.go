package profile

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/readertest"
)

func TestLoadPprof(t *testing.T) {
	for _, tc := range []struct {
		name string
		gz   bool
	}{
		{"cpu.pb.gz", true},
		{"cpu.pprof", false},
		{"cpu.pb", true}, // gzipped but not named so: content decides
		{"profile", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, tc.name, encodeT(t, testCPUProfile(), tc.gz))
			l := mustLoad(t, path, Options{})
			if l.Format != "pprof" {
				t.Errorf("Format = %q, want pprof", l.Format)
			}
			if l.Kind != KindCPU {
				t.Errorf("Kind = %q, want cpu", l.Kind)
			}
			if len(l.Warnings) != 0 {
				t.Errorf("unexpected warnings %q", l.Warnings)
			}
			if n := len(l.Profile.Sample); n != 3 {
				t.Errorf("%d samples, want 3", n)
			}
			if got := funcNames(l.Profile.Sample[0]); strings.Join(got, ";") != "main.hot;main.work;main.main;runtime.main" {
				t.Errorf("first stack = %q", got)
			}
			if l.Profile.Sample[0].Value[1] != 300_000_000 {
				t.Errorf("value = %d", l.Profile.Sample[0].Value[1])
			}
		})
	}
}

func TestLoadNotGzippedNamedGz(t *testing.T) {
	path := writeTemp(t, "cpu.pb.gz", encodeT(t, testCPUProfile(), false))
	l := mustLoad(t, path, Options{})
	if !hasWarning(l, "not gzip-compressed") {
		t.Errorf("no warning about the .gz name; warnings %q", l.Warnings)
	}
	if l.Format != "pprof" {
		t.Errorf("Format = %q", l.Format)
	}
}

func TestLoadDoubleGzip(t *testing.T) {
	path := writeTemp(t, "cpu.pb.gz.gz", gzipT(t, encodeT(t, testCPUProfile(), true)))
	l := mustLoad(t, path, Options{})
	if l.Format != "pprof" || l.Kind != KindCPU {
		t.Errorf("Format %q Kind %q", l.Format, l.Kind)
	}
	// Three layers are refused by name.
	path = writeTemp(t, "cpu.pb.gz.gz.gz", gzipT(t, gzipT(t, encodeT(t, testCPUProfile(), true))))
	_, err := loadT(t, path, Options{})
	checkError(t, err, path, "gzip")
	// The limit holds for the inner layer too.
	path = writeTemp(t, "bomb.gz.gz", gzipT(t, gzipT(t, make([]byte, 8<<20))))
	_, err = loadT(t, path, Options{MaxSize: 1 << 20})
	checkError(t, err, path, "expands past the 1MiB limit")
}

func TestLoadFoldedGzipped(t *testing.T) {
	path := writeTemp(t, "stacks.folded.gz", gzipT(t, []byte("main;a;b 3\nmain;c 2\n")))
	l := mustLoad(t, path, Options{})
	if l.Format != "folded" || len(l.Profile.Sample) != 2 || len(l.Warnings) != 0 {
		t.Errorf("Format %q, %d samples, warnings %q", l.Format, len(l.Profile.Sample), l.Warnings)
	}
}

// legacyCPU builds a gperftools binary CPU profile (little-endian words).
func legacyCPU() []byte {
	var b []byte
	w := func(vs ...uint64) {
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	w(0, 3, 0, 10000, 0)                  // header: period 10 ms
	w(7, 3, 0x401000, 0x402010, 0x403020) // 7 samples, 3 frames
	w(2, 2, 0x401100, 0x403020)
	w(0, 1, 0) // end of data
	b = append(b, "00400000-00500000 r-xp 00000000 00:00 0 /bin/app\n"...)
	return b
}

func TestLoadLegacy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    []byte
		kind    Kind
		samples int
	}{
		{"cpu.prof", legacyCPU(), KindCPU, 2},
		{"cppbench.contention", []byte(`--- contentionz 1 ---
cycles/second = 3000000000
sampling period = 100
ms since reset = 1000
discarded samples = 0
       100     10 @ 0x401000 0x402000 0x403000
       300      2 @ 0x401000 0x404000
--- Memory map: ---
  00400000-00500000: /bin/server
`), KindMutex, 2},
		{"mutex.txt", []byte(`--- mutex:
cycles/second=2000000000
sampling period=1
1000000 5 @ 0x401000 0x402000 0x403000
#	0x401000	sync.(*Mutex).Unlock+0x0	/go/src/sync/mutex.go:1
`), KindMutex, 1},
		{"goroutine.txt", []byte(`goroutine profile: total 3
2 @ 0x401000 0x402000 0x403000
#	0x401000	runtime.gopark+0x0	/go/src/runtime/proc.go:1

1 @ 0x401000 0x404000
`), KindGoroutine, 2},
		{"heap.txt", []byte(`heap profile: 2: 2048 [4: 4096] @ heap/1048576
1: 1024 [2: 2048] @ 0x401000 0x402000
1: 1024 [2: 2048] @ 0x401000 0x403000
`), KindHeap, 2},
		{"contention.gz", gzipT(t, []byte("--- contentionz 1 ---\ncycles/second = 1000\nsampling period = 1\n  5 2 @ 0x1 0x2\n")), KindMutex, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, tc.name, tc.data)
			l := mustLoad(t, path, Options{})
			if l.Format != "pprof-legacy" {
				t.Errorf("Format = %q, want pprof-legacy", l.Format)
			}
			if l.Kind != tc.kind {
				t.Errorf("Kind = %q, want %q", l.Kind, tc.kind)
			}
			if n := len(l.Profile.Sample); n != tc.samples {
				t.Errorf("%d samples, want %d", n, tc.samples)
			}
		})
	}
}

func TestLoadBadInput(t *testing.T) {
	good := encodeT(t, testCPUProfile(), false)
	goodGz := encodeT(t, testCPUProfile(), true)
	heap := readertest.RuntimeProfile(t, "heap") // as the runtime writes it
	noSamples := buildTestProfile([]string{"samples/count", "cpu/nanoseconds"}, "cpu/nanoseconds", 1e7, nil)
	junk := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(junk)
	junk[0] = 0x07 // not a protobuf tag
	for _, tc := range []struct {
		name string
		data []byte
		want []string
	}{
		{"empty.pb.gz", nil, []string{"empty file"}},
		{"blank.txt", []byte(" \n\t\r\n  \n"), []string{"empty file"}},
		{"empty-gzip.pb.gz", gzipT(t, nil), []string{"empty"}},
		{"blank-gzip.gz", gzipT(t, []byte("\n\n   \n")), []string{"empty"}},
		{"truncated.pb.gz", goodGz[:len(goodGz)/2], []string{"truncated gzip"}},
		{"truncated-tail.pb.gz", goodGz[:len(goodGz)-4], []string{"gzip"}},
		{"badheader.gz", []byte{0x1f, 0x8b, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42}, []string{"gzip"}},
		{"truncated.pb", good[:len(good)-5], []string{"truncated or corrupt pprof data: top-level field", fmt.Sprintf("runs past the end of the file, at byte %d (a file cut short?)", len(good)-5)}},
		{"truncated-inner.pb.gz", gzipT(t, good[:len(good)/3]), []string{"truncated-inner.pb.gz: in the gunzipped data: truncated or corrupt pprof data", fmt.Sprintf("at byte %d (a file cut short?)", len(good)/3)}},
		{"heap-cut.pb", heap[:len(heap)-1], []string{"truncated or corrupt pprof data: top-level field", fmt.Sprintf("runs past the end of the file, at byte %d", len(heap)-1)}},
		{"corrupt.pb", append([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, good...), []string{"corrupt pprof"}},
		{"junk.bin", junk, []string{"unknown binary format"}},
		{"junk.gz", gzipT(t, junk), []string{"unknown format", "gzip"}},
		{"nosamples.pb.gz", encodeT(t, noSamples, true), []string{"no samples"}},
		{"zero-only.folded", []byte("a;b 0\nc 0\n"), []string{"no samples"}},
		{"readme.txt", []byte("This is not a profile.\nIt is a README file.\n"), []string{"unknown format", "no valid folded-stack line"}},
		{"mostly-not-folded.txt", []byte("a;b 1\nhello there\nsome words here\nmore prose\n"), []string{"unknown format", "3 of 4 lines malformed"}},
		{"latin1.txt", []byte("caf\xe9;main 3\n"), []string{"unknown format", "UTF-8"}},
		{"odd-utf16.txt", []byte{0xFF, 0xFE, 'a', 0, ' ', 0, '1'}, []string{"UTF-16"}},
		{"broken.heap", []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n99999999999999999999: 2 [3: 4] @ 0x1\n"), []string{`legacy pprof heap profile (text), malformed at line 2, "99999999999999999999: 2 [3: 4] @ 0x1": `, "out of range"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTemp(t, tc.name, tc.data)
			l, err := loadT(t, path, Options{})
			if err == nil {
				t.Fatalf("loaded (%s, %d samples, warnings %q); want an error", l.Format, len(l.Profile.Sample), l.Warnings)
			}
			checkError(t, err, path, tc.want...)
			t.Logf("%v", err)
		})
	}
}

// TestLoadTruncatedEverywhere cuts a protobuf at every length: each must load
// (a cut on a message boundary may leave a smaller valid profile) or fail
// with a one-line error; none may panic.
func TestLoadTruncatedEverywhere(t *testing.T) {
	good := encodeT(t, testCPUProfile(), false)
	for n := 0; n < len(good); n++ {
		l, err := Parse("cut.pb", good[:n], 0)
		if err != nil {
			checkError(t, err, "cut.pb")
			continue
		}
		checkLoaded(t, l, "cut.pb")
	}
	gz := encodeT(t, testCPUProfile(), true)
	for n := 1; n < len(gz); n++ {
		if _, err := Parse("cut.pb.gz", gz[:n], 0); err != nil {
			checkError(t, err, "cut.pb.gz")
		} else {
			t.Errorf("cut at %d of %d gzip bytes: loaded", n, len(gz))
		}
	}
}

func TestLoadGzipBomb(t *testing.T) {
	// 16 MiB of zeros compresses to about 16 KiB.
	bomb := gzipT(t, make([]byte, 16<<20))
	if len(bomb) > 64<<10 {
		t.Fatalf("bomb is %d bytes", len(bomb))
	}
	path := writeTemp(t, "bomb.pb.gz", bomb)
	_, err := loadT(t, path, Options{MaxSize: 1 << 20})
	checkError(t, err, path, "expands past the 1MiB limit")
	if !errors.Is(err, ErrTooLarge) || strings.Contains(err.Error(), "--max-size") {
		t.Errorf("error %q: want ErrTooLarge, and no CLI flag named", err)
	}

	// Within the limit the same file is read (and fails as not a profile).
	_, err = loadT(t, path, Options{MaxSize: 32 << 20})
	if err == nil || strings.Contains(err.Error(), "limit") {
		t.Errorf("with a 32 MiB limit: %v", err)
	}
}

func TestLoadMaxSizeRaw(t *testing.T) {
	path := writeTemp(t, "big.folded", bytes.Repeat([]byte("main;work 1\n"), 1000))
	_, err := loadT(t, path, Options{MaxSize: 4096})
	checkError(t, err, path, "larger than the 4KiB limit")
	mustLoad(t, path, Options{MaxSize: 1 << 20})
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := loadT(t, dir, Options{})
	checkError(t, err, dir, "is a directory")

	missing := filepath.Join(dir, "nope.pb.gz")
	_, err = loadT(t, missing, Options{})
	checkError(t, err, missing, "no such file")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: errors.Is(err, os.ErrNotExist) = false for %v", err)
	}
}

func TestLoadMissingPeriod(t *testing.T) {
	p := testCPUProfile()
	p.Period = 0
	path := writeTemp(t, "noperiod.pb.gz", encodeT(t, p, true))
	l := mustLoad(t, path, Options{})
	if !hasWarning(l, "no sampling period") {
		t.Errorf("warnings %q, want one about the period", l.Warnings)
	}
	// Folded stacks have no period to miss.
	path = writeTemp(t, "x.folded", []byte("a;b 1\n"))
	if l := mustLoad(t, path, Options{}); hasWarning(l, "period") {
		t.Errorf("folded: warnings %q", l.Warnings)
	}
}

// handProfile hand-encodes a CPU profile whose function messages (and, with
// noLocIDs, location and mapping messages) carry no id; references are by
// position.
func handProfile(noLocIDs bool) []byte {
	strs := []string{"", "samples", "count", "cpu", "nanoseconds", "main.leaf", "main.main", "app.go", "/bin/app"}
	var p pbw
	p = p.msg(1, pbw{}.varint(1, 1).varint(2, 2))
	p = p.msg(1, pbw{}.varint(1, 3).varint(2, 4))
	// sample: locations 1 (leaf), 2; values 4, 40ms (packed)
	locs := pbw{}
	locs = binary.AppendUvarint(locs, 1)
	locs = binary.AppendUvarint(locs, 2)
	vals := pbw{}
	vals = binary.AppendUvarint(vals, 4)
	vals = binary.AppendUvarint(vals, 40_000_000)
	p = p.msg(2, pbw{}.bytes(1, locs).bytes(2, vals))
	m := pbw{}
	if !noLocIDs {
		m = m.varint(1, 1)
	}
	p = p.msg(3, m.varint(2, 0x400000).varint(3, 0x500000).varint(5, 8).varint(7, 1))
	for i := 1; i <= 2; i++ {
		l := pbw{}
		if !noLocIDs {
			l = l.varint(1, uint64(i))
		}
		l = l.varint(2, 1).varint(3, 0x400000+uint64(i)*16)
		p = p.msg(4, l.msg(4, pbw{}.varint(1, uint64(i)).varint(2, int64ToU(int64(10*i)))))
	}
	p = p.msg(5, pbw{}.varint(2, 5).varint(3, 5).varint(4, 7)) // no id
	p = p.msg(5, pbw{}.varint(2, 6).varint(3, 6).varint(4, 7)) // no id
	for _, s := range strs {
		p = p.str(6, s)
	}
	p = p.msg(11, pbw{}.varint(1, 3).varint(2, 4))
	p = p.varint(12, 10_000_000)
	return p
}

func int64ToU(v int64) uint64 { return uint64(v) }

func TestLoadMissingIDs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		noLocIDs bool
		numbered string
	}{
		{"functions", false, "2 function/location/mapping message(s) had no id"},
		{"all", true, "5 function/location/mapping message(s) had no id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := handProfile(tc.noLocIDs)
			for _, gz := range []bool{false, true} {
				d, name := data, "noids.pb"
				if gz {
					d, name = gzipT(t, data), "noids.pb.gz"
				}
				path := writeTemp(t, name, d)
				l := mustLoad(t, path, Options{})
				if !hasWarning(l, tc.numbered) {
					t.Errorf("warnings %q, want %q", l.Warnings, tc.numbered)
				}
				if l.Format != "pprof" || l.Kind != KindCPU {
					t.Errorf("Format %q Kind %q", l.Format, l.Kind)
				}
				if got := strings.Join(funcNames(l.Profile.Sample[0]), ";"); got != "main.leaf;main.main" {
					t.Errorf("stack %q, want main.leaf;main.main", got)
				}
				if v := l.Profile.Sample[0].Value; v[0] != 4 || v[1] != 40_000_000 {
					t.Errorf("values %v", v)
				}
			}
		})
	}
}

func TestNumberMissingIDsMalformed(t *testing.T) {
	for _, data := range [][]byte{
		nil,
		{0x2a},             // function tag, no length
		{0x2a, 0x10, 0x10}, // length past the end
		{0x2a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // huge length
		{0x0b},          // unknown wire type
		{0x09, 1, 2, 3}, // fixed64 past the end
	} {
		if out, n := numberMissingIDs(data); n != 0 || out != nil {
			t.Errorf("numberMissingIDs(%x) = %x, %d; want nil, 0", data, out, n)
		}
	}
	if hasField1([]byte{0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x08, 0x01}) {
		t.Errorf("hasField1 read past a huge length")
	}
}

func TestLoadStdin(t *testing.T) {
	data := encodeT(t, testCPUProfile(), true)
	l, err := loadT(t, "-", Options{Stdin: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	checkLoaded(t, l, "-")
	if l.Format != "pprof" {
		t.Errorf("Format %q", l.Format)
	}

	l = mustLoad(t, "-", Options{Stdin: strings.NewReader("a;b 2\na;c 3\n")})
	if l.Format != "folded" {
		t.Errorf("Format %q", l.Format)
	}

	_, err = loadT(t, "-", Options{Stdin: strings.NewReader("")})
	checkError(t, err, "-", "empty file")
	_, err = loadT(t, "-", Options{Stdin: &failReader{}})
	checkError(t, err, "-", "read failed")
}

type failReader struct{}

func (*failReader) Read([]byte) (int, error) { return 0, errors.New("read failed") }

func TestLoadURL(t *testing.T) {
	data := encodeT(t, testCPUProfile(), true)
	var gotSeconds string
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		gotSeconds = r.URL.Query().Get("seconds")
		w.Write(data)
	})
	mux.HandleFunc("/debug/pprof/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("a;b 1\n"), 10000))
	})
	mux.HandleFunc("/debug/pprof/error", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Could not enable CPU profiling: cpu profiling already in use\nsecond line", http.StatusInternalServerError)
	})
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	defer srv.Close()

	src := srv.URL + "/debug/pprof/profile?seconds=1"
	l := mustLoad(t, src, Options{})
	if l.Format != "pprof" || l.Kind != KindCPU || gotSeconds != "1" {
		t.Errorf("Format %q Kind %q seconds %q", l.Format, l.Kind, gotSeconds)
	}
	mustLoad(t, src, Options{HTTPClient: srv.Client()})

	missing := srv.URL + "/debug/pprof/nothing"
	_, err := loadT(t, missing, Options{})
	checkError(t, err, missing, "HTTP 404 Not Found")

	failing := srv.URL + "/debug/pprof/error"
	_, err = loadT(t, failing, Options{})
	checkError(t, err, failing, "HTTP 500", "cpu profiling already in use")

	big := srv.URL + "/debug/pprof/big"
	_, err = loadT(t, big, Options{MaxSize: 1024})
	checkError(t, err, big, "limit")

	// A closed server: connection refused.
	dead := httptest.NewServer(mux)
	deadURL := dead.URL + "/debug/pprof/profile"
	dead.Close()
	_, err = loadT(t, deadURL, Options{})
	checkError(t, err, deadURL, "fetching profile")

	bad := "http://127.0.0.1:bad/port"
	_, err = loadT(t, bad, Options{})
	checkError(t, err, bad)

	// A cancelled context stops the fetch.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, src, Options{}); err == nil {
		t.Errorf("cancelled context: no error")
	}
}

func TestLoadDropsProfilerSamples(t *testing.T) {
	p := noisyProfile()
	path := writeTemp(t, "wall.pb.gz", encodeT(t, p, true))

	l := mustLoad(t, path, Options{})
	if l.Dropped != 2 {
		t.Errorf("Dropped = %d, want 2", l.Dropped)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings %q: the drop is counted in Dropped, for the caller to report", l.Warnings)
	}
	if len(l.Profile.Sample) != 2 {
		t.Errorf("%d samples left, want 2", len(l.Profile.Sample))
	}

	l = mustLoad(t, path, Options{KeepProfiler: true})
	if l.Dropped != 0 || len(l.Profile.Sample) != 4 || len(l.Warnings) != 0 {
		t.Errorf("KeepProfiler: Dropped %d, %d samples, warnings %q", l.Dropped, len(l.Profile.Sample), l.Warnings)
	}
}

// A profile of nothing but the profiler's own goroutines is empty once
// they are dropped: ErrEmpty, marked ErrProfilerOnly so that a caller can
// say how to keep them without reading the message.
func TestLoadProfilerOnly(t *testing.T) {
	p := noisyProfile()
	p.Sample = p.Sample[:2]
	path := writeTemp(t, "wall.pb.gz", encodeT(t, p, true))
	_, err := loadT(t, path, Options{})
	checkError(t, err, path, "every sample (2) is of the profiler's own goroutines")
	if !errors.Is(err, ErrEmpty) || !errors.Is(err, ErrProfilerOnly) || strings.Contains(err.Error(), "--") {
		t.Errorf("%v: want ErrEmpty and ErrProfilerOnly, and no CLI flag named", err)
	}
	mustLoad(t, path, Options{KeepProfiler: true})
	// Another empty profile is not the profiler's.
	p.Sample = nil
	path = writeTemp(t, "none.pb.gz", encodeT(t, p, true))
	if _, err := loadT(t, path, Options{}); !errors.Is(err, ErrEmpty) || errors.Is(err, ErrProfilerOnly) {
		t.Errorf("no samples: %v, want ErrEmpty alone", err)
	}
}

// noisyProfile is an fgprof-like profile with two profiler-own samples (the
// fgprof sampler, the runtime/pprof profile writer) and two user samples, one
// of which runs under runtime/pprof.Do.
func noisyProfile() *pprofile.Profile {
	return buildTestProfile([]string{"samples/count", "time/nanoseconds"}, "wallclock/nanoseconds", 10101010, []testStack{
		{frames: []string{"runtime.gopark", "time.Sleep", "github.com/felixge/fgprof.Start.func1", "runtime.goexit"}, values: []int64{10, 101010100}},
		{frames: []string{"runtime.gopark", "runtime/pprof.readProfile", "runtime/pprof.profileWriter", "runtime.goexit"}, values: []int64{10, 101010100}},
		{frames: []string{"main.handle", "runtime/pprof.Do", "main.serve", "runtime.goexit"}, values: []int64{5, 50505050}},
		{frames: []string{"main.compute", "main.main", "runtime.main"}, values: []int64{3, 30303030}},
	})
}

func TestParseMaxSizeDefault(t *testing.T) {
	// A zero or negative maxSize means the default, not "nothing".
	data := gzipT(t, []byte("a;b 1\n"))
	for _, max := range []int64{0, -1} {
		if _, err := Parse("x.gz", data, max); err != nil {
			t.Errorf("maxSize %d: %v", max, err)
		}
	}
}

func TestErrorOneLine(t *testing.T) {
	e := &Error{Source: "a.pb", Err: errors.New("bad\nthing\r\nhere")}
	if got := e.Error(); got != "a.pb: bad thing here" {
		t.Errorf("Error() = %q", got)
	}
	inner := errors.New("x")
	if !errors.Is(&Error{"s", inner}, inner) {
		t.Errorf("Unwrap does not reach the cause")
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1GiB", 1 << 30}, {"512MiB", 512 << 20}, {"64KiB", 64 << 10}, {"1G", 1 << 30}, {"100M", 100 << 20},
		{"4K", 4096}, {"4096", 4096}, {"10B", 10}, {"2GB", 2e9}, {"3MB", 3e6}, {"5KB", 5000}, {" 7 MiB ", 7 << 20},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "0", "-1", "abc", "1.5GiB", "MiB", "1TiB", "1 G i B", "9999999999GiB", "99999999999999999999"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("ParseSize(%q) error %q does not quote the input", in, err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{DefaultMaxSize, "1GiB"}, {1 << 20, "1MiB"}, {3 << 10, "3KiB"}, {1000, "1000B"}, {1<<20 + 1, "1048577B"}, {0, "0B"},
	} {
		if got := FormatSize(tc.n); got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if tc.n > 0 {
			if back, err := ParseSize(FormatSize(tc.n)); err != nil || back != tc.n {
				t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", tc.n, back, err)
			}
		}
	}
}

// TestZipCutShort cuts a zip archive that Go's archive/zip wrote, holding
// the runtime's heap profile: before the record that closes the archive,
// and inside it (its comment too), the error says the archive was cut
// short, where, and what its first member is; whole, it loads.
func TestZipCutShort(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("heap.pb")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(readertest.RuntimeProfile(t, "heap"))
	zw.SetComment("made by profdiff's tests")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if _, err := Parse("heap.zip", data, 0); err != nil {
		t.Fatalf("whole archive: %v", err)
	}
	end := bytes.LastIndex(data, []byte("PK\x05\x06")) // the closing record
	for _, tc := range []struct {
		n    int
		want string
	}{
		{len(data) / 2, fmt.Sprintf("zip archive cut short: the file ends at byte %d without the record that closes every zip archive, so its directory is lost (its first member: \"heap.pb\")", len(data)/2)},
		{end + 10, fmt.Sprintf("zip archive cut short: the file ends at byte %d inside the record that closes it, at byte %d (its first member: \"heap.pb\")", end+10, end)},
		{len(data) - 3, fmt.Sprintf("the file ends at byte %d inside the record that closes it, at byte %d", len(data)-3, end)}, // in its comment
	} {
		_, err := Parse("heap.zip", data[:tc.n], 0)
		checkError(t, err, "heap.zip", tc.want)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("cut to %d bytes: %v, want ErrCorrupt", tc.n, err)
		}
		// Gzipped in transit, the places count in the gunzipped data.
		_, err = Parse("heap.zip.gz", gzipT(t, data[:tc.n]), 0)
		checkError(t, err, "heap.zip.gz", "heap.zip.gz: in the gunzipped data: zip archive cut short: the file ends at byte "+strconv.Itoa(tc.n))
	}
}

// TestLegacyCPUCutShort cuts a legacy binary CPU profile (the layout
// gperftools writes): inside a record, the end-of-data record included, it
// fails saying where, even where the pprof library would read it; between
// two records the library reads the samples before the cut, and a warning
// says the file was cut. The Go
// 1.8 profile of the pprof project's fuzz corpus, cut in half, is refused
// the same way.
func TestLegacyCPUCutShort(t *testing.T) {
	data := legacyCPU() // header 0-40, records at 40 and 80, end of data at 112
	if l, err := Parse("cpu.prof", data, 0); err != nil || len(l.Warnings) != 0 {
		t.Fatalf("whole: %v, warnings %q", err, l.Warnings)
	}
	for n, want := range map[int]string{
		100: "legacy binary CPU profile (gperftools' format), corrupt: the file ends at byte 100 inside the record at byte 80, of 2 addresses, before the end-of-data record (a file cut short?)",
		130: "legacy binary CPU profile (gperftools' format), corrupt: the file ends at byte 130 inside the end-of-data record at byte 112 (a file cut short?)",
		// The pprof library reads this one, its last addresses as zeros.
		70: "legacy binary CPU profile (gperftools' format), corrupt: the file ends at byte 70 inside the record at byte 40, of 3 addresses, before the end-of-data record (a file cut short?)",
	} {
		_, err := Parse("cpu.prof", data[:n], 0)
		checkError(t, err, "cpu.prof", want)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: want ErrCorrupt", err)
		}
	}
	// Whole samples, then a memory map line longer than the library
	// reads (64 KiB).
	long := append(data[:136:136], strings.Repeat("x", 70_000)+"\n"...)
	_, err := Parse("cpu.prof", long, 0)
	checkError(t, err, "cpu.prof", "legacy binary CPU profile (gperftools' format), corrupt after its samples' end-of-data record: the pprof library cannot read the memory map that follows")
	// Between two records the library reads the samples before the cut.
	l, err := Parse("cpu.prof", data[:112], 0)
	if err != nil {
		t.Fatalf("cut between records: %v", err)
	}
	if want := "cpu.prof: legacy binary CPU profile (gperftools' format): the file ends at byte 112 between two records, without the end-of-data record (a file cut short?)"; len(l.Warnings) != 1 || !strings.HasPrefix(l.Warnings[0], want) {
		t.Errorf("cut between records: warnings %q, want one that starts %q", l.Warnings, want)
	}
	t.Run("corpus", func(t *testing.T) {
		real, err := os.ReadFile(filepath.Join(corpusDir(t), "google-pprof", "fuzz__corpus__go.crc32.cpu.pb"))
		if err != nil {
			t.Skip(err)
		}
		_, err = Parse("go.crc32.cpu.pb", real[:len(real)/2], 0)
		checkError(t, err, "go.crc32.cpu.pb", "legacy binary CPU profile (gperftools' format), corrupt: the file ends at byte", "before the end-of-data record")
	})
}
