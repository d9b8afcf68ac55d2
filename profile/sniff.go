package profile

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Formats that profdiff does not read are recognized by their content so
// that they fail with an error naming them, rather than being half-read as
// folded stacks (a JSON line such as `"samples": 145` looks like a one-frame
// stack) or reported as some vague parse failure.

// unsupported is the error for a recognized format that cannot be loaded.
func unsupported(what string) error {
	return fmt.Errorf("unknown format: %s; profdiff reads %s", what, ReadsList())
}

// sniffUnsupportedBinary names a known binary format that is not a profile
// profdiff reads, or returns "".
func sniffUnsupportedBinary(data []byte) string {
	head := data[:min(len(data), 64)]
	switch {
	case bytes.HasPrefix(head, []byte("go 1.")) && bytes.Contains(head, []byte(" trace\x00")):
		// Parse reads what gotrace.Looks accepts before it gets here.
		return "Go execution trace with a malformed header"
	case bytes.Contains(head, []byte("!FastSerialization")):
		// Parse reads "Nettrace" files before it gets here.
		return ".NET EventPipe trace in the .netperf format of .NET Core 2.x (record again with a current dotnet-trace, which writes .nettrace)"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		// Parse unpacks one level of zip before it gets here.
		return "zip archive inside a zip archive (unzip it first)"
	case bytes.HasPrefix(head, []byte("PERFILE2")) || bytes.HasPrefix(head, []byte("PERFFILE")):
		return "perf.data file (fold it with `perf script | stackcollapse-perf.pl` first)"
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "ELF binary, not a profile"
	case bytes.HasPrefix(head, []byte("\x1f\x8b")):
		return "gzip stream inside two gzip layers"
	}
	return ""
}

// sniffUnsupportedText names a known text format that is not a profile
// profdiff reads, or returns "". It must never claim real folded stacks, so
// every test is one that a folded line cannot pass. ours says it is JSON of
// a format profdiff reads that its reader did not take (sniffJSON).
func sniffUnsupportedText(text string) (what string, ours bool) {
	text = strings.TrimPrefix(text, "\uFEFF")
	if what, ours := sniffJSON(text); what != "" {
		return what, ours
	}
	if what := sniffHTML(text, ""); what != "" {
		return what, false
	}
	head := text[:min(len(text), 64<<10)]
	first := firstLines(head, 20)
	if len(first) > 0 && numSymbolsRE.MatchString(first[0]) {
		// A one-frame folded stack to the folded reader; no writer of
		// folded stacks names a frame so.
		return "/debug/pprof/symbol output, not a profile", false
	}
	for _, l := range first {
		if foldedCountRE.MatchString(l) {
			continue // could be a stack with its count
		}
		switch {
		case goroutineDumpRE.MatchString(l):
			return "goroutine dump (a traceback, or /debug/pprof/goroutine?debug=2), not a profile; /debug/pprof/goroutine without debug=2 is one", false
		case strings.HasPrefix(l, "Trace Go1."):
			return "Go execution trace in text form (open the binary form with `go tool trace`)", false
		case strings.HasPrefix(l, "v8-version,"):
			// Its ticks are code addresses that only V8's own log
			// processor, with the code events logged beside them, maps
			// to functions.
			return "V8 --prof log (isolate-*.log of `node --prof`), raw ticks that only V8 can resolve (record with `node --cpu-prof` instead, which writes a .cpuprofile, or summarize the log with `node --prof-process`)", false
		case strings.Contains(l, "Time and Allocation Profiling Report") || strings.HasPrefix(l, "COST CENTRE "):
			return "GHC cost-centre report (`+RTS -p` .prof text), a table, not stacks (fold it with stackcollapse-ghc or ghc-prof-flamegraph first)", false
		case l == "Flat profile:" || strings.HasPrefix(l, "Each sample counts as ") || l == "Call graph (explanation follows)":
			return "gprof report, a table, not stacks (record with `perf record -g` and fold `perf script` output instead)", false
		case cProfileRE.MatchString(l):
			return "Python cProfile/pstats report, a table, not stacks (`py-spy record -f raw` writes folded stacks)", false
		case perfReportRE.MatchString(l):
			return "`perf report` output, a table, not stacks (give profdiff `perf script` output, or fold it with stackcollapse-perf.pl)", false
		}
	}
	if looksPerfScript(head) {
		return "`perf script` output (fold it with `stackcollapse-perf.pl` or `inferno-collapse-perf` first)", false
	}
	return "", false
}

// sniffJSON recognizes a JSON document that no reader took (Chrome trace
// events and .cpuprofile, Firefox, stackprof, ...), complete or truncated,
// by decoding its first tokens, and names what it looks like; ours says
// it is a format profdiff reads, cut short or malformed (see
// describeJSON).
func sniffJSON(text string) (what string, ours bool) {
	t := strings.TrimLeft(text, " \t\r\n")
	if t == "" || (t[0] != '{' && t[0] != '[') || !jsonTokens(t) {
		return "", false
	}
	head := t[:min(len(t), 4096)]
	if strings.Contains(head, "speedscope.app/file-format-schema") {
		// The speedscope reader did not take it: a top-level array, or
		// the $schema after a value cut short.
		return "speedscope JSON, cut short or malformed: its $schema names speedscope, but it is not a speedscope object", true
	}
	return describeJSON(t, head)
}

// firstLines returns up to n non-blank lines of s, trimmed.
func firstLines(s string, n int) []string {
	var out []string
	for len(s) > 0 && len(out) < n {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

var (
	// A goroutine's header in a traceback: `goroutine 1 [running]:`.
	goroutineDumpRE = regexp.MustCompile(`^goroutine \d+ (gp=\S+ m=\S+ mp=\S+ )?\[[^\]]+\]:$`)
	// What GET /debug/pprof/symbol answers: `num_symbols: 1`.
	numSymbolsRE = regexp.MustCompile(`^num_symbols: \d+$`)
	// cProfile's summary line or its table's header.
	cProfileRE = regexp.MustCompile(`^\d+ function calls( \(\d+ primitive calls\))? in [0-9.]+ seconds$|^ncalls\s+tottime\s+percall\s+cumtime\s+percall\s+filename:lineno\(function\)$`)
	// perf report --stdio's column header: `# Overhead  Command ...` or
	// `# Children      Self  Command ...`.
	perfReportRE = regexp.MustCompile(`^# (Overhead|Children\s+Self)\s+(Command|Samples|Shared Object|Symbol)\b`)
	// The end of a folded line: whitespace and a count.
	foldedCountRE = regexp.MustCompile(`\s[0-9.eE+-]+$`)
	// A perf script event header: comm, pid[/tid], optional [cpu], time:
	// `java 12345/12346 [003] 2034.423940: 1 cycles:`.
	perfHeaderRE = regexp.MustCompile(`^\s*\S.*?\s\d+(/\d+)?\s+(\[\d+\]\s+)?\d+\.\d+:(\s|$)`)
	// A perf script stack frame: address, symbol, (dso); indented, or not
	// when the address is hex.
	perfFrameRE = regexp.MustCompile(`^(\s*[0-9a-fA-F]+|\s+\S+)\s+\S.*\(.*\)$`)
)

// looksPerfScript reports whether most lines of text (comments aside) are
// perf script event headers or frames. Neither kind of line is a valid
// folded line (a header ends in `event:` or event fields, a frame in
// `(dso)`), so this cannot turn away a file that would load as folded.
func looksPerfScript(text string) bool {
	perf, other := 0, 0
	for len(text) > 0 && perf+other < 1000 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		line = strings.TrimRight(line, "\r \t")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if perfHeaderRE.MatchString(line) || perfFrameRE.MatchString(line) {
			perf++
		} else {
			other++
		}
	}
	return perf > 0 && perf >= other
}
