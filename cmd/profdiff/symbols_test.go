package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/producertest"
)

// jitRecording is what recordJIT leaves in a folder: perf script of one
// recording of symbolize/testdata/perfmap/jit.c printed while its perf map
// existed (named.txt) and after it was moved to maps/ (unknown.txt, whose
// JIT frames are `[unknown] (/tmp/perf-PID.map)`).
type jitRecording struct {
	dir, named, unknown, maps, mapFile string
	pid                                int
}

// recordJIT builds the test JIT with gcc, records it with `perf record
// -g`, and writes perf script of the recording with and without its perf
// map into dir. It skips when gcc or perf is missing or perf cannot
// record here.
func recordJIT(t *testing.T, dir string) jitRecording {
	t.Helper()
	for _, tool := range []string{"gcc", "perf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed: no JIT recording")
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "jit")
	src := filepath.Join(root, "symbolize", "testdata", "perfmap", "jit.c")
	if out, err := exec.Command("gcc", "-O2", "-fno-toplevel-reorder", "-fno-omit-frame-pointer", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v: %s", err, out)
	}
	data := filepath.Join(dir, "jit.data")
	cmd := exec.Command("perf", producertest.PerfRecord("perf", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, bin, "0.4")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Skipf("perf record cannot record here: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	r := jitRecording{dir: dir, named: filepath.Join(dir, "named.txt"), unknown: filepath.Join(dir, "unknown.txt"), maps: filepath.Join(dir, "maps")}
	if _, err := fmt.Sscanf(stdout.String(), "pid %d", &r.pid); err != nil {
		t.Fatalf("jit printed %q, not its pid", stdout.String())
	}
	tmpMap := fmt.Sprintf("/tmp/perf-%d.map", r.pid)
	defer os.Remove(tmpMap)
	perfScript(t, data, r.named)
	if err := os.Mkdir(r.maps, 0o755); err != nil {
		t.Fatal(err)
	}
	r.mapFile = filepath.Join(r.maps, filepath.Base(tmpMap))
	if err := os.Rename(tmpMap, r.mapFile); err != nil {
		t.Fatal(err)
	}
	perfScript(t, data, r.unknown)
	return r
}

// perfScript writes `perf script -i data` to the file out.
func perfScript(t *testing.T, data, out string) {
	t.Helper()
	text, err := exec.Command("perf", "script", "-i", data).Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	if err := os.WriteFile(out, text, 0o644); err != nil {
		t.Fatal(err)
	}
}

// One recording of the test JIT serves both tests of perf maps.
func TestSymbolsPerfMapJIT(t *testing.T) {
	r := recordJIT(t, t.TempDir())
	t.Run("top", func(t *testing.T) { testJITTop(t, r) })
	t.Run("symbolize", func(t *testing.T) { testSymbolizeCommand(t, r) })
}

// perf script names JIT frames from the map while it exists; once it is
// gone they are [unknown], and --symbols naming the map (or its folder)
// names them again: top's report is the same as for the named text.
func testJITTop(t *testing.T, r jitRecording) {
	unknown, err := os.ReadFile(r.unknown)
	if err != nil {
		t.Fatal(err)
	}
	mapDSO := fmt.Sprintf("[unknown] (/tmp/perf-%d.map)", r.pid)
	if n := bytes.Count(unknown, []byte(mapDSO)); n < 10 {
		t.Fatalf("perf script printed %d frames %s; want the JIT's samples so", n, mapDSO)
	}
	want, _, code := profdiff(t, "", "top", "--top", "5", r.named)
	if code != 0 || !strings.Contains(want, "jit_spin_A") || !strings.Contains(want, "jit_spin_B[OptimizedTier1]") {
		t.Fatalf("top of the named text (exit %d):\n%s", code, want)
	}
	// The report names the file by its name alone (the folder is every
	// source's).
	want = strings.ReplaceAll(want, filepath.Base(r.named), filepath.Base(r.unknown))
	for _, sym := range []string{r.maps, r.mapFile} {
		got, stderr, code := profdiff(t, "", "top", "--top", "5", "--symbols", sym, r.unknown)
		stderr = unwrapped(stderr)
		if code != 0 || got != want {
			t.Errorf("top --symbols %s (exit %d):\n%s\nwant (as perf named them):\n%s", sym, code, got, want)
		}
		note := fmt.Sprintf("profdiff: %s: symbols: %s served /tmp/perf-%d.map (by file name): ", filepath.Base(r.unknown), r.mapFile, r.pid)
		if strings.Count(stderr, note) != 1 || strings.Contains(stderr, "unsymbolized") {
			t.Errorf("stderr:\n%s\nwant one note %q and no warning", stderr, note)
		}
	}
	plain, stderr, _ := profdiff(t, "", "top", "--top", "5", r.unknown)
	if !strings.Contains(plain, fmt.Sprintf("[perf-%d.map]", r.pid)) || strings.Contains(stderr, "symbols") {
		t.Errorf("without --symbols the frames are not [perf-%d.map], or a note or warning was given:\n%s\n%s", r.pid, plain, stderr)
	}
	// A folder without the map: the placeholders come back, and one
	// warning says why.
	empty := t.TempDir()
	got, stderr, _ := profdiff(t, "", "top", "--top", "5", "--symbols", empty, r.unknown)
	stderr = unwrapped(stderr)
	warning := fmt.Sprintf("profdiff: warning: %s: symbols: 1 mapping unsymbolized (", filepath.Base(r.unknown))
	why := fmt.Sprintf("of samples): /tmp/perf-%d.map: no file found in --symbols (1 path)", r.pid)
	if got != plain || strings.Count(stderr, warning) != 1 || !strings.Contains(stderr, why) {
		t.Errorf("top --symbols EMPTY:\n%s\nstderr:\n%s\nwant the report without --symbols and one warning %q…%q", got, stderr, warning, why)
	}
}

// profdiff symbolize writes a gzipped pprof that go tool pprof shows with
// the map's names.
func testSymbolizeCommand(t *testing.T, r jitRecording) {
	out := filepath.Join(r.dir, "jit.pb.gz")
	stdout, stderr, code := profdiff(t, "", "symbolize", r.unknown, "--symbols", r.maps, "-o", out)
	wantLine := fmt.Sprintf("/tmp/perf-%d.map: ", r.pid)
	if code != 0 || !strings.Contains(stdout, wantLine) || !strings.Contains(stdout, "named from "+r.mapFile+" (by file name)") || !strings.Contains(stdout, "unnamed: 0.0% of samples") {
		t.Fatalf("symbolize (exit %d):\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Errorf("%s is not gzipped", out)
	}
	p, err := pprofile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range p.Function {
		names[f.Name] = true
	}
	if !names["jit_spin_A"] || !names["jit_spin_B[OptimizedTier1]"] || names[fmt.Sprintf("[perf-%d.map]", r.pid)] {
		t.Errorf("functions of the written profile: %v", names)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return
	}
	top, err := exec.Command("go", "tool", "pprof", "-top", out).CombinedOutput()
	if err != nil || !strings.Contains(string(top), "jit_spin_A") || !strings.Contains(string(top), "jit_spin_B[OptimizedTier1]") {
		t.Errorf("go tool pprof -top %s: %v\n%s", out, err, top)
	}
}

func TestSymbolsErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-binary")
	for _, args := range [][]string{
		{"top", "--symbols", missing, "x.pb.gz"},
		{"diff", "--symbols", missing, "a", "b"},
		{"gate", "--symbols", missing, "--base", "a", "--new", "b"},
		{"symbolize", "--symbols", missing, "x.pb.gz", "-o", "out.pb.gz"},
	} {
		_, stderr, code := profdiff(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "--symbols: stat "+missing+": no such file or directory") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
	// A file named on its own must name code: not text, not an ELF
	// file cut short.
	notELF := filepath.Join(t.TempDir(), "notelf.txt")
	truncated := filepath.Join(t.TempDir(), "truncated")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	head, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notELF, []byte("not a binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, head[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "--symbols", notELF, "x.pb.gz"}, "--symbols: " + notELF + ": not an ELF binary or debug file"},
		{[]string{"symbolize", "--symbols", truncated, "x.pb.gz", "-o", "o"}, "--symbols: " + truncated + ": truncated ELF file"},
		{[]string{"symbolize", "x.pb.gz"}, "-o OUT is required"},
		{[]string{"symbolize", "-o", "o", "a", "b"}, "want one profile, got 2"},
		{[]string{"top", "--output-pprof", "-", "x"}, "--output-pprof wants a file"},
	} {
		_, stderr, code := profdiff(t, "", tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant %q", tc.args, code, stderr, tc.want)
		}
	}
}

//go:noinline
func symbolsBurn(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s ^= s<<1 + i
	}
	return s
}

// An address-only CPU profile of this test binary, its main mapping
// renamed to a file that does not exist: written to dir/bare.pb.gz.
func writeAddressOnly(t *testing.T, dir string) (path, buildID string) {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("a CPU profile is already running: %v", err)
	}
	sink := 0
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		sink += symbolsBurn(1e5)
	}
	pprof.StopCPUProfile()
	p, err := pprofile.Parse(&buf)
	if err != nil || len(p.Sample) == 0 || sink == 1 {
		t.Fatalf("CPU profile: %v", err)
	}
	for _, l := range p.Location {
		l.Line = nil
	}
	p.Function = nil
	for _, m := range p.Mapping {
		m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames = false, false, false, false
	}
	p.Mapping[0].File = "/nonexistent/server"
	path = filepath.Join(dir, "bare.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	return path, p.Mapping[0].BuildID
}

// The warning about what stayed unnamed goes to stderr once, never into
// the data; --symbols naming the binary serves the mapping by build ID.
func TestSymbolsAddressOnlyPprof(t *testing.T) {
	dir := t.TempDir()
	bare, id := writeAddressOnly(t, dir)
	stdout, stderr, code := profdiff(t, "", "top", "--format", "csv", bare)
	stderr = unwrapped(stderr)
	want := "symbols: 1 mapping unsymbolized (100.0% of samples): /nonexistent/server (build ID " + id[:12] + "…): no file found in --symbols (none given)"
	if code != 0 || strings.Count(stderr, want) != 1 || strings.Contains(stdout, "symbols") {
		t.Errorf("top (exit %d): stderr:\n%s\nwant once: %s", code, stderr, want)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "named.pb.gz")
	stdout, stderr, code = profdiff(t, "", "top", "--format", "csv", "--symbols", exe, "--output-pprof", out, bare)
	stderr = unwrapped(stderr)
	if _, err := os.Stat(out); err != nil {
		t.Errorf("--output-pprof: %v", err)
	}
	served := "symbols: " + exe + " served /nonexistent/server (by build ID)"
	noSyms := exe + ": no symbol table, DWARF or Go pclntab"
	switch {
	case code != 0:
		t.Fatalf("top --symbols (exit %d): %s", code, stderr)
	case strings.Contains(stderr, noSyms):
		t.Skip("OpenObject is still the skeleton's stub: " + noSyms)
	case !strings.Contains(stderr, served) || strings.Contains(stderr, "unsymbolized"):
		t.Errorf("top --symbols: stderr:\n%s\nwant %q and no warning", stderr, served)
	case !strings.Contains(stdout, "symbolsBurn"):
		t.Errorf("top --symbols: no symbolsBurn in\n%s", stdout)
	}
	// symbolize -o - writes the profile alone to stdout, its report to
	// stderr.
	stdout, stderr, code = profdiff(t, "", "symbolize", "--symbols", exe, bare, "-o", "-")
	if code != 0 {
		t.Fatalf("symbolize -o - (exit %d): %s", code, stderr)
	}
	if p, err := pprofile.ParseData([]byte(stdout)); err != nil || len(p.Sample) == 0 || !strings.Contains(stderr, "addresses named from "+exe) {
		t.Errorf("symbolize -o -: %v; stderr:\n%s", err, stderr)
	}
}
