package profile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// What StackWriter writes is a valid pprof profile that pprof's library
// and profdiff's own loader read back sample for sample: stacks leaf
// first, values (negative ones too), labels and frame names.
func TestStackWriter(t *testing.T) {
	// base labels the second sample as a diff's base sample ("true") or
	// not (""), with a positive value: profdiff refuses to read a diff
	// profile as an input.
	write := func(base string) []byte {
		var buf bytes.Buffer
		w := NewStackWriter(&buf, "cpu", "nanoseconds")
		names := []string{"main", "work", "spin", "runtime.gopark"}
		w.Add([]int32{0, 1, 2}, 30, BaseLabel, "", "bucket", "cpu")
		v := 20.4
		if base != "" {
			v = -v
		}
		w.Add([]int32{0, 3}, v, BaseLabel, base, "bucket", "wait")
		w.Add([]int32{0, 1}, 0.2) // rounds to 0: skipped
		w.Add(nil, 5)
		if err := w.Close(func(id int32) string { return names[id] }); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, read := range []struct {
		name string
		base bool
		load func() (*pprofile.Profile, error)
	}{
		{"pprof", true, func() (*pprofile.Profile, error) { return pprofile.Parse(bytes.NewReader(write("true"))) }},
		{"profdiff", false, func() (*pprofile.Profile, error) {
			var buf bytes.Buffer
			buf.Write(write(""))
			path := filepath.Join(t.TempDir(), "w.pb.gz")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				return nil, err
			}
			l, err := Load(context.Background(), path, Options{AllowEmpty: true})
			if err != nil {
				return nil, err
			}
			return l.Profile, nil
		}},
	} {
		p, err := read.load()
		if err != nil {
			t.Fatalf("%s: %v", read.name, err)
		}
		if len(p.SampleType) != 1 || p.SampleType[0].Type != "cpu" || p.SampleType[0].Unit != "nanoseconds" {
			t.Errorf("%s: sample types %v", read.name, p.SampleType)
		}
		want := []struct {
			stack  string
			v      int64
			base   bool
			bucket string
		}{{"spin;work;main", 30, false, "cpu"}, {"runtime.gopark;main", -20, true, "wait"}, {"", 5, false, ""}}
		if len(p.Sample) != len(want) {
			t.Fatalf("%s: %d samples, want %d", read.name, len(p.Sample), len(want))
		}
		for i, s := range p.Sample {
			var fr []string
			for _, l := range s.Location {
				for _, ln := range l.Line {
					fr = append(fr, ln.Function.Name)
				}
			}
			wt := want[i]
			if !read.base {
				wt.base, wt.v = false, max(wt.v, -wt.v)
			}
			if st := strings.Join(fr, ";"); st != wt.stack || s.Value[0] != wt.v || (len(s.Label[BaseLabel]) == 1) != wt.base || strings.Join(s.Label["bucket"], "") != wt.bucket {
				t.Errorf("%s: sample %d: %s %d %v; want %+v", read.name, i, st, s.Value[0], s.Label, wt)
			}
		}
	}
}

// A write error is Close's, however late it comes.
func TestStackWriterError(t *testing.T) {
	bad := errors.New("disk full")
	w := NewStackWriter(failWriter{bad}, "cpu", "nanoseconds")
	for i := range 50_000 {
		w.Add([]int32{0, int32(i % 1000), 2}, 1)
	}
	if err := w.Close(func(int32) string { return "f" }); !errors.Is(err, bad) {
		t.Errorf("Close: %v, want %v", err, bad)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }
