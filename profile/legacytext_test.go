package profile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

// heapSink keeps allocations alive for the heap profile
// TestLegacyTextChild writes.
var heapSink [][]byte

// legacyTextEnv names the profile TestLegacyTextChild writes.
const legacyTextEnv = "PROFDIFF_LEGACY_TEXT_CHILD"

// TestLegacyTextChild is the child process of legacyTextFiles: it writes
// the runtime/pprof profile named in $PROFDIFF_LEGACY_TEXT_CHILD in the
// legacy text format (debug=1) and exits, from a process that has run
// nothing else, so that what it holds does not depend on the tests run
// before.
func TestLegacyTextChild(t *testing.T) {
	name := os.Getenv(legacyTextEnv)
	if name == "" {
		t.Skip("the child process of TestLegacyText")
	}
	// Sixteen MiB in 1 MiB blocks: at the default sampling rate (one
	// sample per 512 KiB on average) each is sampled with probability
	// 0.86, so the heap profile holds samples.
	for range 16 {
		heapSink = append(heapSink, make([]byte, 1<<20))
	}
	runtime.GC()
	if err := pprof.Lookup(name).WriteTo(os.Stdout, 1); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// legacyTextFiles are legacy text profiles as Go's runtime writes them
// (debug=1) in a child process, with the pattern of their sample lines.
func legacyTextFiles(t *testing.T) map[string]struct {
	data   []byte
	sample *regexp.Regexp
} {
	child := func(name string) []byte {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLegacyTextChild$")
		cmd.Env = append(os.Environ(), legacyTextEnv+"="+name)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the child writing the %s profile: %v: %s", name, err, stderr.Bytes())
		}
		return out
	}
	return map[string]struct {
		data   []byte
		sample *regexp.Regexp
	}{
		"goroutine.txt": {child("goroutine"), regexp.MustCompile(`^\d+ @( 0x[0-9a-f]+)+$`)},
		"heap.txt":      {child("heap"), regexp.MustCompile(`^\d+: \d+ \[\d+: \d+\] @( 0x[0-9a-f]+)+$`)},
	}
}

// sampleLines returns the numbers (from 1) of data's lines that match
// sample.
func sampleLines(data []byte, sample *regexp.Regexp) []int {
	var lines []int
	for i, l := range strings.Split(string(data), "\n") {
		if sample.MatchString(l) {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// replaceLine returns data with line n (from 1) replaced by with.
func replaceLine(data []byte, n int, with string) []byte {
	lines := strings.Split(string(data), "\n")
	lines[n-1] = with
	return []byte(strings.Join(lines, "\n"))
}

// TestLegacyText checks what a broken legacy text profile says: the line
// at which the pprof library stops reading it, for every sample line
// broken in turn, and what a file cut inside its last line says.
func TestLegacyText(t *testing.T) {
	for name, f := range legacyTextFiles(t) {
		t.Run(name, func(t *testing.T) {
			l, err := Parse(name, f.data, 0)
			if err != nil {
				t.Fatalf("whole: %v", err)
			}
			for _, w := range l.Warnings {
				if strings.Contains(w, "newline") {
					t.Errorf("whole: warning %q", w)
				}
			}
			lines := sampleLines(f.data, f.sample)
			if len(lines) == 0 {
				t.Fatalf("no sample lines in\n%s", f.data)
			}
			// Every sample line broken in turn is the one named.
			for _, n := range lines {
				_, err := Parse(name, replaceLine(f.data, n, "hello world"), 0)
				checkError(t, err, name, fmt.Sprintf(`profile (text), malformed at line %d, "hello world": `, n))
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("line %d: %v: want ErrCorrupt", n, err)
				}
			}
			// The same, gzipped: the lines are the gunzipped text's.
			n := lines[len(lines)-1]
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(replaceLine(f.data, n, "hello world"))
			zw.Close()
			_, err = Parse(name+".gz", gz.Bytes(), 0)
			checkError(t, err, name+".gz", fmt.Sprintf(`in the gunzipped data: legacy pprof %s profile (text), malformed at line %d`, strings.TrimSuffix(name, ".txt"), n))

			// Cut inside a sample line: its last address would be read
			// cut, so the file is refused.
			cut := f.data[:bytes.Index(f.data, []byte(strings.Split(string(f.data), "\n")[n-1]))+10]
			_, err = Parse(name, cut, 0)
			checkError(t, err, name, fmt.Sprintf("the file ends inside line %d, without the newline that ends every line (a file cut short?)", n))
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("cut: %v: want ErrCorrupt", err)
			}
			// Cut inside a comment after the samples: read, with a
			// warning.
			end := bytes.TrimRight(f.data, "\n")
			last := bytes.Count(end, []byte("\n")) + 1
			l, err = Parse(name, end[:len(end)-1], 0)
			if err != nil {
				t.Fatalf("cut in the last line: %v", err)
			}
			want := fmt.Sprintf("%s: legacy pprof %s profile (text): the file ends inside line %d, without the newline that ends every line (a file cut short?); the samples are whole", name, strings.TrimSuffix(name, ".txt"), last)
			if len(l.Warnings) == 0 || !strings.HasPrefix(l.Warnings[0], want) {
				t.Errorf("cut in the last line: warnings %q, want one that starts %q", l.Warnings, want)
			}
		})
	}
}

// TestLegacyTextHeaderOnly: a header without a newline holds no samples,
// and the loader says that, not that the header was cut.
func TestLegacyTextHeaderOnly(t *testing.T) {
	_, err := Parse("one.txt", []byte("goroutine profile: total 0"), 0)
	checkError(t, err, "one.txt", "profile has no samples")
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("%v: want ErrEmpty", err)
	}
}

// TestLegacyTextCorpus breaks the corpus's legacy text profiles, gperftools'
// and Java's: a thread profile's stack line (its records take several
// lines, so a prefix that ends at a thread's header fails though nothing
// is wrong there), a contention profile's attribute and a sample line of a
// contention profile, which the library calls unrecognized.
func TestLegacyTextCorpus(t *testing.T) {
	dir := filepath.Join(corpusDir(t), "google-pprof")
	for _, c := range []struct {
		file string
		line int
		with string
		want string
	}{
		{"profile__testdata__cppbench.thread", 14, "  0x11111111111111111: main", `legacy pprof thread profile (text), malformed at line 14, "  0x11111111111111111: main": malformed sample`},
		{"profile__testdata__cppbench.contention", 2, "cycles/second = abc", `legacy pprof contention profile (text), malformed at line 2, "cycles/second = abc": not a line this format holds there`},
		{"profile__testdata__cppbench.contention", 8, "hello world", `legacy pprof contention profile (text), malformed at line 8, "hello world": not a line this format holds there`},
		// The Java reader ends its samples here, silently.
		{"profile__testdata__java.contention", 7, "hello world", `legacy pprof contention profile (text), malformed at line 7, "hello world": its samples stop there, and more follow`},
		// A right-to-left override is quoted, not sent.
		{"profile__testdata__cppbench.heap", 20, "\u202ehello", `legacy pprof heap profile (text), malformed at line 20, "\u202ehello": unexpected number of sample values`},
	} {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(c.file, data, 0); err != nil {
			t.Fatalf("%s whole: %v", c.file, err)
		}
		_, err = Parse(c.file, replaceLine(data, c.line, c.with), 0)
		checkError(t, err, c.file, c.want)
	}
}

// legacyHeapText is a legacy heap profile of n bytes or a little more:
// distinct one-line samples of 12 addresses, and with bad set, a line that
// is no sample ten lines before its end.
func legacyHeapText(n int, bad bool) []byte {
	var b bytes.Buffer
	b.WriteString("heap profile: 1000: 1000000 [1000: 1000000] @ heap/1048576\n")
	var lines []int
	for i := 0; b.Len() < n; i++ {
		lines = append(lines, b.Len())
		b.WriteString("1: 1024 [1: 1024] @")
		for j := range 12 {
			fmt.Fprintf(&b, " 0x%x", 0x400000+(i*12+j)*16)
		}
		b.WriteByte('\n')
	}
	data := b.Bytes()
	if bad {
		at := lines[len(lines)-10]
		copy(data[at:], "hello world: ")
	}
	return data
}

// BenchmarkLegacyTextStop is what a legacy text profile that the pprof
// library refuses costs to load: the library's refusal, then the search
// for the line (legacyTextStop), on heap profiles of 1 and 4 MiB broken
// ten lines before their end; "whole" is the same file unbroken, the
// library's one read, the floor.
func BenchmarkLegacyTextStop(b *testing.B) {
	for _, size := range []int{1 << 20, legacyTextLocateMax - 1<<10} {
		for _, bad := range []bool{false, true} {
			data := legacyHeapText(size, bad)
			name := fmt.Sprintf("%.0fMiB/whole", float64(len(data))/(1<<20))
			if bad {
				name = strings.Replace(name, "whole", "broken", 1)
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					_, err := Parse("heap.txt", data, 0)
					if (err != nil) != bad {
						b.Fatalf("error %v, want one: %v", err, bad)
					}
					if bad && !strings.Contains(err.Error(), "malformed at line") {
						b.Fatalf("%v: no line named", err)
					}
				}
			})
		}
	}
}
