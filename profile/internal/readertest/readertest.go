// Package readertest holds what the format readers' tests share.
package readertest

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// ReadFile returns the content of path, gunzipped (at most 256 MiB) when
// its name ends in .gz, failing the test on any error.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		data = Gunzip(t, data)
	}
	return data
}

// Gunzip returns gzipped data inflated (at most 256 MiB), failing the test
// on any error.
func Gunzip(t testing.TB, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, 256<<20))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ParseFile reads path (gunzipped when its name ends in .gz), checks that
// looks sniffs it, parses it with parse and checks the profile's
// validity, failing the test on any error. It returns the file's
// content, the profile and the warnings.
func ParseFile(t testing.TB, path string, looks func([]byte) bool, parse func([]byte) (*pprofile.Profile, []string, error)) ([]byte, *pprofile.Profile, []string) {
	t.Helper()
	data := ReadFile(t, path)
	if !looks(data) {
		t.Fatalf("%s: not sniffed as its format", path)
	}
	p, warns, err := parse(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data, p, warns
}

// Stacks sums a profile's first two values (for the readers: samples and
// time, or samples and allocations) by stack, its frames' function names
// root first, joined with ";".
func Stacks(p *pprofile.Profile) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, s := range p.Sample {
		names := make([]string, len(s.Location))
		for i, l := range s.Location {
			names[len(names)-1-i] = l.Line[0].Function.Name
		}
		k := strings.Join(names, ";")
		v := out[k]
		out[k] = [2]int64{v[0] + s.Value[0], v[1] + s.Value[1]}
	}
	return out
}

// RuntimeProfile returns this process's runtime/pprof profile name as the
// runtime writes it, gunzipped: real pprof protobuf without a producer to
// run.
func RuntimeProfile(t testing.TB, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup(name).WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	return Gunzip(t, buf.Bytes())
}
