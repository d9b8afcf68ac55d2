package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	pprofile "github.com/google/pprof/profile"
)

// hostileNames are function names that try to act on a terminal, break a
// Markdown table or a PR comment, or run in a spreadsheet.
var hostileNames = []string{
	"main.clear\x1b[2J\x1b[H",
	"main.clip\x1b]52;c;ZXZpbA==\x07",
	"main.link\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"main.grow\rmain.tiny",
	"main.big\b\b\bsmall",
	"main.two\n| `x` | 99% |\n<img src=x onerror=alert(1)>",
	"main.pipe|and`ticks`",
	"main.img<img src=x>[link](https://evil.example)",
	"main.bidi\u202eevil\u202c\u2066x\u2069",
	"main.c1\u009b2J\x7f",
	"=HYPERLINK(\"https://evil.example\",\"x\")",
	"+cmd|' /C calc'!A0",
	"@SUM(1+1)*cmd|' /C calc'!A0",
	"main.huge" + strings.Repeat("x", 1<<20),
}

// hostileProfile is a CPU profile written with the pprof library whose
// frames are hostileNames, each a leaf of its own sample; grow scales
// the values so that a diff has every frame changing.
func hostileProfile(t *testing.T, path string, grow int64) {
	t.Helper()
	const period = 10000000
	writeHostile(t, path, []string{"samples/count", "cpu/nanoseconds"}, 1, period, "",
		func(n int64) []int64 { return []int64{n * grow, n * grow * period} })
}

// hostileContention is a Go contention profile (contentions and delay)
// written with the pprof library whose samples are each hostile name
// calling lock: sync.(*Mutex).Unlock makes a mutex profile of them as
// holders, sync.(*Mutex).Lock a block profile of them as waiters, so
// that 'profdiff wait' pairs each name with itself, a lock of its own.
func hostileContention(t *testing.T, path, lock string) {
	t.Helper()
	writeHostile(t, path, []string{"contentions/count", "delay/nanoseconds"}, 0, 1, lock,
		func(n int64) []int64 { return []int64{n, n * 1e6} })
}

// writeHostile writes to path the namedPprof profile of hostileNames.
func writeHostile(t *testing.T, path string, types []string, periodType int, period int64, leaf string, values func(n int64) []int64) {
	t.Helper()
	if err := os.WriteFile(path, namedPprof(t, hostileNames, types, periodType, period, leaf, values), 0o644); err != nil {
		t.Fatal(err)
	}
}

// namedPprof is a pprof profile, written with the pprof library, of 10 s
// of the sample types types ("type/unit"), sampled every period of
// types[periodType], with a sample per name, the name its leaf or, with
// leaf set, its leaf's caller, valued values(10+i) for the name's index i.
func namedPprof(tb testing.TB, names, types []string, periodType int, period int64, leaf string, values func(n int64) []int64) []byte {
	tb.Helper()
	p := &pprofile.Profile{Period: period, DurationNanos: 10e9}
	for _, s := range types {
		typ, unit, _ := strings.Cut(s, "/")
		p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: typ, Unit: unit})
	}
	p.PeriodType = p.SampleType[periodType]
	loc := func(id int, name string) *pprofile.Location {
		fn := &pprofile.Function{ID: uint64(id), Name: name, SystemName: name}
		l := &pprofile.Location{ID: fn.ID, Line: []pprofile.Line{{Function: fn}}}
		p.Function, p.Location = append(p.Function, fn), append(p.Location, l)
		return l
	}
	var under []*pprofile.Location
	if leaf != "" {
		under = append(under, loc(len(names)+1, leaf))
	}
	for i, name := range names {
		p.Sample = append(p.Sample, &pprofile.Sample{Location: append(slices.Clone(under), loc(i+1, name)), Value: values(int64(10 + i))})
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// sgr matches the colour codes profdiff writes itself (diff/render's
// tones and reset).
var sgr = regexp.MustCompile(`\x1b\[(0|31|32|33|1;31)m`)

// terminalSafe says what in text output would act on a terminal: any
// byte below 0x20 but tab and newline, DEL, a C1 control (as a byte that
// is not UTF-8 or as a character), a bidi control or line separator.
func terminalSafe(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"): // not U+FFFD itself, what an invalid byte may become
			return fmt.Sprintf("a byte that is not UTF-8 at %d", i)
		case r < 0x20 && r != '\t' && r != '\n', r == 0x7f, r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("control %U at %d", r, i)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029, r == 0x200e, r == 0x200f:
			return fmt.Sprintf("bidi control %U at %d", r, i)
		}
	}
	return ""
}

// cells splits a GitHub table row at its unescaped pipes, a backslash
// escaping the character after it, as GitHub splits it.
func cells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// TestHostileNamesInEveryFormat runs diff and top on profiles whose frame
// names carry terminal escapes, line breaks, Markdown, HTML and formulas,
// in a file whose name carries them too, and wait on mutex and block
// profiles of the same names, and checks every format's bytes: the text
// formats escape them, Markdown tables keep their shape, CSV neutralises
// formulas and keeps each name one cell, JSON and CSV keep names whole,
// and a name of 1 MiB is cut in the text formats.
func TestHostileNamesInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base\x1b]8;;http:evil\x07\n<img src=x>.pb.gz")
	newP := filepath.Join(dir, "new.pb.gz")
	hostileProfile(t, base, 1)
	hostileProfile(t, newP, 3)
	mutex, block := filepath.Join(dir, "mutex\x1b]8;;http:evil\x07\n<img src=x>.pb.gz"), filepath.Join(dir, "block.pb.gz")
	hostileContention(t, mutex, "sync.(*Mutex).Unlock")
	hostileContention(t, block, "sync.(*Mutex).Lock")
	huge := hostileNames[len(hostileNames)-1]
	runs := map[string][]string{
		"diff": {"diff", "--top", "0", base, newP},
		"top":  {"top", "--top", "0", base},
		"wait": {"wait", "--top", "0", mutex, block},
	}
	formats := map[string][]string{"wait": {"table", "markdown", "csv", "json", "html"}}
	for cmd, args := range runs {
		fs, ok := formats[cmd]
		if !ok {
			fs = []string{"table", "markdown", "github", "csv", "json", "html", "svg", "folded"}
		}
		for _, f := range fs {
			out, stderr, code := profdiff(t, "", append([]string{args[0], "--format", f, "--color", "never"}, args[1:]...)...)
			what := cmd + " --format " + f
			if code != 0 {
				t.Fatalf("%s: exit %d: %.2000s", what, code, stderr)
			}
			if err := terminalSafe(stderr); err != "" {
				t.Errorf("%s: stderr has %s: %q", what, err, stderr)
			}
			if f == "folded" {
				if err := terminalSafe(out); err != "" {
					t.Errorf("%s: stdout has %s", what, err)
				}
			}
			switch f {
			case "table", "markdown", "github":
				if f == "github" {
					checkGitHubMarkdown(t, out) // every table whole: no name breaks a row
				}
				if err := terminalSafe(out); err != "" {
					t.Errorf("%s: stdout has %s", what, err)
				}
				// The 1 MiB name is cut to 4 KiB: the report is at most
				// its rows times that, not times the name.
				t.Logf("%s: %d bytes", what, len(out))
				if len(out) > 256<<10 {
					t.Errorf("%s: %d bytes of output", what, len(out))
				}
				if !strings.Contains(out, `main.clear\x1b[2J`) || !strings.Contains(out, `main.grow\rmain.tiny`) || !strings.Contains(out, `\u202e`) {
					t.Errorf("%s: escaped names missing:\n%.3000s", what, out)
				}
			case "csv":
				recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				whole, quoted := false, 0
				cellOf := map[string]bool{} // each name is one cell, a formula's after its quote
				for _, rec := range recs {
					for _, c := range rec {
						if c != "" && strings.IndexByte("=+@", c[0]) >= 0 {
							t.Errorf("%s: a spreadsheet evaluates cell %.80q", what, c)
						}
						cellOf[strings.TrimPrefix(c, "'")] = true
						whole = whole || c == huge
						if strings.HasPrefix(c, "'=HYPERLINK") || strings.HasPrefix(c, "'+cmd") || strings.HasPrefix(c, "'@SUM") {
							quoted++
						}
					}
				}
				if !whole || quoted == 0 {
					t.Errorf("%s: 1 MiB name whole: %v; neutralised formulas: %d", what, whole, quoted)
				}
				for _, n := range hostileNames {
					if !cellOf[n] {
						t.Errorf("%s: name %.40q is not a cell of its own", what, n)
					}
				}
				// --csv-raw writes them as they are, for programs.
				rawOut, _, _ := profdiff(t, "", append([]string{args[0], "--format", "csv", "--csv-raw"}, args[1:]...)...)
				if rawRecs, err := csv.NewReader(strings.NewReader(rawOut)).ReadAll(); err != nil || len(rawRecs) != len(recs) || !strings.Contains(rawOut, "\n=HYPERLINK") && !strings.Contains(rawOut, ",\"=HYPERLINK") {
					t.Errorf("%s --csv-raw: %v; %d records, want %d, with the formula as written", what, err, len(rawRecs), len(recs))
				}
			case "json":
				// Names whole once decoded; nothing raw that a terminal
				// acts on (JSON escapes DEL, C1 and bidi controls too).
				if err := terminalSafe(out); err != "" {
					t.Errorf("%s: stdout has %s", what, err)
				}
				var doc any
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				seen := map[string]bool{}
				var walk func(any)
				walk = func(v any) {
					switch v := v.(type) {
					case string:
						seen[v] = true
					case []any:
						for _, e := range v {
							walk(e)
						}
					case map[string]any:
						for _, e := range v {
							walk(e)
						}
					}
				}
				walk(doc)
				for _, n := range hostileNames {
					if !seen[n] {
						t.Errorf("%s: name %.40q not whole", what, n)
					}
				}
			}
			if f == "table" {
				// Coloured and narrowed, the only escapes are the tool's
				// own colours.
				out, _, _ := profdiff(t, "", append([]string{args[0], "--color", "always", "--width", "60"}, args[1:]...)...)
				if cmd == "diff" && !strings.Contains(out, "\x1b[") {
					t.Errorf("%s --color always: no colour", what)
				}
				if err := terminalSafe(sgr.ReplaceAllString(out, "")); err != "" {
					t.Errorf("%s --color always --width 60: stdout has %s beside the colours", what, err)
				}
			}
			if f != "markdown" {
				continue
			}
			for _, problem := range markdownProblems(out) {
				t.Errorf("%s: %s", what, problem)
			}
		}
	}
}

// markdownProblems says what in Markdown md breaks its shape or renders
// what a name carried: a table row with more or fewer cells than its
// header, an <img or a link outside a code span.
func markdownProblems(md string) []string {
	var problems []string
	want := -1
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			want = -1
			continue
		}
		if want < 0 {
			want = cells(line)
		} else if n := cells(line); n != want {
			problems = append(problems, fmt.Sprintf("a row with %d pipes under a header with %d: %.200q", n, want, line))
		}
	}
	// (wait's prose names sites outside code spans, escaped: an escaped
	// bracket, "\](", starts no link.)
	for _, line := range strings.Split(md, "\n") {
		spans := strings.Split(line, "`")
		for i := 0; i < len(spans); i += 2 { // outside code spans
			if html := strings.Index(spans[i], "<img"); html >= 0 && !strings.HasSuffix(spans[i][:html], `\`) || strings.Contains(strings.ReplaceAll(spans[i], `\](`, ""), "](") {
				problems = append(problems, fmt.Sprintf("HTML or a link outside a code span: %.200q", line))
			}
		}
	}
	return problems
}

// TestHostileServerAnswers has a loopback server answer a URL source
// and a Pyroscope query with error bodies that carry terminal escapes and
// line breaks (plain text, and Connect's JSON whose message decodes to
// them), and a missing file whose name carries them: each error is one
// line on stderr, escaped, and nothing of it starts a line of its own.
func TestHostileServerAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/debug/") {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "\x1b]52;c;ZXZpbA==\x07boom\x1b[2J\rfake\x08\x08\x08\x9b2J\r\nprofdiff: fake line\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"code":"invalid_argument","message":"\u001b]8;;http://evil.example\u0007click\u001b]8;;\u0007\nprofdiff: fake line\r\u202eevil"}`)
	}))
	defer srv.Close()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct{ name, source, want string }{
		{"url", srv.URL + "/debug/pprof/profile?seconds=1", `\x1b]52;c;ZXZpbA==\x07boom\x1b[2J`},
		{"pyroscope", pyroSource(srv.URL, "v2", t0, t0.Add(time.Hour), ""), `\x1b]8;;http://evil.example\x07click`},
		{"file", filepath.Join(t.TempDir(), "gone\x1b[2J\nprofdiff: fake line.pb.gz"), `gone\x1b[2J`},
	} {
		_, stderr, code := profdiff(t, "", "top", c.source)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2: %q", c.name, code, stderr)
		}
		if err := terminalSafe(stderr); err != "" {
			t.Errorf("%s: stderr has %s: %q", c.name, err, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if !strings.HasPrefix(lines[0], "profdiff: ") || !strings.Contains(lines[0], c.want) {
			t.Errorf("%s: first line %q, want the escaped answer %q", c.name, lines[0], c.want)
		}
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "Run 'profdiff") {
				t.Errorf("%s: a line of the answer starts a line of its own: %q", c.name, l)
			}
		}
	}
}
