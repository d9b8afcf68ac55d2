package profile

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// testStack is one sample of a test profile: frames leaf first, and values.
type testStack struct {
	frames []string
	values []int64
	labels map[string][]string
}

// buildTestProfile builds a valid profile with the given sample types ("type/unit"),
// period type and stacks.
func buildTestProfile(sampleTypes []string, periodType string, period int64, stacks []testStack) *pprofile.Profile {
	vt := func(s string) *pprofile.ValueType {
		t, u, _ := strings.Cut(s, "/")
		return &pprofile.ValueType{Type: t, Unit: u}
	}
	p := &pprofile.Profile{Period: period, TimeNanos: 1_700_000_000_000_000_000, DurationNanos: 10e9}
	for _, st := range sampleTypes {
		p.SampleType = append(p.SampleType, vt(st))
	}
	if periodType != "" {
		p.PeriodType = vt(periodType)
	}
	m := &pprofile.Mapping{ID: 1, Start: 0x400000, Limit: 0x800000, File: "/bin/app", HasFunctions: true}
	p.Mapping = []*pprofile.Mapping{m}
	locs := map[string]*pprofile.Location{}
	for _, s := range stacks {
		var ls []*pprofile.Location
		for _, f := range s.frames {
			loc, ok := locs[f]
			if !ok {
				fn := &pprofile.Function{ID: uint64(len(p.Function) + 1), Name: f, SystemName: f, Filename: "app.go"}
				p.Function = append(p.Function, fn)
				loc = &pprofile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: 0x400000 + uint64(len(p.Location))*16,
					Line: []pprofile.Line{{Function: fn, Line: int64(len(p.Location) + 1)}}}
				p.Location = append(p.Location, loc)
				locs[f] = loc
			}
			ls = append(ls, loc)
		}
		p.Sample = append(p.Sample, &pprofile.Sample{Location: ls, Value: append([]int64(nil), s.values...), Label: s.labels})
	}
	return p
}

// testCPUProfile is a small Go-like CPU profile.
func testCPUProfile() *pprofile.Profile {
	return buildTestProfile([]string{"samples/count", "cpu/nanoseconds"}, "cpu/nanoseconds", 10_000_000, []testStack{
		{frames: []string{"main.hot", "main.work", "main.main", "runtime.main"}, values: []int64{30, 300_000_000}},
		{frames: []string{"main.cold", "main.work", "main.main", "runtime.main"}, values: []int64{10, 100_000_000}},
		{frames: []string{"runtime.mallocgc", "main.alloc", "main.main", "runtime.main"}, values: []int64{5, 50_000_000}},
	})
}

// encodeT serializes p, gzipped (as Profile.Write does) or not.
func encodeT(t testing.TB, p *pprofile.Profile, gz bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if gz {
		err = p.Write(&buf)
	} else {
		err = p.WriteUncompressed(&buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipT(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeTemp writes data to name in a fresh temporary directory.
func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadT(t testing.TB, source string, opts Options) (*Loaded, error) {
	t.Helper()
	var (
		l   *Loaded
		err error
	)
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Load(%q) panicked: %v", source, r)
			}
		}()
		l, err = Load(context.Background(), source, opts)
	}()
	return l, err
}

// mustLoad loads source and checks the result is a valid profile.
func mustLoad(t testing.TB, source string, opts Options) *Loaded {
	t.Helper()
	l, err := loadT(t, source, opts)
	if err != nil {
		t.Fatalf("Load(%q): %v", source, err)
	}
	checkLoaded(t, l, source)
	return l
}

func checkLoaded(t testing.TB, l *Loaded, source string) {
	t.Helper()
	if l == nil || l.Profile == nil {
		t.Fatalf("%s: no profile", source)
	}
	if l.Source != source {
		t.Errorf("Source = %q, want %q", l.Source, source)
	}
	if err := l.Profile.CheckValid(); err != nil {
		t.Errorf("%s: CheckValid: %v", source, err)
	}
	if len(l.Profile.Sample) == 0 {
		t.Errorf("%s: no samples", source)
	}
	for _, w := range l.Warnings {
		if !strings.HasPrefix(w, source+": ") {
			t.Errorf("warning %q does not start with the source %q", w, source)
		}
		if strings.ContainsAny(w, "\r\n") {
			t.Errorf("warning %q spans lines", w)
		}
	}
}

// checkError checks err is a one-line *Error for source whose message holds
// every one of want (case-insensitively).
func checkError(t testing.TB, err error, source string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want one mentioning %q", source, want)
	}
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s: error %v is a %T, not a *profile.Error", source, err, err)
	}
	if pe.Source != source {
		t.Errorf("Error.Source = %q, want %q", pe.Source, source)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, source+": ") {
		t.Errorf("error %q does not start with the source %q", msg, source)
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error %q spans lines", msg)
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(w)) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
	if pe.Unwrap() == nil {
		t.Errorf("Error.Unwrap() = nil")
	}
}

func hasWarning(l *Loaded, sub string) bool {
	for _, w := range l.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// funcNames returns the function names of a sample, leaf first.
func funcNames(s *pprofile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function != nil {
				out = append(out, ln.Function.Name)
			}
		}
	}
	return out
}

// pbw is a minimal protobuf writer for hand-made profiles.
type pbw []byte

func (b pbw) varint(field int, v uint64) pbw {
	b = binary.AppendUvarint(b, uint64(field)<<3|0)
	return binary.AppendUvarint(b, v)
}

func (b pbw) bytes(field int, v []byte) pbw {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func (b pbw) str(field int, s string) pbw { return b.bytes(field, []byte(s)) }

func (b pbw) msg(field int, m pbw) pbw { return b.bytes(field, m) }

// perfRecord runs perf record with args, first with --no-bpf-event and -N:
// perf's BPF side-band costs about 0.8 s of waiting a recording (perf 6.1;
// the programs recorded load no BPF), and -N copies no binary into
// ~/.debug. A perf that does not know them records without them.
func perfRecord(perf string, args ...string) ([]byte, error) {
	quick := append([]string{"record", "--no-bpf-event", "-N"}, args...)
	out, err := exec.Command(perf, quick...).CombinedOutput()
	if err != nil && bytes.Contains(out, []byte("unknown option")) {
		out, err = exec.Command(perf, append([]string{"record"}, args...)...).CombinedOutput()
	}
	return out, err
}
