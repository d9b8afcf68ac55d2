package profile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
)

// foldedSummary renders a parsed folded profile back as sorted "a;b;c n"
// lines (root first), for comparisons.
func foldedSummary(p *pprofile.Profile) string {
	var lines []string
	for _, s := range p.Sample {
		names := funcNames(s)
		for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
		}
		lines = append(lines, fmt.Sprintf("%s %d", strings.Join(names, ";"), s.Value[0]))
	}
	sortStrings(lines)
	return strings.Join(lines, "\n")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func parseFolded(t *testing.T, data []byte) (*pprofile.Profile, []string) {
	t.Helper()
	p, warns, err := ParseFolded(data)
	if err != nil {
		t.Fatalf("ParseFolded: %v (warnings %q)", err, warns)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("CheckValid: %v", err)
	}
	return p, warns
}

const simpleFolded = "main;a;b 3\nmain;a;c 2\nmain;a;b 1\nmain 4\n"
const simpleWant = "main 4\nmain;a;b 4\nmain;a;c 2"

func utf16Bytes(s string, bigEndian bool) []byte {
	u := utf16.Encode([]rune(s))
	b := []byte{0xFF, 0xFE}
	if bigEndian {
		b = []byte{0xFE, 0xFF}
	}
	for _, c := range u {
		if bigEndian {
			b = binary.BigEndian.AppendUint16(b, c)
		} else {
			b = binary.LittleEndian.AppendUint16(b, c)
		}
	}
	return b
}

func TestParseFoldedEncodings(t *testing.T) {
	crlf := strings.ReplaceAll(simpleFolded, "\n", "\r\n")
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plain", []byte(simpleFolded)},
		{"no final newline", []byte(strings.TrimSuffix(simpleFolded, "\n"))},
		{"CRLF", []byte(crlf)},
		{"UTF-8 BOM", append([]byte{0xEF, 0xBB, 0xBF}, simpleFolded...)},
		{"UTF-8 BOM CRLF", append([]byte{0xEF, 0xBB, 0xBF}, crlf...)},
		{"UTF-16 LE", utf16Bytes(simpleFolded, false)},
		{"UTF-16 BE", utf16Bytes(simpleFolded, true)},
		{"UTF-16 LE CRLF", utf16Bytes(crlf, false)},
		{"UTF-16 BE CRLF", utf16Bytes(crlf, true)},
		{"blank lines and trailing spaces", []byte("\n\nmain;a;b 3  \n\n  \nmain;a;c 2\t\nmain;a;b 1\nmain 4\n\n")},
		{"tab before count", []byte("main;a;b\t3\nmain;a;c\t2\nmain;a;b\t1\nmain\t4\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, warns := parseFolded(t, tc.data)
			if len(warns) != 0 {
				t.Errorf("warnings %q", warns)
			}
			if got := foldedSummary(p); got != simpleWant {
				t.Errorf("got\n%s\nwant\n%s", got, simpleWant)
			}
			if len(p.SampleType) != 1 || p.SampleType[0].Type != "samples" || p.SampleType[0].Unit != "count" || p.Period != 1 {
				t.Errorf("sample types %v period %d", p.SampleType, p.Period)
			}
			// Frames are shared: main appears in one location only.
			n := 0
			for _, loc := range p.Location {
				if loc.Line[0].Function.Name == "main" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("main has %d locations, want 1", n)
			}
		})
	}
}

func TestLoadFoldedEncodings(t *testing.T) {
	for name, data := range map[string][]byte{
		"le.txt":   utf16Bytes(simpleFolded, false),
		"be.txt":   utf16Bytes(strings.ReplaceAll(simpleFolded, "\n", "\r\n"), true),
		"bom.txt":  append([]byte{0xEF, 0xBB, 0xBF}, simpleFolded...),
		"crlf.txt": []byte(strings.ReplaceAll(simpleFolded, "\n", "\r\n")),
	} {
		path := writeTemp(t, name, data)
		l := mustLoad(t, path, Options{})
		if l.Format != "folded" || l.Kind != KindUnknown || len(l.Warnings) != 0 {
			t.Errorf("%s: Format %q Kind %q warnings %q", name, l.Format, l.Kind, l.Warnings)
		}
		if got := foldedSummary(l.Profile); got != simpleWant {
			t.Errorf("%s: got\n%s", name, got)
		}
	}
}

func TestParseFoldedSpacesInFrames(t *testing.T) {
	data := "java;Foo.bar(int, long);do some work 12\n" +
		"Thread (4101);System.Private.CoreLib!System.Threading.Thread.StartCallback;CPU_TIME 180\n" +
		"a b c;d e 7\n" +
		"[unknown];x y 2.6\n" // fractional weights are rounded
	p, warns := parseFolded(t, []byte(data))
	if len(warns) != 0 {
		t.Errorf("warnings %q", warns)
	}
	want := strings.Join([]string{
		"Thread (4101);System.Threading.Thread.StartCallback;CPU_TIME 180",
		"[unknown];x y 3",
		"a b c;d e 7",
		"java;Foo.bar(int, long);do some work 12",
	}, "\n")
	if got := foldedSummary(p); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestParseFoldedWarnings(t *testing.T) {
	data := strings.Join([]string{
		"# captured by a tool",              // 1
		"main;a 1",                          // 2
		"this line has no count at the end", // 3
		"main;b x12",                        // 4
		"main;;c 3",                         // 5
		"main;a 2",                          // 6
		"nocount",                           // 7
		"main;d -4",                         // 8
		"   # indented comment",             // 9
		"main;e NaN",                        // 10
		"main;f inf",                        // 11
		"main;g 1e300",                      // 12
		"main;h 0x10",                       // 13
		"main;i 5",                          // 14
		"main;j 6",                          // 15
		"main;k 7",                          // 16
		"main;l 8",                          // 17
		"main;m 9",                          // 18
		"main;n 10",                         // 19
		"main;o 11",                         // 20
		"main;p 12",                         // 21
		"main;q 13",                         // 22
	}, "\n")
	p, warns := parseFolded(t, []byte(data))
	want := []string{
		"line 1: skipped comment line",
		`line 3: sample count "end" is not a number`,
		`line 4: sample count "x12" is not a number`,
		"line 7: no sample count after the stack",
		"line 8: negative sample count -4",
		"line 9: skipped comment line",
		`line 10: sample count "NaN" is not a number`,
		"3 more malformed line(s) skipped",
	}
	if strings.Join(warns, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
	}
	if len(p.Sample) != 11 { // main;a twice, and main;;c with a blank frame
		t.Errorf("%d samples, want 11", len(p.Sample))
	}
	for _, s := range p.Sample {
		if s.Value[0] <= 0 {
			t.Errorf("sample %q has value %d", funcNames(s), s.Value[0])
		}
	}

	// The rejected counts, one per file, each named.
	for count, msg := range map[string]string{
		"NaN":                  `sample count "NaN" is not a number`,
		"+Inf":                 `sample count "+Inf" is not a number`,
		"1e300":                "sample count 1e300 is too large",
		"99999999999999999999": "sample count 99999999999999999999 is too large",
		"0x1p4":                `sample count "0x1p4" is not a number`,
		"1_000":                `sample count "1_000" is not a number`,
		"-2":                   "negative sample count -2",
		"-2.5":                 "negative sample count -2.5",
	} {
		_, warns, err := ParseFolded([]byte("a;b " + count + "\nok 1\nok 2\n"))
		if err != nil {
			t.Errorf("%s: %v", count, err)
		}
		if len(warns) != 1 || warns[0] != "line 1: "+msg {
			t.Errorf("%s: warnings %q, want %q", count, warns, "line 1: "+msg)
		}
	}
}

func TestParseFoldedComments(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 8; i++ {
		b.WriteString("# comment\n")
	}
	b.WriteString("a;b 1\n")
	_, warns := parseFolded(t, []byte(b.String()))
	if len(warns) != 6 || warns[5] != "3 more comment line(s) skipped" {
		t.Errorf("warnings %q", warns)
	}
}

func TestParseFoldedErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"empty", "", "no samples"},
		{"comments only", "# a\n# b\n", "no samples"},
		{"zero counts", "a;b 0\n", "every stack has count 0"},
		{"no valid line", "hello\nworld\n", "no valid folded-stack line (2 malformed; first at line 1: no sample count after the stack)"},
		{"mostly prose", "a;b 1\nsome prose\nmore prose\n", "not folded stacks: 2 of 3 lines malformed"},
		{"latin-1", "caf\xe9 1\n", "not UTF-8"},
		{"odd UTF-16", "\xff\xfea\x00 ", "odd number of bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := ParseFolded([]byte(tc.data))
			if err == nil {
				t.Fatalf("parsed %d samples, want an error", len(p.Sample))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
	// Half malformed is still folded (speedscope's simple-with-invalids).
	if _, _, err := ParseFolded([]byte("a;b 1\nbad line\n")); err != nil {
		t.Errorf("one of two lines malformed: %v", err)
	}
}

func TestParseFoldedModules(t *testing.T) {
	data := "app.exe!Main;System.Private.CoreLib!System.Threading.Thread.Start;ntdll!RtlUserThreadStart 5\n" +
		"app.exe!Main;app.exe!Helper 2\n" +
		"Thread (12)!x;a b!c;!bang;tail! 1\n"
	p, _ := parseFolded(t, []byte(data))
	maps := map[string]bool{}
	for _, m := range p.Mapping {
		maps[m.File] = true
		if !m.HasFunctions {
			t.Errorf("mapping %s: HasFunctions false", m.File)
		}
	}
	if len(p.Mapping) != 3 || !maps["app.exe"] || !maps["System.Private.CoreLib"] || !maps["ntdll"] {
		t.Errorf("mappings %v, want app.exe, System.Private.CoreLib, ntdll", maps)
	}
	byName := map[string]*pprofile.Location{}
	for _, loc := range p.Location {
		byName[loc.Line[0].Function.Name] = loc
	}
	for name, module := range map[string]string{
		"Main": "app.exe", "Helper": "app.exe", "System.Threading.Thread.Start": "System.Private.CoreLib", "RtlUserThreadStart": "ntdll",
		"Thread (12)!x": "", "a b!c": "", "!bang": "", "tail!": "",
	} {
		loc := byName[name]
		if loc == nil {
			t.Errorf("no function %q", name)
			continue
		}
		got := ""
		if loc.Mapping != nil {
			got = loc.Mapping.File
		}
		if got != module {
			t.Errorf("%s: mapping %q, want %q", name, got, module)
		}
	}
	// One Main location shared by both stacks.
	if got := foldedSummary(p); !strings.Contains(got, "Main;Helper 2") {
		t.Errorf("got\n%s", got)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := pprofile.Parse(&buf); err != nil {
		t.Errorf("round trip: %v", err)
	}
}

// TestParseFoldedTallStack checks a single stack line longer than
// bufio.Scanner's default 64 KiB token (pprof's legacy parsers choke on it).
func TestParseFoldedTallStack(t *testing.T) {
	frames := make([]string, 20000)
	for i := range frames {
		frames[i] = fmt.Sprintf("f%d", i%50)
	}
	line := strings.Join(frames, ";") + " 3\n"
	path := writeTemp(t, "tall.folded", []byte(line+"main 1\n"))
	l := mustLoad(t, path, Options{})
	if l.Format != "folded" || len(l.Profile.Sample) != 2 {
		t.Errorf("Format %q, %d samples", l.Format, len(l.Profile.Sample))
	}
	if n := len(l.Profile.Sample[0].Location); n != 20000 {
		t.Errorf("tall stack has %d locations", n)
	}
	if n := len(l.Profile.Location); n != 51 {
		t.Errorf("%d locations, want 51 (frames are shared)", n)
	}
}

// TestParseFoldedBlankFrame: a blank frame, between two others or at the
// leaf (stackcollapse-perf.pl writes `…;write0_[j];  3` for a frame perf
// printed without a symbol), is kept under the name [blank], so the stack
// counts in the total; stacks differing only in the blank's spacing are one.
func TestParseFoldedBlankFrame(t *testing.T) {
	p, warns := parseFolded(t, []byte("main;;c 3\nmain;write0_[j];  4\nmain;write0_[j]; 1\nmain;c 2\n"))
	if len(warns) != 0 {
		t.Errorf("warnings %q, want none", warns)
	}
	got := map[string]int64{}
	for _, s := range p.Sample {
		got[strings.Join(funcNames(s), "<")] += s.Value[0]
	}
	want := map[string]int64{"c<[blank]<main": 3, "[blank]<write0_[j]<main": 5, "c<main": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stacks %v, want %v", got, want)
	}
	if n := len(p.Function); n != 4 {
		t.Errorf("%d functions, want 4 (main, c, write0_[j], [blank])", n)
	}
}

// TestParseFoldedBlankFrameCorpus reads the corpus's vert.x stacks folded by
// stackcollapse-perf.pl, one of whose lines ends in a blank frame: the
// total is the sum of every line's count.
func TestParseFoldedBlankFrameCorpus(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpus.Need(t), "flamegraph", "test__results__perf-vertx-stacks-01-collapsed-all.txt"))
	if err != nil {
		t.Skipf("corpus file absent: %v", err)
	}
	var want int64
	blank := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sp := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[sp+1:], 10, 64)
		if err != nil {
			t.Fatalf("corpus line %q: %v", line, err)
		}
		want += n
		if strings.HasSuffix(strings.TrimSpace(line[:sp]), ";") {
			blank++
		}
	}
	if blank == 0 {
		t.Fatal("the corpus file has no blank leaf frame any more")
	}
	p, warns := parseFolded(t, data)
	var total int64
	blanks := 0
	for _, s := range p.Sample {
		total += s.Value[0]
		if funcNames(s)[0] == blankFrame {
			blanks++
		}
	}
	if total != want || blanks != blank || len(warns) != 0 {
		t.Errorf("total %d, %d [blank] leaves, warnings %q; want %d, %d, none", total, blanks, warns, want, blank)
	}
}
