package profile

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
)

// TestRegistrySniffsOwnFixture checks that every registered format is
// sniffed on a real file of its own by its own reader (and by no reader
// tried before it), and loads as that format.
func TestRegistrySniffsOwnFixture(t *testing.T) {
	dir := corpus.Need(t)
	fixtures := map[Format]string{
		FormatGoTrace:     "golang-go/src__internal__trace__testdata__tests__go122-annotations-stress.test.bin.trace",
		FormatNettrace:    "perfview/src__TraceEvent__TraceEvent.Tests__inputs__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip",
		FormatJFR:         "speedscope/sample__profiles__java-flight-recorder__heavy.jfr",
		FormatSpeedscope:  "speedscope/sample__profiles__speedscope__0.0.1__simple-no-pretty-print.speedscope.json",
		FormatPerfScript:  "speedscope/sample__profiles__linux-perf__forks.linux-perf.txt",
		FormatChromeTrace: "speedscope/sample__profiles__Chrome__69__simple.json",
		FormatV8:          "speedscope/sample__profiles__Chrome__65__sucrase.cpuprofile",
		FormatCallgrind:   "speedscope/sample__profiles__callgrind__callgrind.name-compression.log",
		FormatStackprof:   "speedscope/sample__profiles__stackprof__simple-cpu-stackprof.json",
		FormatGecko:       "speedscope/sample__profiles__Firefox__59__simple-firefox.json",
	}
	// Formats the corpus has no file of: recorded by their producer at
	// test time, or their committed recordings.
	recorded := map[Format]func(t *testing.T) string{FormatPstats: recordPstats}
	own := map[Format]string{
		FormatOTLP: "otlp/testdata/cpu-base.otlp.pb",
	}
	for _, r := range registry {
		name, ok := fixtures[r.format]
		if o, mine := own[r.format]; mine {
			name, ok = o, true
		}
		if !ok && recorded[r.format] == nil {
			t.Errorf("registered format %s has no fixture in this test", r.format)
			continue
		}
		t.Run(string(r.format), func(t *testing.T) {
			path := filepath.Join(dir, name)
			if _, mine := own[r.format]; mine {
				path = name
			} else if !ok {
				path = recorded[r.format](t)
			}
			l, err := Load(t.Context(), path, Options{KeepProfiler: true})
			if err != nil {
				t.Fatal(err)
			}
			if l.Format != r.format {
				t.Errorf("loaded as %s, want %s", l.Format, r.format)
			}
			if r.kind != "" && l.Kind != r.kind {
				t.Errorf("kind %s, want the format's %s", l.Kind, r.kind)
			}
		})
	}
}

// recordPstats records a small Python program with python3 -m cProfile,
// or skips.
func recordPstats(t *testing.T) string { return recordPython(t, "cProfile") }

// recordPython records a small Python program with python3 -m MODULE -o
// (cProfile or profile), or skips.
func recordPython(t *testing.T, module string) string {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	dir := t.TempDir()
	out, script := filepath.Join(dir, "out.prof"), filepath.Join(dir, "p.py")
	if err := os.WriteFile(script, []byte("sum(i * i for i in range(10000))\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(py, "-m", module, "-o", out, script).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m %s: %v\n%s", module, err, b)
	}
	return out
}

// TestRegistrySniffOrder checks the first reader that claims each input.
func TestRegistrySniffOrder(t *testing.T) {
	speedscopeJSON := []byte(`{"$schema": "https://www.speedscope.app/file-format-schema.json", "profiles": []}`)
	perfText := "java 12345/12346 [003] 2034.423940: 1 cycles:\n\t7f0c1 main (/bin/app)\n"
	for _, tc := range []struct {
		name string
		in   input
		text bool
		want Format // "" for no reader
	}{
		{"go trace header", input{data: []byte("go 1.22 trace\x00\x00\x00\x00rest")}, false, FormatGoTrace},
		{"nettrace magic", input{data: []byte("Nettrace\x14\x00\x00\x00!FastSerialization.1")}, false, FormatNettrace},
		{"JFR magic", input{data: []byte("FLR\x00\x00\x02\x00\x01")}, false, FormatJFR},
		{"pprof is not sniffed", input{data: encodeT(t, testCPUProfile(), false)}, false, ""},
		{"OTLP protobuf", input{data: readT(t, "otlp/testdata/cpu-base.otlp.pb")}, false, FormatOTLP},
		{"OTLP JSON", input{data: readT(t, "otlp/testdata/cpu-base.otlp.json")}, false, FormatOTLP},
		{"a Go heap profile is not OTLP", input{data: encodeT(t, parsePprofT(t, "otlp/testdata/heap.pb.gz"), false)}, false, ""},
		{"speedscope", input{text: string(speedscopeJSON)}, true, FormatSpeedscope},
		{"V8 .cpuprofile", input{text: `{"nodes": [], "samples": [], "timeDeltas": []}`}, true, FormatV8},
		{"V8 heap profile is not a CPU profile", input{text: `{"head": {"callFrame": {}}, "samples": []}`}, true, ""},
		{"perf script", input{text: perfText}, true, FormatPerfScript},
		{"Chrome trace array", input{text: `[{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]`}, true, FormatChromeTrace},
		{"Chrome trace object", input{text: `{"traceEvents": []}`}, true, FormatChromeTrace},
		{"a JSON array without ph", input{text: `[{"name": "a"}]`}, true, ""},
		{"callgrind", input{text: "# callgrind format\nevents: Ir\nfn=main\n1 2\n"}, true, FormatCallgrind},
		{"callgrind without its comment", input{text: "version: 1\ncreator: xdebug\nevents: Time_(10ns)\n\nfn=main\n1 2\n"}, true, FormatCallgrind},
		{"folded is the last resort", input{text: "a;b 1\n"}, true, ""},
	} {
		r := sniff(&tc.in, tc.text)
		var got Format
		if r != nil {
			got = r.format
		}
		if got != tc.want {
			t.Errorf("%s: sniffed as %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFormatsListsEveryFormatOnce(t *testing.T) {
	want := []Format{FormatGoTrace, FormatNettrace, FormatJFR, FormatPstats, FormatOTLP, FormatPprof, FormatPprofLegacy, FormatSpeedscope, FormatChromeTrace, FormatV8, FormatCallgrind, FormatStackprof, FormatGecko, FormatPerfScript, FormatFolded}
	got := Formats()
	if len(got) != len(want) {
		t.Fatalf("Formats() = %v, want %v", got, want)
	}
	for i, f := range got {
		if f.Format != want[i] || f.Description == "" {
			t.Errorf("Formats()[%d] = %+v, want format %s with a description", i, f, want[i])
		}
	}
}

// TestContainersInFrontOfAnyFormat checks gzip and zip layers in front of
// a text format, recorded outermost first.
func TestContainersInFrontOfAnyFormat(t *testing.T) {
	folded := []byte("main;work 3\nmain;idle 1\n")
	zipped := zipT(t, map[string]string{"stacks.txt": string(gzipT(t, folded))})
	l, err := Parse("x", gzipT(t, zipped), 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != FormatFolded || strings.Join(l.Containers, ",") != "gzip,zip,gzip" {
		t.Errorf("format %s, containers %v; want folded in gzip,zip,gzip", l.Format, l.Containers)
	}
}

var sentinels = []error{ErrUnrecognized, ErrUnsupported, ErrCorrupt, ErrEmpty, ErrTooLarge}

// TestSentinels checks that real bad inputs fail with exactly the one
// sentinel that says what kind of failure it is.
func TestSentinels(t *testing.T) {
	pb := encodeT(t, testCPUProfile(), false)
	gz := gzipT(t, pb)
	speedscopeHead := `{"$schema": "https://www.speedscope.app/file-format-schema.json", `
	for _, tc := range []struct {
		name    string
		data    []byte
		maxSize int64
		want    error
	}{
		{"empty file", []byte(" \n"), 0, ErrEmpty},
		{"empty gzip stream", gzipT(t, []byte("\n")), 0, ErrEmpty},
		{"folded counts all zero", []byte("a;b 0\nc 0\n"), 0, ErrEmpty},
		{"speedscope without profiles", []byte(speedscopeHead + `"shared": {"frames": []}, "profiles": []}`), 0, ErrEmpty},
		{"perf script without headers", []byte("# perf script\n# comment\n"), 0, ErrUnrecognized},
		{"gzip bomb", gzipT(t, make([]byte, 1<<20)), 64 << 10, ErrTooLarge},
		{"zip member too large", zipT(t, map[string]string{"big": string(make([]byte, 1<<20))}), 64 << 10, ErrTooLarge},
		{"truncated gzip", gz[:len(gz)/2], 0, ErrCorrupt},
		{"truncated protobuf", pb[:len(pb)*2/3], 0, ErrCorrupt},
		{"malformed speedscope", []byte(speedscopeHead + `"shared": {"frames": [{"name": 7}]}, "profiles": [{}]}`), 0, ErrCorrupt},
		{"corrupt go trace", []byte("go 1.22 trace\x00\x00\x00\xff\xff\xff\xff"), 0, ErrCorrupt},
		{"malformed legacy pprof", []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n99999999999999999999: 2 [3: 4] @ 0x1\n"), 0, ErrCorrupt},
		{"truncated JFR recording", []byte("FLR\x00\x00\x02\x00\x01junk"), 0, ErrCorrupt},
		{"V8 heap snapshot", []byte(`{"snapshot": {"meta": {}}, "nodes": [], "edges": []}`), 0, ErrUnsupported},
		{"Chrome trace whose events take no time", []byte(`{"traceEvents": [{"ph": "X", "name": "a"}]}`), 0, ErrEmpty},
		{"zip of two files", zipT(t, map[string]string{"a": string(pb), "b": string(pb)}), 0, ErrUnsupported},
		{"nettrace V6", []byte("Nettrace\x00\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00"), 0, ErrUnsupported},
		{"binary garbage", []byte("\xc8\x01\x02\x03\x04 not a profile"), 0, ErrUnrecognized},
		{"prose", []byte("Hello, this is a letter.\nIt has no counts.\n"), 0, ErrUnrecognized},
	} {
		_, err := Parse("x", tc.data, tc.maxSize)
		if err == nil {
			t.Errorf("%s: loaded", tc.name)
			continue
		}
		var matched []error
		for _, s := range sentinels {
			if errors.Is(err, s) {
				matched = append(matched, s)
			}
		}
		if len(matched) != 1 || matched[0] != tc.want {
			t.Errorf("%s: error %q matches %v, want only %v", tc.name, err, matched, tc.want)
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("%s: library error %q names a flag", tc.name, err)
		}
	}
}

// TestSourceTooLarge checks the size limit on reading the source itself.
func TestSourceTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(path, bytes.Repeat([]byte("a;b 1\n"), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(t.Context(), path, Options{MaxSize: 1024})
	checkError(t, err, path, "larger than the 1KiB limit")
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("error %q is not ErrTooLarge", err)
	}
}

// TestKindDetectionImportsNoFormatPackage keeps kind detection on the label
// contract: what it knows of a format comes from profile's own packages
// (internal ones, and profile/kind, the kinds' names).
func TestKindDetectionImportsNoFormatPackage(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "kind.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if strings.HasPrefix(path, "github.com/profdiff/profdiff/profile/") && !strings.HasPrefix(path, "github.com/profdiff/profdiff/profile/internal/") && path != "github.com/profdiff/profdiff/profile/kind" {
			t.Errorf("kind.go imports the format package %s", path)
		}
	}
}

// TestFormatsDescribed checks every format Formats lists says how it is
// recorded, which kinds it has (valid Kind values) and what it cannot
// tell, and that the formats whose readers are still to be registered
// (V8 .cpuprofile, Chrome trace events) are described already.
func TestFormatsDescribed(t *testing.T) {
	valid := map[Kind]bool{}
	for _, k := range Kinds {
		valid[k] = true
	}
	check := func(f Format, record []string, kinds []Kind, blind string) {
		if len(record) == 0 || len(kinds) == 0 || blind == "" {
			t.Errorf("%s: record %q, kinds %q, cannot tell %q: want all three", f, record, kinds, blind)
		}
		for _, k := range kinds {
			if !valid[k] {
				t.Errorf("%s: kind %q is none of %q", f, k, Kinds)
			}
		}
	}
	msg := unsupported("x").Error()
	for _, f := range Formats() {
		check(f.Format, f.Record, f.Kinds, f.Blind)
		// The error for a format profdiff does not read lists this one.
		if noun := formatDocs[f.Format].noun; noun == "" || !strings.Contains(msg, " "+noun) {
			t.Errorf("%s: name %q missing from %q", f.Format, noun, msg)
		}
	}
	for _, f := range []Format{"v8-cpuprofile", "chrome-trace"} {
		d, ok := formatDocs[f]
		if !ok || d.noun == "" {
			t.Errorf("%s: no description", f)
		}
		check(f, d.record, d.kinds, d.blind)
	}
}

// TestPstatsOfProfileModuleUnsupported: a file of the pure-Python profile
// module (python3 -m profile), which writes a code object into a key, is
// refused as unsupported, saying to record with cProfile.
func TestPstatsOfProfileModuleUnsupported(t *testing.T) {
	_, err := Load(t.Context(), recordPython(t, "profile"), Options{})
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "python3 -m cProfile") {
		t.Errorf("error %v, want ErrUnsupported naming cProfile", err)
	}
}

// parsePprofT parses a committed pprof file.
func parsePprofT(t testing.TB, path string) *pprofile.Profile {
	t.Helper()
	p, err := pprofile.ParseData(readT(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readT returns the content of a committed file.
func readT(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
