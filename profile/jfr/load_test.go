package jfr_test

import (
	"compress/gzip"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/jfr"
)

// load reads a file as profdiff's commands do.
func load(t *testing.T, path string) *profile.Loaded {
	t.Helper()
	l, err := profile.Load(context.Background(), path, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// typeTotals sums every sample type of a loaded profile.
func typeTotals(l *profile.Loaded) map[string]int64 {
	out := map[string]int64{}
	for _, s := range l.Profile.Sample {
		for i, st := range l.Profile.SampleType {
			out[st.Type+"/"+st.Unit] += s.Value[i]
		}
	}
	return out
}

// TestGzipped: a gzipped recording (.jfr.gz, as Pyroscope and
// jfr-parser's test data keep them) loads through profile.Load with the
// same sample types and totals as the plain file.
func TestGzipped(t *testing.T) {
	path := jfr.ShapesRecording(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(t.TempDir(), "shapes.jfr.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	w := gzip.NewWriter(f)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	plain, zipped := load(t, path), load(t, gz)
	if zipped.Format != profile.FormatJFR || strings.Join(zipped.Containers, ",") != "gzip" {
		t.Errorf("format %s, containers %v; want jfr in gzip", zipped.Format, zipped.Containers)
	}
	a, b := typeTotals(plain), typeTotals(zipped)
	if !maps.Equal(a, b) || len(a) < 5 {
		t.Errorf("gzipped totals %v, plain %v", b, a)
	}
}

// TestWallClassified: classified by profdiff's rules, the wall-clock
// samples of the thread that sleeps are not cpu (their frames, the
// program's own, decide nothing; the fallback label makes them wait), and
// those of the thread that computes are.
func TestWallClassified(t *testing.T) {
	l := load(t, jfr.ShapesRecording(t))
	a := diff.NewAnalyzer(diff.Options{SampleIndex: "wall-samples"})
	got := map[string]map[diff.Bucket]float64{}
	a.OnSample(func(s *diff.Sample) {
		for _, id := range s.Stack {
			for _, fn := range []string{"Shapes.sleeper", "Shapes.runner"} {
				if a.MethodName(id) == fn {
					if got[fn] == nil {
						got[fn] = map[diff.Bucket]float64{}
					}
					got[fn][s.Bucket] += s.Value
				}
			}
		}
	})
	if err := a.Add(diff.Base, l); err != nil {
		t.Fatal(err)
	}
	sleeper, runner := got["Shapes.sleeper"], got["Shapes.runner"]
	if sleeper[diff.Wait] == 0 || sleeper[diff.CPU] != 0 || runner[diff.CPU] == 0 || len(runner) != 1 {
		t.Errorf("wall samples by bucket: sleeper %v, runner %v; want the sleeper's all wait, the runner's all cpu", sleeper, runner)
	}
}
