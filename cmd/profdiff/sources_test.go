package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
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
		{"loopback URLs pass", resolver{cmd: "diff"}, []sourceArgs{{"BASE", []string{"http://localhost:6060/debug/pprof/heap"}}, {"NEW", []string{"https://[::1]:6060/debug/pprof/heap"}}},
			[][]string{{"http://localhost:6060/debug/pprof/heap"}, {"https://[::1]:6060/debug/pprof/heap"}}, ""},
		{"a remote URL is refused", resolver{cmd: "top"}, []sourceArgs{{"", []string{"http://10.1.2.3:6060/debug/pprof/heap"}}}, nil,
			"http://10.1.2.3:6060/debug/pprof/heap: 10.1.2.3 is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to read profiles from a remote host"},
		{"a remote URL by name is refused", resolver{cmd: "gate"}, []sourceArgs{{"--base", []string{"http://prod.example:6060/debug/pprof/heap"}}}, nil,
			"--base: http://prod.example:6060/debug/pprof/heap: prod.example is not a loopback address"},
		{"a remote URL with allowRemote", resolver{cmd: "diff", allowRemote: true}, []sourceArgs{{"BASE", []string{"http://10.1.2.3:6060/debug/pprof/heap"}}},
			[][]string{{"http://10.1.2.3:6060/debug/pprof/heap"}}, ""},
		{"another scheme", resolver{cmd: "diff"}, []sourceArgs{{"BASE", []string{"ftp://127.0.0.1/cpu.pb.gz"}}}, nil,
			"ftp://127.0.0.1/cpu.pb.gz: profdiff reads http:// and https:// URLs, not ftp://"},
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

// Samples of the profiler's own goroutines dropped in several profiles are
// said in one line, with the total and how to keep them.
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
	want := "profdiff: warning: dropped the profiler's own samples in 2 profiles (2 samples); --keep-profiler keeps them\n"
	if n := strings.Count(stderr.String(), "dropped"); n != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("want one drop warning %q:\n%s", want, stderr.String())
	}
	// One profile: its name and count.
	stderr.Reset()
	if err := run(context.Background(), []string{"top", paths[0]}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := paths[0] + ": dropped 1 sample(s) of the profiler's own goroutines; --keep-profiler keeps them"; !strings.Contains(stderr.String(), want) {
		t.Errorf("want %q:\n%s", want, stderr.String())
	}
}

// captureGoroutines writes a real goroutine profile of this process, as
// runtime/pprof writes it, gunzipped when plain (only the container
// removed). The goroutine writing it is in it, running runtime/pprof's
// writer, which profdiff drops as the profiler's own.
func captureGoroutines(t *testing.T, path string, plain bool) {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if plain {
		zr, err := gzip.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A 5-vs-5 diff of real goroutine profiles prints each load warning once: the
// drops of all ten profiles in one line, and a warning every profile has
// (a .gz name on plain pprof) once with the number of profiles.
func TestLoadWarningsOnce(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		captureGoroutines(t, filepath.Join(dir, fmt.Sprintf("base%d.pb.gz", i)), true)
		captureGoroutines(t, filepath.Join(dir, fmt.Sprintf("new%d.pb.gz", i)), true)
	}
	_, stderr, code := profdiff(t, "", "diff", "--format", "json", "--base", filepath.Join(dir, "base*.pb.gz"), "--new", filepath.Join(dir, "new*.pb.gz"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	drop := regexp.MustCompile(`(?m)^profdiff: warning: dropped the profiler's own samples in 10 profiles \(([0-9,]+) samples\); --keep-profiler keeps them$`)
	if n := strings.Count(stderr, "dropped"); n != 1 || !drop.MatchString(stderr) {
		t.Errorf("want one drop line for 10 profiles:\n%s", stderr)
	}
	gz := "profdiff: warning: named .gz but not gzip-compressed; read as is (10 profiles: " + filepath.Join(dir, "base0.pb.gz") + ", "
	if n := strings.Count(stderr, "named .gz"); n != 1 || !strings.Contains(stderr, gz) {
		t.Errorf("want one .gz line for 10 profiles, %q...:\n%s", gz, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.Count(stderr, line+"\n") > 1 {
			t.Errorf("line printed more than once: %q", line)
		}
	}
}

func TestLoadWarningsLines(t *testing.T) {
	var lw loadWarnings
	for _, l := range []*profile.Loaded{
		{Source: "a.pb.gz", Warnings: []string{"a.pb.gz: no period", "unprefixed"}, Dropped: 1000},
		{Source: "b.pb.gz", Warnings: []string{"b.pb.gz: no period", "b.pb.gz: odd", "unprefixed"}},
		{Source: "a.pb.gz", Warnings: []string{"a.pb.gz: no period"}, Dropped: 234},
	} {
		lw.add(l)
	}
	want := []string{
		"no period (3 profiles: a.pb.gz, b.pb.gz)",
		"unprefixed (2 profiles)",
		"b.pb.gz: odd",
		"dropped the profiler's own samples in 2 profiles (1,234 samples); --keep-profiler keeps them",
	}
	if got := lw.lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n%q\nwant\n%q", got, want)
	}
}

func TestWarnDedupes(t *testing.T) {
	var b strings.Builder
	warn(&b, "a", "b", "a", "c", "b")
	if got := b.String(); got != "profdiff: warning: a\nprofdiff: warning: b\nprofdiff: warning: c\n" {
		t.Errorf("warn: %q", got)
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := warnCount(n); got != want {
			t.Errorf("warnCount(%d) = %q, want %q", n, got, want)
		}
	}
}
