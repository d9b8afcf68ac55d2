package sink

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile are names that try to act on a terminal or break a line.
var hostile = map[string]string{
	"clear":     "a\x1b[2Jb",
	"osc52":     "\x1b]52;c;ZXZpbA==\x07x",
	"osc8":      "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"cr":        "grow\rshrink",
	"backspace": "main.big\b\b\bsmall",
	"newline":   "a\nb",
	"del":       "a\x7fb",
	"c1csi":     "a\u009b2Jb",
	"notutf8":   "a\x9b2J\xffb",
	"bidi":      "main.\u202eevil\u202c.\u2066x\u2069\u200f",
	"separator": "a\u2028b\u2029c",
	"nul":       "a\x00b",
}

// TestTerminalLeavesNoControls writes each hostile name and wants no
// byte a terminal acts on: no C0 control but tab, no DEL, no C1 (as a
// byte or a character), no bidi control, valid UTF-8.
func TestTerminalLeavesNoControls(t *testing.T) {
	for name, s := range hostile {
		out := Terminal(s)
		if err := controls(out); err != "" {
			t.Errorf("%s: Terminal(%q) = %q: %s", name, s, out, err)
		}
	}
	for in, want := range map[string]string{
		"a\x1b[2Jb":      `a\x1b[2Jb`,
		"a\nb\rc\td":     `a\nb\rc` + "\td",
		"a\u202eb":       `a\u202eb`,
		"a\x9bb\u009bc":  `a\x9bb\u009bc`,
		`C:\dir\f.pb.gz`: `C:\dir\f.pb.gz`,
		"héllo 世界 <>|":   "héllo 世界 <>|",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

// controls says what in s would act on a terminal, or "".
func controls(s string) string {
	if !utf8.ValidString(s) {
		return "not UTF-8"
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || unsafe(r) {
			return "has " + string(r)
		}
	}
	return ""
}

func TestTerminalPlainAllocatesNothing(t *testing.T) {
	s := "github.com/profdiff/profdiff/diff.(*Analyzer).Run[...]·héllo"
	if n := testing.AllocsPerRun(100, func() { _ = Terminal(s) }); n != 0 {
		t.Errorf("Terminal of a plain name allocates %v times", n)
	}
}

// TestMarkdownCodeStaysInItsCell wants every name as one code span on
// one line whose only pipes are escaped ones.
func TestMarkdownCodeStaysInItsCell(t *testing.T) {
	names := []string{"a|b", `a\|b`, `a\\|b`, "a`b``c", "<img src=x onerror=alert(1)>", "a\nb|c\r", "x\\"}
	for _, s := range hostile {
		names = append(names, s)
	}
	for _, s := range names {
		out := MarkdownCode(s)
		if strings.ContainsAny(out, "\n\r") || controls(out) != "" {
			t.Errorf("MarkdownCode(%q) = %q ends the row", s, out)
		}
		if strings.Count(out, "`") != 2 || !strings.HasPrefix(out, "`") || !strings.HasSuffix(out, "`") {
			t.Errorf("MarkdownCode(%q) = %q is not one code span", s, out)
		}
		// GitHub splits a row at each pipe not escaped by a backslash,
		// a backslash escaping the character after it.
		for i := 0; i < len(out); i++ {
			switch out[i] {
			case '\\':
				i++
			case '|':
				t.Errorf("MarkdownCode(%q) = %q has an unescaped pipe at %d", s, out, i)
			}
		}
	}
}

func TestMarkdownText(t *testing.T) {
	for in, want := range map[string]string{
		"a.pb.gz":                   "a.pb.gz",
		"<img src=x>":               `\<img src=x\>`,
		"[a](https://evil.example)": `\[a\](https://evil.example)`,
		"a|b\n**c**":                `a\|b\\n**c**`,
	} {
		if got := MarkdownText(in); got != want {
			t.Errorf("MarkdownText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCSVNeutralisesFormulas wants every cell a spreadsheet would
// evaluate prefixed with a quote, and others untouched.
func TestCSVNeutralisesFormulas(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://evil.example","x")`: `'=HYPERLINK("http://evil.example","x")`,
		"+1+cmd|' /C calc'!A0":                  "'+1+cmd|' /C calc'!A0",
		"-2+3":                                  "'-2+3",
		"@SUM(A1)":                              "'@SUM(A1)",
		"\t=1":                                  "'\t=1",
		"\r=1":                                  "'\r=1",
		"main.work":                             "main.work",
		"":                                      "",
		"-":                                     "-",
		"+1pp":                                  "+1pp",
		"-12.5x":                                "-12.5x",
		"+3%":                                   "+3%",
		"-1+1":                                  "'-1+1",
		"+1pp()":                                "'+1pp()",
		"-.5":                                   "'-.5",
		"+A1":                                   "'+A1",
		"a=b":                                   "a=b",
	} {
		if got := CSV(in); got != want {
			t.Errorf("CSV(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCut(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	got := Cut(long, MaxName)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "… (6000 bytes)") || len(got) > MaxName+len("… (6000 bytes)") {
		t.Errorf("Cut: %d bytes, ends %q", len(got), got[len(got)-20:])
	}
	if Cut("short", MaxName) != "short" {
		t.Error("Cut changed a short name")
	}
}

// TestWriterKeepsLines wants messages written through Writer to keep
// their lines and tabs and lose every other control.
func TestWriterKeepsLines(t *testing.T) {
	var b strings.Builder
	w := Writer{W: &b}
	for _, s := range hostile {
		fmt.Fprintf(w, "profdiff: warning:\t%s\n", s)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n != len(hostile)+1 { // "newline" keeps its own
		t.Errorf("%d lines, want %d:\n%s", n, len(hostile)+1, out)
	}
	if err := controls(strings.NewReplacer("\n", "", "\t", "").Replace(out)); err != "" {
		t.Errorf("Writer let through a control: %s\n%q", err, out)
	}
}

// TestJSONSameDocument wants JSON to write DEL, C1 and bidi controls as
// escapes, and the document to decode to the same value.
func TestJSONSameDocument(t *testing.T) {
	v := map[string]string{"name": "a\x1b[2J\u009b2J\u202eevil\u2066\x7fé世界", "plain": "main.work"}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(b)
	if err := controls(string(out)); err != "" {
		t.Errorf("JSON(%s) = %s: %s", b, out, err)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["name"] != v["name"] || back["plain"] != v["plain"] {
		t.Errorf("JSON(%s) = %s decodes to %q (%v)", b, out, back, err)
	}
	if !strings.Contains(string(out), `\u009b2J\u202eevil\u2066\u007fé世界`) {
		t.Errorf("JSON = %s", out)
	}
	plain := []byte(`{"a": "b → é 世界"}`)
	if n := testing.AllocsPerRun(100, func() { _ = JSON(plain) }); n != 0 {
		t.Errorf("JSON of a document with nothing to escape allocates %v times", n)
	}
}
