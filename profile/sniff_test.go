package profile

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/readertest"
)

const perfScript = `# ========
# captured on: Wed Aug 15 16:01:24 2018
# ========
#
java 12345/12346 [003] 2034.423940:     10101010 cpu-clock:
	ffffffff8105e3a4 native_write_msr_safe ([kernel.kallsyms])
	    7f0e1a2b3c4d Interpreter (/usr/lib/jvm/libjvm.so)
	          401000 main (/usr/bin/java)

java 12345/12346 [003] 2034.433940:     10101010 cpu-clock:
	ffffffff8105e3a4 native_write_msr_safe ([kernel.kallsyms])
	          401000 main (/usr/bin/java)
`

// zipT builds a zip archive of the given files (sorted by name).
func zipT(t *testing.T, files map[string]string) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[n]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The formats read by packages speedscope and perfscript are detected by
// content (a BOM, gzip), get their format and kind, and their broken files
// fail with an error that names the format.
func TestParseForeignFormats(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		format     Format
		containers string
		kind       Kind
		samples    int
	}{
		{"perf.txt", perfScript, "perf-script", "", KindCPU, 2},
		{"perf-bom.txt", "\uFEFF" + perfScript, "perf-script", "", KindCPU, 2},
		{"perf-nostack.txt", "fio 236193/236193 [021] 1.791544:          1    block:block_rq_issue: 259,76 R 4096 () 57622160 + 8 [fio]\n", "perf-script", "", KindUnknown, 1},
		{"perf-addrs.txt", "java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\nffffffff810275f1 intel_pmu_enable_all ([kernel.kallsyms])\n", "perf-script", "", KindCPU, 1},
		{"folded.zip", string(zipT(t, map[string]string{"__MACOSX/._a.folded": "junk", "dir/a.folded": "main;f 3\nmain;g 1\n"})), "folded", "zip", KindUnknown, 2},
		{"s.speedscope.json", `{"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": [{"name": "main"}, {"name": "work"}]},
			"profiles": [{"type": "sampled", "name": "Thread (1)", "unit": "milliseconds", "startValue": 0, "endValue": 3, "samples": [[0, 1], [0]], "weights": [2, 1]}]}`, "speedscope", "", KindWall, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, data := range [][]byte{[]byte(tc.data), gzipT(t, []byte(tc.data))} {
				l, err := Parse(tc.name, data, 0)
				if err != nil {
					t.Fatal(err)
				}
				if l.Format != tc.format || l.Kind != tc.kind || len(l.Profile.Sample) != tc.samples {
					t.Errorf("loaded as %s, kind %s, %d samples; want %s, %s, %d", l.Format, l.Kind, len(l.Profile.Sample), tc.format, tc.kind, tc.samples)
				}
				want := tc.containers
				if data[0] == 0x1f {
					want = strings.TrimPrefix(want+",gzip", ",")
					if tc.containers != "" {
						want = "gzip," + tc.containers
					}
				}
				if got := strings.Join(l.Containers, ","); got != want {
					t.Errorf("containers %q, want %q", got, want)
				}
			}
		})
	}
	for _, tc := range []struct{ name, data, want string }{
		{"empty.speedscope.json", `{"$schema": "https://www.speedscope.app/file-format-schema.json", "profiles": [], "shared": {"frames": []}}`, "speedscope JSON: no profiles"},
		{"bad-frame.speedscope.json", `{"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": [{"name": "a"}]},
			"profiles": [{"type": "sampled", "name": "t", "unit": "none", "startValue": 0, "endValue": 1, "samples": [[0, 7]], "weights": [1]}]}`, "profiles[0].samples[0][1]: frame index 7 out of range"},
		{"x.nettrace", "Nettrace\x14\x00\x00\x00!FastSerialization.1", ".NET EventPipe trace (.nettrace): nettrace file has no Trace object"},
		{"v6.nettrace", "Nettrace\x00\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00", "nettrace V6 (format version 6.0, written by `dotnet-trace collect-linux`)"},
		{"x.netperf", "\x14\x00\x00\x00!FastSerialization.1\x05\x05\x01", "unknown format: .NET EventPipe trace in the .netperf format"},
		{"x.zip", "PK\x03\x04\x14\x00\x00\x00\x08\x00\x23\x7a\xd2\x50\xfe\x1a\x01\x24\x98\xf4\x2c\x00\xda\x25\xc4\x01\x05\x00\x00\x00a.txt\x01\x02", "zip archive cut short"},
		{"two.zip", string(zipT(t, map[string]string{"a.folded": "main;f 1\n", "b.folded": "main;g 1\n"})), "zip archive with 2 files (a.folded, b.folded)"},
		{"zip-in-zip.zip", string(zipT(t, map[string]string{"in.zip": string(zipT(t, map[string]string{"a.folded": "main;f 1\n"}))})), "in zip member in.zip: unknown format: zip archive inside a zip archive"},
		{"bad-frame.perf.txt", perfScript + "java 12345/12346 [003] 2034.443940:     10101010 cpu-clock:\n\tthis is not a frame line\n", "perf script: line 14: malformed stack frame"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.name, []byte(tc.data), 0)
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			checkError(t, err, tc.name, tc.want)
		})
	}
}

// TestOurJSONCutShort checks that JSON of a format profdiff reads, which
// its reader's sniff refuses (a file cut short, or without what the
// reader needs), is refused as a malformed file of that format saying what
// the reader wants, never as an unknown format that profdiff reads (the
// message contradicted itself) nor as folded stacks.
func TestOurJSONCutShort(t *testing.T) {
	gecko := readertest.ReadFile(t, filepath.Join("firefox", "testdata", "headless.json.gz"))
	for _, tc := range []struct {
		name  string
		data  []byte
		want  string
		whole bool // whole JSON, which names no place
	}{
		// Firefox's own recording, cut before its threads' tables.
		// Where the JSON ends is the file's byte, after a byte-order mark too.
		{"headless-cut.json", gecko[:100_000], `Firefox Profiler (Gecko) JSON, cut short or malformed: the reader wants "meta", "threads" and the threads' "stackTable" and "frameTable"; the JSON ends inside a value at byte 100000 (a file cut short?)`, false},
		{"headless-bom-cut.json", append([]byte("\uFEFF"), gecko[:100_000]...), `counting after its byte-order mark: Firefox Profiler (Gecko) JSON, cut short or malformed: the reader wants "meta", "threads" and the threads' "stackTable" and "frameTable"; the JSON ends inside a value at byte 100000 (a file cut short?)`, false},
		// A bad byte at the end is no cut.
		{"stackprof-bad-end.json", []byte(`{"mode":"cpu","frames":{"a":1},"samples":3,}`), `stackprof JSON of Ruby, cut short or malformed: the reader wants "mode", "frames" and "gc_samples" (what stackprof --json writes); invalid JSON at byte 44: invalid character '}' looking for beginning of object key string`, false},
		// Pretty-printed JSON whose number lines would pass as one-frame
		// stacks, without stackprof's "gc_samples".
		// (Whole JSON: no place to name.)
		{"stackprof.json", []byte("{\n  \"mode\": \"cpu\",\n  \"samples\": 145\n,\n  \"frames\": {\n    \"70326871253740\": 1\n  }\n}\n"), `stackprof JSON of Ruby, cut short or malformed: the reader wants "mode", "frames" and "gc_samples" (what stackprof --json writes)`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, data := range [][]byte{tc.data, gzipT(t, tc.data)} {
				l, err := Parse(tc.name, data, 0)
				if err == nil {
					t.Fatalf("loaded as %s (%d samples)", l.Format, len(l.Profile.Sample))
				}
				checkError(t, err, tc.name, tc.want)
				// Gzipped, the places count in the gunzipped data.
				if gz := strings.HasPrefix(err.Error(), tc.name+": in the gunzipped data: "); gz != (i == 1) {
					t.Errorf("%v: gzipped %v, yet says so %v", err, i == 1, gz)
				}
				if tc.whole && strings.Contains(err.Error(), " at byte ") {
					t.Errorf("%v: whole JSON, yet a place is named", err)
				}
				if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "unknown format") {
					t.Errorf("%v: want ErrCorrupt, not an unknown format", err)
				}
			}
		})
	}
	// Firefox 59's DevTools export, whose Gecko profile is under
	// "profile", cut before it.
	t.Run("devtools-corpus", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(corpusDir(t), "speedscope", "sample__profiles__Firefox__59__simple-firefox.json"))
		if err != nil {
			t.Skip(err)
		}
		_, err = Parse("firefox59.json", data[:len(data)*3/10], 0)
		checkError(t, err, "firefox59.json", `Firefox DevTools performance recording JSON, cut short or malformed: the reader wants the Gecko profile under "profile"`, fmt.Sprintf("the JSON ends inside a value at byte %d", len(data)*3/10))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: want ErrCorrupt", err)
		}
	})
}

// TestParseUnsupportedFormats checks that formats profdiff does not read
// fail with an error that names them, and are never read as folded stacks.
func TestParseUnsupportedFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"empty.json", "{}", "JSON without keys"},
		{"go122.test", "-- expect --\nSUCCESS\n-- trace --\nTrace Go1.22\nEventBatch gen=1 m=0 time=1 size=5\n", "Go execution trace"},
		{"v8.log", "v8-version,6,0,287,53,0\nshared-library,\"/usr/local/bin/node\",0x100003200,0x1008b3cba,0\n", "V8 --prof log"},
		{"perf.data", "PERFILE2\x68\x00\x00\x00\x00\x00\x00\x00", "perf.data"},
		{"a.out", "\x7fELF\x02\x01\x01\x00", "ELF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, data := range [][]byte{[]byte(tc.data), gzipT(t, []byte(tc.data))} {
				l, err := Parse(tc.name, data, 0)
				if err == nil {
					t.Fatalf("loaded as %s (%d samples)", l.Format, len(l.Profile.Sample))
				}
				checkError(t, err, tc.name, "unknown format", tc.want)
			}
		})
	}
}

// TestParseFoldedLookalikes checks folded files that start or look like
// other formats still load as folded stacks.
func TestParseFoldedLookalikes(t *testing.T) {
	for _, data := range []string{
		"[unknown];[unknown];main 5\n[unknown];foo 2\n",
		"[[vdso]];main 5\n",
		"{{closure}};main 3\n",
		"{anonymous};main 3\n",
		"[1];main 3\n",
		"java;Interpreter (/usr/lib/jvm/libjvm.so);main 7\n", // parentheses inside a frame
		"swapper;[unknown];cpu_idle 12\nperf 20353 2034.423940;x 1\n",
		"go 1.22 trace;main 1\n",
		"Trace Go1.22;x 1\n", // a frame named like the header, with a count: not the header line
		"events: a 1\nfn=x 2\n",
	} {
		l, err := Parse("lookalike.txt", []byte(data), 0)
		if err != nil {
			t.Errorf("%q: %v", data, err)
			continue
		}
		if l.Format != "folded" {
			t.Errorf("%q: Format %q", data, l.Format)
		}
	}
}

func TestSniffJSON(t *testing.T) {
	for text, isJSON := range map[string]bool{
		`{"a": 1}`:                     true,
		"  \n[\n 1, 2, 3, 4, 5, 6, 7]": true,
		`[]`:                           true,
		"[unknown];a 1":                false,
		"{{closure}};a 1":              false,
		"[1];a 1":                      false,
		"a;b 1":                        false,
		"":                             false,
	} {
		if what, _ := sniffJSON(text); (what != "") != isJSON {
			t.Errorf("sniffJSON(%q) = %q, want JSON %v", text, what, isJSON)
		}
	}
	if what, _ := sniffUnsupportedText("\uFEFF{\"x\": 1}"); !strings.Contains(what, "JSON") {
		t.Errorf("JSON with a BOM not recognized")
	}
}

// TestParseFoldedRejectsOtherFormats checks ParseFolded, called directly,
// does not read JSON or perf script output as stacks.
func TestParseFoldedRejectsOtherFormats(t *testing.T) {
	for _, data := range []string{
		perfScript,
		"{\n  \"samples\": 145\n}\n",
		"[\n  {\"name\": \"a\", \"value\": 3}\n]\n",
	} {
		p, _, err := ParseFolded([]byte(data))
		if err == nil {
			t.Errorf("%q: parsed %d samples", data, len(p.Sample))
		} else if !strings.Contains(err.Error(), "not folded stacks") {
			t.Errorf("%q: error %v", data, err)
		}
	}
}
