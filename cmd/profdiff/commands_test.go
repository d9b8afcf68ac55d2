package main

import (
	"os"
	"strings"
	"testing"

	flag "github.com/spf13/pflag"
)

// Every command has help, from 'profdiff help NAME' and from 'profdiff
// NAME --help' (or -h), on stdout, with its synopsis and its flags.
func TestHelpForEveryCommand(t *testing.T) {
	for _, c := range commands() {
		args := strings.Fields(c.name)
		out, stderr, code := profdiff(t, "", append([]string{"help"}, args...)...)
		if code != 0 || !strings.HasPrefix(out, "Usage:\n"+c.synopsis) || stderr != "" {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q", c.name, code, out, stderr)
		}
		help := out
		for _, h := range []string{"--help", "-h"} {
			out, stderr, code = profdiff(t, "", append(args, h)...)
			if code != 0 || out != help || stderr != "" {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want what help %[1]s prints", c.name, h, code, out, stderr)
			}
		}
		if c.name != "help" && c.name != "version" && !strings.Contains(out, "\nFlags:\n      --") && !strings.Contains(out, "\nFlags:\n  -") {
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
	for _, c := range commands() {
		for _, l := range c.lines {
			if !strings.Contains(out, "  profdiff "+l.synopsis+" ") || !strings.Contains(out, l.summary+"\n") {
				t.Errorf("usage lacks %q: %s", l.synopsis, l.summary)
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(strings.Split(out, "\n\n")[1]), "\n")[1:] {
		if !strings.Contains(string(src), "//\t"+strings.TrimSpace(line)+"\n") {
			t.Errorf("the package doc lacks the usage line %q", strings.TrimSpace(line))
		}
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	all := "(commands: diff, top, series, gate, symbolize, rules, formats, demo, workload, load, sources, capture, version, help)"
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
