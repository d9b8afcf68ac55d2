package profile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/producertest"
)

// lookalike is a text report made by a real tool and what its error must
// name.
type lookalike struct {
	name, want string
	data       []byte
}

// runIn runs a command in dir and returns its standard output, or skips the
// test when the tool fails (a machine without perf rights, ghc without its
// profiling libraries).
func runIn(t *testing.T, dir string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(nativeTool(t, name), args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLookalikeReports: reports of profilers that end some lines in a
// number (GHC's .prof, cProfile, gprof, perf report) are refused with an
// error naming the tool, never read as one-frame folded stacks; and each is
// refused by the folded reader's own shape check too.
func TestLookalikeReports(t *testing.T) {
	ghc, err := os.ReadFile(filepath.Join("testdata", "lookalike", "ghc-fib.prof"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		make func(t *testing.T) lookalike
	}{
		{"ghc-recorded", func(t *testing.T) lookalike { return lookalike{"ghc-fib.prof", "GHC cost-centre report", ghc} }},
		{"ghc-json-corpus", func(t *testing.T) lookalike {
			// GHC's +RTS -pj report, from speedscope's samples.
			data, err := os.ReadFile(filepath.Join(corpus.Need(t), "speedscope", "sample__profiles__haskell__simple.prof"))
			if err != nil {
				t.Skipf("corpus file absent: %v", err)
			}
			return lookalike{"simple.prof", "GHC cost-centre profile JSON", data}
		}},
		{"ghc", func(t *testing.T) lookalike {
			dir := t.TempDir()
			src, err := os.ReadFile(filepath.Join("testdata", "lookalike", "Fib.hs"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "Fib.hs"), string(src))
			runIn(t, dir, "ghc", "-prof", "-fprof-auto", "-rtsopts", "-O0", "Fib.hs", "-o", "fibprof")
			runIn(t, dir, filepath.Join(dir, "fibprof"), "+RTS", "-p", "-RTS")
			data, err := os.ReadFile(filepath.Join(dir, "fibprof.prof"))
			if err != nil {
				t.Fatal(err)
			}
			return lookalike{"fibprof.prof", "GHC cost-centre report", data}
		}},
		{"cprofile", func(t *testing.T) lookalike {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "w.py"), "def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\nfib(15)\n")
			return lookalike{"cprofile.txt", "cProfile", runIn(t, dir, "python3", "-m", "cProfile", "-s", "tottime", "w.py")}
		}},
		{"gprof", func(t *testing.T) lookalike {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "w.c"), "static long fib(int n) { return n < 2 ? n : fib(n-1) + fib(n-2); }\nint main(void) { return fib(27) == 0; }\n")
			runIn(t, dir, "gcc", "-pg", "-O0", "-o", "w", "w.c")
			cmd := exec.Command(filepath.Join(dir, "w"))
			cmd.Dir = dir
			_ = cmd.Run() // exits 1: fib(27) != 0; gmon.out is written either way
			return lookalike{"gprof.txt", "gprof report", runIn(t, dir, "gprof", "w", "gmon.out")}
		}},
		{"perf-report", func(t *testing.T) lookalike {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "w.c"), "static long fib(int n) { return n < 2 ? n : fib(n-1) + fib(n-2); }\nint main(void) { return fib(30) == 0; }\n")
			runIn(t, dir, "gcc", "-O0", "-o", "w", "w.c")
			perf := nativeTool(t, "perf")
			cmd := exec.Command(perf, producertest.PerfRecord(perf, "-q", "-F", "999", "-g", "-o", "perf.data", "./w")...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("perf record: %v: %s", err, out)
			}
			return lookalike{"perf-report.txt", "perf report", runIn(t, dir, "perf", "report", "--stdio", "-i", "perf.data")}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.make(t)
			l, err := Parse(c.name, c.data, 0)
			if err == nil {
				t.Fatalf("read as %s with %d samples; want it refused", l.Format, len(l.Profile.Sample))
			}
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q: want ErrUnsupported naming %q", err, c.want)
			}
			text, _ := decodeText(c.data)
			if _, _, ferr := parseFoldedText(text); ferr == nil {
				t.Errorf("the folded reader alone reads it as stacks")
			} else {
				t.Logf("folded reader alone: %v", ferr)
			}
		})
	}
}

// TestFoldedShape: folded text without any stack of two frames is judged by
// its first line and its rows; real one-frame stacks still read.
func TestFoldedShape(t *testing.T) {
	for _, c := range []struct {
		name, text, err string
	}{
		{"one-frame stacks", "main 5\nruntime.gcBgMarkWorker 3\nvoid Foo.bar(int, int) 2\n", ""},
		{"bad count on a stack first", "a;b NaN\nok 1\nok 2\n", ""},
		{"stacks after a title", "Report of today\nmain;a 1\nmain;b 2\n", ""},
		{"title then rows", "Report of today\nmain 1\nfoo 2\n", "line 1, the first, is not a stack"},
		{"table rows", "fib Main Main.hs:5:1-64 100.0 99.8\nmain Main Main.hs:2:1-44 0.0 0.2\nio 3\n", "2 of 3 lines are rows of a table"},
		{"percent columns", "main 12.5% 30\nfoo 87.5% 210\n", "rows of a table"},
	} {
		_, _, err := parseFoldedText(c.text)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}
