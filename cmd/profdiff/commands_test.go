package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/profile"
)

// Every command has help, from 'profdiff help NAME' and from 'profdiff
// NAME --help' (or -h), on stdout, with its synopsis and its flags.
func TestHelpForEveryCommand(t *testing.T) {
	for _, c := range commands() {
		args := strings.Fields(c.name)
		out, stderr, code := profdiff(t, "", append([]string{"help"}, args...)...)
		if code != 0 || !strings.HasPrefix(out, "Usage:\n"+wrapHelp(c.synopsis, 80)) || stderr != "" {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q", c.name, code, out, stderr)
		}
		help := out
		for _, h := range []string{"--help", "-h"} {
			out, stderr, code = profdiff(t, "", append(args, h)...)
			if code != 0 || out != help || stderr != "" {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want what help %[1]s prints", c.name, h, code, out, stderr)
			}
		}
		if c.name != "help" && c.name != "version" && !regexp.MustCompile(`\n(Flags|\w+ flags):\n +-`).MatchString(out) {
			t.Errorf("%s --help lists no flags:\n%s", c.name, out)
		}
	}
	// A command with subcommands: help for all of them.
	out, _, code := profdiff(t, "", "help", "workload")
	if code != 0 || !strings.Contains(out, "profdiff workload json") || !strings.Contains(out, "profdiff workload wasm") {
		t.Errorf("help workload: exit %d:\n%s", code, out)
	}
}

// The usage text lists every command of the table, and so does the
// package documentation (the manual).
func TestUsageListsEveryCommand(t *testing.T) {
	out, _, code := profdiff(t, "", "help")
	if code != 0 || out != usageText() {
		t.Fatalf("help: exit %d:\n%s", code, out)
	}
	if o2, _, _ := profdiff(t, "", "--help"); o2 != out {
		t.Errorf("--help differs from help:\n%s", o2)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	// The usage wraps summaries to 80 columns; the package doc has each
	// on one line.
	flat := strings.Join(strings.Fields(out), " ")
	// So does it every format profdiff reads, from the format registry.
	if reads := profile.ReadsList(); !strings.Contains(flat, "a format profdiff reads ("+reads+";") {
		t.Errorf("the usage does not list the formats profdiff reads (%s)", reads)
	}
	for _, c := range commands() {
		for _, l := range c.lines {
			if !strings.Contains(out, "  profdiff "+l.synopsis+" ") || !strings.Contains(flat, l.summary+" ") {
				t.Errorf("usage lacks %q: %s", l.synopsis, l.summary)
			}
			if line := fmt.Sprintf("//\t%-42s%s\n", "profdiff "+l.synopsis, l.summary); !strings.Contains(string(src), line) {
				t.Errorf("the package doc lacks the usage line %q", line)
			}
		}
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	all := "(commands: diff, top, series, gate, wait, symbolize, rules, formats, demo, workload, load, sources, capture, version, help)"
	for _, c := range []struct{ typed, want string }{
		{"dif", `unknown command "dif"; did you mean diff? ` + all},
		{"gaet", "did you mean gate?"},
		{"captur", "did you mean capture?"},
		{"lod", "did you mean load?"},
		{"Top", "did you mean top?"},
		{"workloads", "did you mean workload?"},
		{"frobnicate", `unknown command "frobnicate" ` + all},
	} {
		_, stderr, code := profdiff(t, "", c.typed)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.HasSuffix(stderr, "\nRun 'profdiff --help' for usage.\n") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.typed, code, stderr, c.want)
		}
	}
	if _, stderr, code := profdiff(t, "", "help", "dif"); code != 2 || !strings.Contains(stderr, "did you mean diff?") {
		t.Errorf("help dif: exit %d, %q", code, stderr)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"diff", "diff", 0}, {"dif", "diff", 1}, {"gaet", "gate", 2}, {"", "top", 3}, {"kitten", "sitting", 3}} {
		if d := editDistance(c.a, c.b); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// A subcommand is found after flags, and not by a flag's value.
func TestLookupSubcommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"workload", "json"}, "workload json"},
		{[]string{"workload", "wasm", "--format", "json"}, "workload wasm"},
		{[]string{"workload", "--format", "json", "wasm"}, "workload wasm"},
		{[]string{"workload", "--seconds", "2", "json"}, "workload json"},
		{[]string{"workload", "wasm", "--help"}, "workload wasm"},
		{[]string{"workload"}, "workload json"},
	} {
		cmd, err := lookup(c.args)
		if err != nil || cmd.name != c.want {
			t.Errorf("lookup(%q) = %v, %v; want %s", c.args, cmd, err, c.want)
		}
	}
}

// A command's usage errors point at its own help; a misspelt flag gets the
// nearest of the command's flags, an unknown short flag the list of them.
func TestUsageErrorsPointAtCommandHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--formt", "json", net10, net11}, "profdiff: diff: unknown flag: --formt; did you mean --format?\nRun 'profdiff diff --help' for usage.\n"},
		{[]string{"top", "--peak", "x", net10}, "top: unknown flag: --peak; did you mean --peek?\n"},
		{[]string{"gate", "--max-methods", "x=+1pp", net10, net11}, "did you mean --max-method?\n"},
		{[]string{"load", "--conections", "4", "http://127.0.0.1:1/"}, "did you mean --connections?\nRun 'profdiff load --help' for usage.\n"},
		{[]string{"workload", "wasm", "--keep", "0"}, "did you mean --keep-resident?\nRun 'profdiff workload wasm --help' for usage.\n"},
		{[]string{"capture", "--frobnicate", "http://127.0.0.1:1"}, "capture: unknown flag: --frobnicate\nRun 'profdiff capture --help' for usage.\n"},
		{[]string{"diff", "-x", net10, net11}, `diff: unknown shorthand flag: 'x' in -x (it has no short flags)`},
		{[]string{"load", "-x", "http://127.0.0.1:1/"}, `load: unknown shorthand flag: 'x' in -x (its short flags: -H (--header), -c (--connections), -d (--duration))`},
		{[]string{"diff", net10}, "diff: want two profiles (BASE NEW), got 1\nRun 'profdiff diff --help' for usage.\n"},
		{[]string{"workload", "json", "--variant", "nope"}, "Run 'profdiff workload json --help' for usage.\n"},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// A short flag means the same long flag in every command that has it, and
// each is one of the documented few.
func TestShortFlagsAgree(t *testing.T) {
	documented := map[string]string{"c": "connections", "d": "duration", "o": "out", "H": "header"}
	for _, c := range commands() {
		fs, _ := c.flagSet(nil)
		fs.VisitAll(func(f *flag.Flag) {
			if f.Shorthand == "" {
				return
			}
			if documented[f.Shorthand] != f.Name {
				t.Errorf("%s: -%s is --%s; -%[2]s means --%s everywhere", c.name, f.Shorthand, f.Name, documented[f.Shorthand])
			}
		})
		// Every command with a long flag of a documented short one has the
		// short one too.
		for short, long := range documented {
			if f := fs.Lookup(long); f != nil && f.Shorthand != short {
				t.Errorf("%s: --%s has no -%s", c.name, long, short)
			}
		}
	}
}

// A misspelt workload name gets the nearest one; words in any case.
func TestWorkloadNameAndWordsSuggest(t *testing.T) {
	_, stderr, code := profdiff(t, "", "workload", "jsn")
	if code != 2 || !strings.Contains(stderr, `no workload "jsn"; did you mean json?`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
	out, stderr, code := profdiff(t, "", "top", "--kind", "MUTEX", "--by", "Frame", "--top", "1", "../../testdata/dotnet/net10.folded")
	if code != 0 || !strings.Contains(out, "mutex profile") || !strings.Contains(out, "methods by frame") {
		t.Errorf("exit %d: %s%s", code, out, stderr)
	}
}

// A misspelt value of a flag with a fixed set of choices gets the nearest
// choice, as misspelt commands and flags do; a value near none gets the
// list alone.
func TestValueTyposSuggest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--format", "mardown", net10, net11}, "(want table, markdown, csv, json, html, github, svg, folded or difffolded); did you mean markdown?\n"},
		{[]string{"diff", "--kind", "mutx", net10, net11}, "; did you mean mutex?\n"},
		{[]string{"gate", "--max", "lock=+2pp", "--base", net10, "--new", net11}, `unknown bucket "lock" in threshold (want cpu, wait, lock-contention, gc, io, syscall or sync); did you mean lock-contention?`},
		{[]string{"gate", "--max", "syncc=+2pp", "--base", net10, "--new", net11}, "did you mean sync?"},
		{[]string{"diff", "--by", "calller", net10, net11}, "(want frame, decider or caller); did you mean caller?\n"},
		{[]string{"diff", "--normalize", "rat", net10, net11}, "did you mean rate?\n"},
		{[]string{"top", "--color", "alwys", net10}, "did you mean always?\n"},
		{[]string{"top", "--format", "JSN", net10}, "did you mean json?\n"},
		{[]string{"rules", "--runtime", "jmv"}, "did you mean jvm?\n"},
		{[]string{"workload", "json", "--variant", "global-lok"}, "did you mean global-lock?\n"},
		{[]string{"capture", "--profiles", "mutx", "--out", t.TempDir(), "http://127.0.0.1:1"}, "did you mean mutex?\n"},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if _, stderr, _ := profdiff(t, "", "diff", "--kind", "xyzzy", net10, net11); strings.Contains(stderr, "did you mean") {
		t.Errorf("--kind xyzzy suggests something: %s", stderr)
	}
}

// Every command's help fits 80 columns where the width is unknown (and a
// terminal's width where it is), groups its flags, and shows an example
// whose flags the command takes.
func TestHelpFits(t *testing.T) {
	for _, c := range commands() {
		out, _, code := profdiff(t, "", append(strings.Fields(c.name), "--help")...)
		if code != 0 {
			t.Fatalf("%s --help: exit %d", c.name, code)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("%s --help: a line of %d columns: %q", c.name, n, l)
			}
		}
		ex := examples[c.name]
		if len(ex) == 0 || !strings.Contains(out, "\nExample:\n  "+ex[0]) {
			t.Errorf("%s --help: no example:\n%s", c.name, out)
		}
		for _, e := range ex {
			words := strings.Fields(strings.ReplaceAll(e, "'", ""))
			fs, _ := c.flagSet(io.Discard)
			if words[0] != "profdiff" || strings.Join(words[1:1+len(strings.Fields(c.name))], " ") != c.name || fs.Parse(words[1+len(strings.Fields(c.name)):]) != nil {
				t.Errorf("%s: the example %q does not parse", c.name, e)
			}
		}
		if fs, _ := c.flagSet(io.Discard); fs.Lookup("format") != nil && !strings.Contains(out, "\nOutput flags:\n") {
			t.Errorf("%s --help: no output flags group:\n%s", c.name, out)
		}
	}
	if out, _, _ := profdiff(t, "", "diff", "--help"); !strings.Contains(out, "\nInput flags:\n") || !strings.Contains(out, "\nClassification flags:\n") {
		t.Errorf("diff --help: flags not grouped:\n%s", out)
	}
	for _, l := range strings.Split(usageText(), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("usage: a line of %d columns: %q", n, l)
		}
	}
}
