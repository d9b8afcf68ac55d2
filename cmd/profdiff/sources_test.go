package main

import (
	"context"
	"errors"
	"github.com/profdiff/profdiff/diff"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
)

// fakeCaptureDir writes a capture folder holding empty files of kinds.
func fakeCaptureDir(t *testing.T, dir string, kinds ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &capture.Manifest{Format: capture.ManifestFormat}
	for _, k := range kinds {
		name := k + ".pb.gz"
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
		m.Files = append(m.Files, capture.File{Kind: k, Path: name})
	}
	if err := capture.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestResolver(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.pb.gz", "a.pb.gz", "c.folded"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	a, b := filepath.Join(dir, "a.pb.gz"), filepath.Join(dir, "b.pb.gz")
	demo1 := fakeCaptureDir(t, filepath.Join(dir, "out", "1-demo", "baseline"), "cpu", "wall", "mutex")
	demo2 := fakeCaptureDir(t, filepath.Join(dir, "out", "2-demo", "baseline"), "cpu", "wall", "mutex")
	cpuOnly := fakeCaptureDir(t, filepath.Join(dir, "cpuonly"), "cpu", "mutex")
	os.MkdirAll(filepath.Join(dir, "plain"), 0o755)
	url := "http://127.0.0.1:6060/debug/pprof/profile?seconds=5"

	cases := []struct {
		name string
		r    resolver
		in   []sourceArgs
		want [][]string
		err  string
	}{
		{"glob, sorted", resolver{cmd: "top"}, []sourceArgs{{"", []string{filepath.Join(dir, "*.pb.gz")}}}, [][]string{{a, b}}, ""},
		{"plain paths, stdin and URLs pass", resolver{cmd: "diff"}, []sourceArgs{{"BASE", []string{"-"}}, {"NEW", []string{url, "missing.pb.gz"}}}, [][]string{{"-"}, {url, "missing.pb.gz"}}, ""},
		{"no match", resolver{cmd: "diff"}, []sourceArgs{{"--base", []string{a}}, {"--new", []string{filepath.Join(dir, "*.nothing")}}}, nil, `--new: pattern "` + filepath.Join(dir, "*.nothing") + `" matches no files`},
		{"bad pattern", resolver{cmd: "diff"}, []sourceArgs{{"--base", []string{filepath.Join(dir, "[")}}}, nil, "--base: bad pattern"},
		{"capture folders: wall when all have it", resolver{cmd: "diff"}, []sourceArgs{{"BASE", []string{demo1}}, {"NEW", []string{demo2}}},
			[][]string{{filepath.Join(demo1, "wall.pb.gz")}, {filepath.Join(demo2, "wall.pb.gz")}}, ""},
		{"capture folders: else cpu", resolver{cmd: "diff"}, []sourceArgs{{"BASE", []string{demo1}}, {"NEW", []string{cpuOnly}}},
			[][]string{{filepath.Join(demo1, "cpu.pb.gz")}, {filepath.Join(cpuOnly, "cpu.pb.gz")}}, ""},
		{"capture folders: --kind", resolver{cmd: "top", kind: "mutex"}, []sourceArgs{{"", []string{demo1, a}}},
			[][]string{{filepath.Join(demo1, "mutex.pb.gz"), a}}, ""},
		{"capture folder by a glob that matches one", resolver{cmd: "diff"}, []sourceArgs{{"BASE", []string{filepath.Join(dir, "out", "1-*", "baseline")}}, {"NEW", []string{cpuOnly}}},
			[][]string{{filepath.Join(demo1, "cpu.pb.gz")}, {filepath.Join(cpuOnly, "cpu.pb.gz")}}, ""},
		{"a glob meant as one capture folder matches two", resolver{cmd: "diff"}, []sourceArgs{{"BASE", []string{filepath.Join(dir, "out", "*-demo", "baseline")}}, {"NEW", []string{cpuOnly}}},
			nil, `BASE: pattern "` + filepath.Join(dir, "out", "*-demo", "baseline") + `" matches 2 capture folders; name one: ` + demo1 + ", " + demo2},
		{"gate: one capture folder per run", resolver{cmd: "gate", perRun: true}, []sourceArgs{{"--base", []string{filepath.Join(dir, "out", "*-demo", "baseline")}}, {"--new", []string{cpuOnly}}},
			[][]string{{filepath.Join(demo1, "cpu.pb.gz"), filepath.Join(demo2, "cpu.pb.gz")}, {filepath.Join(cpuOnly, "cpu.pb.gz")}}, ""},
		{"a capture folder lacking the kind", resolver{cmd: "diff", kind: "heap"}, []sourceArgs{{"BASE", []string{demo1}}}, nil, "has no heap profile"},
		{"a directory that is no capture folder", resolver{cmd: "diff"}, []sourceArgs{{"BASE", []string{filepath.Join(dir, "plain")}}}, nil, "plain: a directory without manifest.json, not a profdiff capture folder"},
		{"stdin twice", resolver{cmd: "gate"}, []sourceArgs{{"--base", []string{"-"}}, {"--new", []string{"-"}}}, nil, "gate: standard input (-) can be read only once"},
		{"stdin twice on one side", resolver{cmd: "top"}, []sourceArgs{{"", []string{"-", a, "-"}}}, nil, "top: standard input (-) can be read only once"},
	}
	for _, c := range cases {
		got, err := c.r.resolve(c.in...)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "" && !reflect.DeepEqual(got, c.want):
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// The README's follow-up command after two demo runs: the glob names two
// capture folders, and the command says so instead of merging them.
func TestDiffGlobOfTwoCaptureFolders(t *testing.T) {
	dir := t.TempDir()
	fakeCaptureDir(t, filepath.Join(dir, "20260101-000000-demo", "baseline"), "cpu")
	fakeCaptureDir(t, filepath.Join(dir, "20260102-000000-demo", "baseline"), "cpu")
	_, stderr, code := profdiff(t, "", "diff", "--kind", "cpu", filepath.Join(dir, "*-demo", "baseline"), net11)
	if code != 2 || !strings.Contains(stderr, "matches 2 capture folders; name one: ") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// top and gate read capture folders too.
func TestTopOfCaptureFolder(t *testing.T) {
	dir := t.TempDir()
	capDir := filepath.Join(dir, "cap")
	fakeCaptureDir(t, capDir, "cpu")
	data, err := os.ReadFile(net10)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(capDir, "cpu.pb.gz"), data, 0o644) // the format is sniffed, not named
	want, _, _ := profdiff(t, "", "top", "--format", "json", net10)
	got, stderr, code := profdiff(t, "", "top", "--format", "json", capDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ReplaceAll(got, filepath.Join(capDir, "cpu.pb.gz"), net10) != want {
		t.Errorf("top of the capture folder differs from top of its profile:\n%s\n%s", got, want)
	}
}

// tooLarge is a load error as the profile package words ErrTooLarge.
type tooLarge string

func (e tooLarge) Error() string        { return string(e) }
func (e tooLarge) Is(target error) bool { return target == profile.ErrTooLarge }

func TestLoadHint(t *testing.T) {
	bare := &profile.Error{Source: "x.pb.gz", Err: tooLarge("larger than the 1GiB limit")}
	if got := loadHint(bare).Error(); got != "x.pb.gz: larger than the 1GiB limit (raise it with --max-size)" {
		t.Errorf("hint: %q", got)
	}
	if !errors.Is(loadHint(bare), profile.ErrTooLarge) {
		t.Error("the hint hides the sentinel")
	}
	st := &diff.SampleTypeError{First: "a.pb.gz", FirstType: "cpu/nanoseconds", Source: "b.pb.gz", Type: "delay/nanoseconds", Has: "contentions/count, delay/nanoseconds"}
	if got := loadHint(st).Error(); got != "sample types differ: a.pb.gz has cpu/nanoseconds, b.pb.gz has delay/nanoseconds (pick a shared one with --sample-index; b.pb.gz has contentions/count, delay/nanoseconds)" {
		t.Errorf("sample-type hint: %q", got)
	}
	other := errors.New("x.pb.gz: empty file")
	if loadHint(other) != other {
		t.Error("hint on an error that is not ErrTooLarge")
	}
}

// Samples of the profiler's own goroutines are dropped with the library's
// warning per file, and the command says once how to keep them.
func TestKeepProfilerHint(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"a.folded", "b.folded"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("main;work 10\nruntime.goexit;github.com/felixge/fgprof.(*profiler).loop 3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var stdout, stderr strings.Builder
	if err := run(context.Background(), append([]string{"top"}, paths...), nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stderr.String(), "dropped 1 sample(s) of the profiler's own goroutines"); n != 2 {
		t.Errorf("%d drop warnings, want one per file:\n%s", n, stderr.String())
	}
	if n := strings.Count(stderr.String(), "--keep-profiler keeps"); n != 1 {
		t.Errorf("%d --keep-profiler hints, want 1:\n%s", n, stderr.String())
	}
}
