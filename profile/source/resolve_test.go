package source

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/capture"
)

// captureDir writes a capture folder holding files of kinds (their
// content data) and a manifest recording goVersion.
func captureDir(t *testing.T, dir, goVersion string, data []byte, kinds ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &capture.Manifest{Format: capture.ManifestFormat, GoVersion: goVersion}
	for _, k := range kinds {
		name := k + ".pb.gz"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, capture.File{Kind: k, Path: name})
	}
	if err := capture.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.pb.gz", "a.pb.gz", "c.folded"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	a, b := filepath.Join(dir, "a.pb.gz"), filepath.Join(dir, "b.pb.gz")
	// Files named like patterns, and files those patterns match.
	odd := filepath.Join(dir, "odd")
	os.MkdirAll(odd, 0o755)
	for _, n := range []string{"a[1].pb.gz", "a1.pb.gz", "b*.folded", "bx.folded"} {
		os.WriteFile(filepath.Join(odd, n), nil, 0o644)
	}
	bracket, star := filepath.Join(odd, "a[1].pb.gz"), filepath.Join(odd, "b*.folded")
	a1, bx := filepath.Join(odd, "a1.pb.gz"), filepath.Join(odd, "bx.folded")
	demo1 := captureDir(t, filepath.Join(dir, "out", "1-demo", "baseline"), "", nil, "cpu", "wall", "mutex")
	demo2 := captureDir(t, filepath.Join(dir, "out", "2-demo", "baseline"), "", nil, "cpu", "wall", "mutex")
	cpuOnly := captureDir(t, filepath.Join(dir, "cpuonly"), "", nil, "cpu", "mutex")
	os.MkdirAll(filepath.Join(dir, "plain"), 0o755)
	url := "http://127.0.0.1:6060/debug/pprof/profile?seconds=5"

	cases := []struct {
		name string
		opts Options
		in   []Side
		want [][]string
		err  string
		is   error // the sentinel the error wraps, if any
	}{
		{"glob, sorted", Options{}, []Side{{"", []string{filepath.Join(dir, "*.pb.gz")}}}, [][]string{{a, b}}, "", nil},
		{"a file named like a pattern is itself", Options{}, []Side{{"BASE", []string{bracket}}, {"NEW", []string{star}}}, [][]string{{bracket}, {star}}, "", nil},
		{"a pattern that names no file still globs", Options{}, []Side{{"", []string{filepath.Join(odd, "a[0-9].pb.gz"), filepath.Join(odd, "b[x].folded")}}},
			[][]string{{a1, bx}}, "", nil},
		{"plain paths, stdin and URLs pass", Options{}, []Side{{"BASE", []string{"-"}}, {"NEW", []string{url, "missing.pb.gz"}}}, [][]string{{"-"}, {url, "missing.pb.gz"}}, "", nil},
		{"no match", Options{}, []Side{{"--base", []string{a}}, {"--new", []string{filepath.Join(dir, "*.nothing")}}}, nil, `--new: pattern "` + filepath.Join(dir, "*.nothing") + `" matches no files`, ErrNoMatch},
		{"bad pattern", Options{}, []Side{{"--base", []string{filepath.Join(dir, "[")}}}, nil, "--base: bad pattern", ErrBadPattern},
		{"capture folders: wall when all have it", Options{}, []Side{{"BASE", []string{demo1}}, {"NEW", []string{demo2}}},
			[][]string{{filepath.Join(demo1, "wall.pb.gz")}, {filepath.Join(demo2, "wall.pb.gz")}}, "", nil},
		{"capture folders: else cpu", Options{}, []Side{{"BASE", []string{demo1}}, {"NEW", []string{cpuOnly}}},
			[][]string{{filepath.Join(demo1, "cpu.pb.gz")}, {filepath.Join(cpuOnly, "cpu.pb.gz")}}, "", nil},
		{"capture folders: the kind asked", Options{Kind: "mutex"}, []Side{{"", []string{demo1, a}}},
			[][]string{{filepath.Join(demo1, "mutex.pb.gz"), a}}, "", nil},
		{"capture folder by a glob that matches one", Options{}, []Side{{"BASE", []string{filepath.Join(dir, "out", "1-*", "baseline")}}, {"NEW", []string{cpuOnly}}},
			[][]string{{filepath.Join(demo1, "cpu.pb.gz")}, {filepath.Join(cpuOnly, "cpu.pb.gz")}}, "", nil},
		{"a glob meant as one capture folder matches two", Options{}, []Side{{"BASE", []string{filepath.Join(dir, "out", "*-demo", "baseline")}}, {"NEW", []string{cpuOnly}}},
			nil, `BASE: pattern "` + filepath.Join(dir, "out", "*-demo", "baseline") + `" matches 2 capture folders; name one: ` + demo1 + ", " + demo2, ErrAmbiguous},
		{"one capture folder per run", Options{PerRun: true}, []Side{{"--base", []string{filepath.Join(dir, "out", "*-demo", "baseline")}}, {"--new", []string{cpuOnly}}},
			[][]string{{filepath.Join(demo1, "cpu.pb.gz"), filepath.Join(demo2, "cpu.pb.gz")}, {filepath.Join(cpuOnly, "cpu.pb.gz")}}, "", nil},
		{"a capture folder lacking the kind", Options{Kind: "heap"}, []Side{{"BASE", []string{demo1}}}, nil, "has no heap profile", nil},
		{"a directory that is no capture folder", Options{}, []Side{{"BASE", []string{filepath.Join(dir, "plain")}}}, nil, "plain: a directory without manifest.json, not a profdiff capture folder", nil},
		{"stdin twice", Options{}, []Side{{"--base", []string{"-"}}, {"--new", []string{"-"}}}, nil, "standard input (-) can be read only once", ErrStdinTwice},
		{"loopback URLs pass", Options{}, []Side{{"BASE", []string{"http://localhost:6060/debug/pprof/heap"}}, {"NEW", []string{"https://[::1]:6060/debug/pprof/heap"}}},
			[][]string{{"http://localhost:6060/debug/pprof/heap"}, {"https://[::1]:6060/debug/pprof/heap"}}, "", nil},
		{"a remote URL is refused", Options{}, []Side{{"", []string{"http://10.1.2.3:6060/debug/pprof/heap"}}}, nil,
			"http://10.1.2.3:6060/debug/pprof/heap: 10.1.2.3 is not a loopback address (127.0.0.0/8, ::1, localhost)", ErrRemote},
		{"a remote URL by name is refused", Options{}, []Side{{"--base", []string{"http://prod.example:6060/debug/pprof/heap"}}}, nil,
			"--base: http://prod.example:6060/debug/pprof/heap: prod.example is not a loopback address", ErrRemote},
		{"a remote URL with AllowRemote", Options{AllowRemote: true}, []Side{{"BASE", []string{"http://10.1.2.3:6060/debug/pprof/heap"}}},
			[][]string{{"http://10.1.2.3:6060/debug/pprof/heap"}}, "", nil},
		{"another scheme", Options{}, []Side{{"BASE", []string{"ftp://127.0.0.1/cpu.pb.gz"}}}, nil,
			"BASE: ftp://127.0.0.1/cpu.pb.gz: profdiff reads http:// and https:// URLs, not ftp://", ErrBadSource},
		{"stdin twice on one side", Options{}, []Side{{"", []string{"-", a, "-"}}}, nil, "standard input (-) can be read only once", ErrStdinTwice},
		{"a remote fleet server is refused", Options{}, []Side{{"NEW", []string{"pyroscope+http://192.0.2.1:4040?type=a:b:c:d:e"}}}, nil,
			"NEW: pyroscope: 192.0.2.1 is not a loopback address (127.0.0.0/8, ::1, localhost)", ErrRemote},
		{"a bad fleet source", Options{}, []Side{{"NEW", []string{"pyroscope+http://127.0.0.1:4040?type=cpu"}}}, nil,
			"NEW: pyroscope source: type=cpu: a profile type ID has 5 parts", ErrBadSource},
	}
	for _, c := range cases {
		got, err := resolve(c.in, c.opts)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		case c.is != nil && !errors.Is(err, c.is):
			t.Errorf("%s: error %v does not wrap %v", c.name, err, c.is)
		case c.is != nil && !errors.As(err, new(*ArgError)):
			t.Errorf("%s: error %v is no *ArgError", c.name, err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "" && !reflect.DeepEqual(got, c.want):
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// A fleet source splits into its windows, each read against one clock,
// and a Pyroscope query makes every profile drop Go type arguments.
func TestResolveFleet(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	src := "pyroscope+http://127.0.0.1:4040?type=a:b:c:d:e&from=now-2h&to=now&windows=2"
	got, err := resolve([]Side{{"", []string{src}}}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0]) != 2 || !strings.Contains(got[0][0], "from=2026-12-01T08:00:00Z") || !strings.Contains(got[0][1], "to=2026-12-01T10:00:00Z") {
		t.Errorf("windows: %q", got)
	}
	if !pyroscopeSource(got) || pyroscopeSource([][]string{{"a.pb.gz"}, {"parca+http://127.0.0.1:7070?query=x"}}) {
		t.Error("pyroscopeSource")
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "::1": true, "localhost": true, "LocalHost": true,
		"10.0.0.1": false, "example.com": false, "0.0.0.0": false, "": false, "::": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v", host, got)
		}
	}
}
