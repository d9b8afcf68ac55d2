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
	"github.com/profdiff/profdiff/profile/source"
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

// The library's argument errors reach the user as usage errors, with the
// command's name where the library has none and the flag that allows a
// remote host.
func TestArgHints(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gate", "--base", "-", "--new", "-"}, "profdiff: gate: standard input (-) can be read only once\n"},
		{[]string{"top", "-", "-"}, "profdiff: top: standard input (-) can be read only once\n"},
		{[]string{"top", "http://10.1.2.3:6060/debug/pprof/heap"},
			"profdiff: http://10.1.2.3:6060/debug/pprof/heap: 10.1.2.3 is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to read profiles from a remote host\n"},
		{[]string{"diff", net10, "pyroscope+http://192.0.2.1:4040?type=a:b:c:d:e"},
			"profdiff: NEW: pyroscope: 192.0.2.1 is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to query a remote server\n"},
		{[]string{"diff", "--new", net10, "--base", "nothing*.pb.gz"}, `profdiff: --base: pattern "nothing*.pb.gz" matches no files` + "\n"},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.HasPrefix(stderr, c.want) || !strings.Contains(stderr, "Run 'profdiff "+c.args[0]+" --help' for usage.") {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 and %q, then the usage line", strings.Join(c.args, " "), code, stderr, c.want)
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
	if n := strings.Count(stderr.String(), "dropped"); n != 1 || !strings.Contains(unwrapped(stderr.String()), want) {
		t.Errorf("want one drop warning %q:\n%s", want, stderr.String())
	}
	// One profile: its name and count.
	stderr.Reset()
	if err := run(context.Background(), []string{"top", paths[0]}, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	// Named as the report names it: its file name, the folder left out.
	if want := "warning: a.folded: dropped 1 sample(s) of the profiler's own goroutines; --keep-profiler keeps them"; !strings.Contains(unwrapped(stderr.String()), want) {
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
	stderr = unwrapped(stderr)
	drop := regexp.MustCompile(`(?m)^profdiff: warning: dropped the profiler's own samples in 10 profiles \(([0-9,]+) samples\); --keep-profiler keeps them$`)
	if n := strings.Count(stderr, "dropped"); n != 1 || !drop.MatchString(stderr) {
		t.Errorf("want one drop line for 10 profiles:\n%s", stderr)
	}
	gz := "profdiff: warning: named .gz but not gzip-compressed; read as is (10 profiles: base0.pb.gz, "
	if n := strings.Count(stderr, "named .gz"); n != 1 || !strings.Contains(stderr, gz) {
		t.Errorf("want one .gz line for 10 profiles, %q...:\n%s", gz, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.Count(stderr, line+"\n") > 1 {
			t.Errorf("line printed more than once: %q", line)
		}
	}
}

// The drops of the profiler's samples are one line, with how to keep
// them, after the library's distinct warnings.
func TestWarningLines(t *testing.T) {
	w := source.Warnings{Lines: []string{"no period (3 profiles: a.pb.gz, b.pb.gz)"}, Dropped: 1234, DroppedIn: []string{"a.pb.gz", "b.pb.gz"}}
	want := []string{
		"no period (3 profiles: a.pb.gz, b.pb.gz)",
		"dropped the profiler's own samples in 2 profiles (1,234 samples); --keep-profiler keeps them",
	}
	if got := warningLines(w); !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n%q\nwant\n%q", got, want)
	}
	w = source.Warnings{Dropped: 3, DroppedIn: []string{"a.pb.gz"}}
	if got, want := warningLines(w), []string{"a.pb.gz: dropped 3 sample(s) of the profiler's own goroutines; --keep-profiler keeps them"}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines: %q, want %q", got, want)
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

// A profile whose file name has glob characters is read as itself, even
// where the pattern its name spells matches other files; a pattern that
// names no file still expands.
func TestLiteralNamesFirst(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a[1].pb.gz", cannedProfile(t, "cpu", map[string]int64{"main.literal;main.main": 5}))
	write("a1.pb.gz", cannedProfile(t, "cpu", map[string]int64{"main.globbed;main.main": 5}))
	write("b*.folded", []byte("main.main;main.literal 5\n"))
	write("bx.folded", []byte("main.main;main.globbed 5\n"))
	for _, c := range []struct{ arg, want, not string }{
		{"a[1].pb.gz", "main.literal", "main.globbed"},
		{"b*.folded", "main.literal", "main.globbed"},
		{"a[0-9].pb.gz", "main.globbed", "main.literal"},
		{"b[x].folded", "main.globbed", "main.literal"},
	} {
		var out, stderr bytes.Buffer
		if err := run(context.Background(), []string{"top", "--format", "csv", filepath.Join(dir, c.arg)}, nil, &out, &stderr); err != nil {
			t.Errorf("top %s: %v\n%s", c.arg, err, stderr.String())
			continue
		}
		if !strings.Contains(out.String(), c.want) || strings.Contains(out.String(), c.not) {
			t.Errorf("top %s: want %s and not %s in\n%s", c.arg, c.want, c.not, out.String())
		}
	}
}
