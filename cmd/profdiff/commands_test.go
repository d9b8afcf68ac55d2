package main

import (
	"os"
	"strings"
	"testing"
)

// Every command has help, from 'profdiff help NAME' on stdout and from
// 'profdiff NAME --help' on stderr, with its synopsis and its flags.
func TestHelpForEveryCommand(t *testing.T) {
	for _, c := range commands() {
		args := strings.Fields(c.name)
		out, stderr, code := profdiff(t, "", append([]string{"help"}, args...)...)
		if code != 0 || !strings.HasPrefix(out, "Usage:\n"+c.synopsis) || stderr != "" {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q", c.name, code, out, stderr)
		}
		out, stderr, code = profdiff(t, "", append(args, "--help")...)
		if code != 0 || !strings.HasPrefix(stderr, "Usage:\n"+c.synopsis) || out != "" {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", c.name, code, out, stderr)
		}
		if c.name != "help" && !strings.Contains(stderr, "\nFlags:\n      --") && !strings.Contains(stderr, "\nFlags:\n  -") {
			t.Errorf("%s --help lists no flags:\n%s", c.name, stderr)
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
	all := "(commands: diff, top, gate, rules, demo, workload, load, capture, help)"
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
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "Run 'profdiff help' for usage.") {
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
