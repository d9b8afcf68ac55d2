package perfscript

import (
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/corpus"
)

// longTests says whether the exhaustive variants run (PROFDIFF_TEST_LONG
// non-empty): more random lines in TestMatchHeaderIsHeaderRE.
func longTests() bool { return os.Getenv("PROFDIFF_TEST_LONG") != "" }

// numberRE is what isNumber matches.
var numberRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// headerLines are header-like lines: real ones, and the shapes whose
// groups are decided by backtracking.
var headerLines = []string{
	"java 24636/25607 [000] 4794564.109216:     250000 cycles:u:",
	"sh 14275  1246.296730:     250000 cpu-clock: ",
	"swapper     0 [000] 12345.678901: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=x next_pid=5 next_prio=120",
	"Web Content 1234/1240 [003] 1.5: 1 cycles:ppp:  ffffffff8103ce3b native_safe_halt ([kernel.kallsyms])",
	"comm 12 1.0: -5 cycles:",
	"  12 [1] 3: 4 e:",
	"a b 1 2 3 4 ev:",
	"1 2 3: x:",
	"x 12/ 5 e:",
	"x 12/-3 [7]x 9 e: f",
	"x 12 [7] e:",
	"perf 5 [000] 1.2.3: ev:",
	"12 :",
	"12 a::",
	"12 a: \t ",
	"tab\tname\t42\tev:\tfield\t",
	"x\v1 ev:",
	"x 1 ev:\v",
	"\xff 1 ev:",
	"x 1 \xffev:",
	"99999999999999999999 ev:",
	"",
	" ",
	"12",
	"12 ev",
}

// TestMatchHeaderIsHeaderRE holds matchHeader to headerRE's groups on
// headerLines, on every line of the corpus's perf script files, and on
// random lines made of header pieces: 20,000 of each kind, 100,000 with
// longTests.
func TestMatchHeaderIsHeaderRE(t *testing.T) {
	random := 20_000
	if longTests() {
		random = 100_000
	}
	matched, timed := 0, 0
	check := func(line string) {
		t.Helper()
		got, ok := matchHeader(line)
		if ok {
			matched++
			if got.time != "" {
				timed++
			}
		}
		m := headerRE.FindStringSubmatch(line)
		if ok != (m != nil) {
			t.Fatalf("%q: matchHeader ok %v, headerRE %v", line, ok, m != nil)
		}
		if !ok {
			return
		}
		want := headerFields{m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]}
		if got != want {
			t.Fatalf("%q:\nmatchHeader %#v\nheaderRE    %#v", line, got, want)
		}
		if isNumber(got.event) != numberRE.MatchString(got.event) {
			t.Fatalf("isNumber(%q) = %v", got.event, !numberRE.MatchString(got.event))
		}
	}
	for _, l := range headerLines {
		check(l)
	}
	if dir := corpus.Dir(); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*", "*perf*"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(data), "\n") {
				check(strings.TrimRight(l, "\r"))
			}
		}
	}
	pieces := []string{"java", "Web", "12", "4242", "-5", "0", "/", "[", "]", "[001]", ".", ".5", "1.5", ":", "::",
		" ", " ", " ", "  ", "\t", "\r", "\v", "\f", "cycles:u:", "cpu-clock:", "sched:sched_switch:", "ev", "x=1",
		"(", ")", "([kernel.kallsyms])", "ffffffff8103ce3b", "é", "\xff", "250000", "1246.296730:"}
	rng := rand.New(rand.NewSource(1))
	var sb strings.Builder
	for range random {
		sb.Reset()
		for range 1 + rng.Intn(12) {
			sb.WriteString(pieces[rng.Intn(len(pieces))])
		}
		check(sb.String())
	}
	// Header-shaped lines, each part present or not, some mutated.
	parts := [][]string{
		{"", " ", "\t"},
		{"", "java ", "Web Content ", "a 1 ", "12 ", "x:y "},
		{"12", "-1", "4242/4243", "1/-2", "1/", "x"},
		{" ", "  ", "\t", ""},
		{"", "[000] ", "[12]  ", "[x] ", "[1]"},
		{"", "1.5: ", "12: ", "1.5:", "1.: ", "1.2.3: "},
		{"", "250000 ", "-5 ", "0 ", "250000"},
		{"cycles:u:", "cpu-clock:", "ev", ":", "1.0:", "e::"},
		{"", " f=1", " \t", "  a (b)", "\r", ":"},
	}
	for range random {
		sb.Reset()
		for _, alts := range parts {
			if rng.Intn(10) == 0 {
				sb.WriteString(pieces[rng.Intn(len(pieces))])
				continue
			}
			sb.WriteString(alts[rng.Intn(len(alts))])
		}
		check(sb.String())
	}
	t.Logf("%d lines matched, %d with a time stamp", matched, timed)
	// The random lines must exercise the groups, not only fail.
	if matched < random*3/10 || timed < random/100 {
		t.Errorf("only %d lines matched, %d with a time stamp", matched, timed)
	}
	for _, s := range []string{"1", "12.5", "1.", ".5", "1.2.3", "", "a", "1a", "1.5a"} {
		if isNumber(s) != numberRE.MatchString(s) {
			t.Errorf("isNumber(%q) = %v", s, !numberRE.MatchString(s))
		}
	}
}

// TestHexValue holds hexValue to what strconv.ParseUint reads.
func TestHexValue(t *testing.T) {
	for _, s := range []string{"0", "ff", "FFFFffff", "0x1c", "0X1C", "0x0Xff", "", "0x", "g", "12g", "ffffffffffffffff",
		"10000000000000000", "0000000000000000000001", "7fffffffffffffff1", "-1", "+1", "1_0"} {
		v, ok := hexValue(s)
		trimmed := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		wantOK := trimmed != "" && strings.Trim(trimmed, "0123456789abcdefABCDEF") == ""
		want, err := strconv.ParseUint(trimmed, 16, 64)
		if err != nil {
			want = 0
		}
		if ok != wantOK || v != want {
			t.Errorf("hexValue(%q) = %#x, %v; want %#x, %v", s, v, ok, want, wantOK)
		}
	}
}
