package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/render"
)

func TestColorOn(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	for _, c := range []struct {
		mode    string
		tty     bool
		noColor string
		want    bool
	}{
		{"auto", true, "", true},
		{"auto", true, "1", false},
		{"auto", false, "", false},
		{"Auto", true, "", true},
		{"always", false, "1", true},
		{"never", true, "", false},
	} {
		got, err := colorOn(c.mode, c.tty, env(c.noColor))
		if err != nil || got != c.want {
			t.Errorf("colorOn(%q, tty %v, NO_COLOR=%q) = %v, %v; want %v", c.mode, c.tty, c.noColor, got, err, c.want)
		}
	}
	if _, err := colorOn("yes", true, env("")); err == nil || !strings.Contains(err.Error(), `"yes" is not auto, always or never`) {
		t.Errorf("colorOn(yes): %v", err)
	}
}

func TestParseFormatOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		have []render.Format
		want render.Format
		err  string
	}{
		{"JSON", render.Formats, render.JSON, ""},
		{"Markdown", textAndJSON, render.Markdown, ""},
		{"text", textAndJSON, render.Table, ""},
		{"csv", textAndJSON, "", "x: --format: this report has no csv form (want table, markdown or json)"},
		{"xml", render.Formats, "", `x: --format: unknown format "xml" (want table, markdown, csv, json or html)`},
		{"markdown", captureFormat, "", "(want table or json)"},
	} {
		got, err := parseFormatOf("x", c.in, c.have)
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) || c.err == "" && (err != nil || got != c.want) {
			t.Errorf("parseFormatOf(%q, %v) = %q, %v; want %q, %q", c.in, c.have, got, err, c.want, c.err)
		}
	}
}

// --format takes the same words in every command, in any case; a command
// whose report lacks a format says which it has; --width and --color are
// checked.
func TestFormatFlagEverywhere(t *testing.T) {
	out, stderr, code := profdiff(t, "", "diff", "--format", "JSON", net10, net11)
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Errorf("diff --format JSON: exit %d, %s\n%.200s", code, stderr, out)
	}
	if out, _, code := profdiff(t, "", "rules", "--format", "CSV"); code != 0 || !strings.HasPrefix(out, "runtime,") && !strings.Contains(strings.SplitN(out, "\n", 2)[0], ",") {
		t.Errorf("rules --format CSV: exit %d\n%.200s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--format", "csv", "http://127.0.0.1:1/"}, "load: --format: this report has no csv form (want table, markdown or json)"},
		{[]string{"workload", "json", "--format", "csv"}, "workload json: --format: this report has no csv form"},
		{[]string{"workload", "wasm", "--format", "xml"}, `workload wasm: --format: unknown format "xml"`},
		{[]string{"capture", "--format", "markdown", "--out", "x", "http://127.0.0.1:1"}, "capture: --format: this report has no markdown form (want table or json)"},
		{[]string{"demo", "--format", "yaml"}, `demo: --format: unknown format "yaml" (want table, markdown, csv, json or html)`},
		{[]string{"top", "--width", "-5", net10}, "top: --width must be 0 (unlimited) or positive, not -5"},
		{[]string{"gate", "--color", "sometimes", net10, net11}, `gate: --color: "sometimes" is not auto, always or never`},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// --width N keeps every line of diff, top, gate and rules within N
// columns; --color always colours the table, and a buffer (not a
// terminal) gets no colour by default.
func TestWidthAndColorFlags(t *testing.T) {
	for _, args := range [][]string{
		{"diff", net10, net11},
		{"top", net11},
		{"gate", "--max", "lock-contention=+2pp", net10, net11},
		{"rules"},
		{"formats"},
	} {
		wide, _, _ := profdiff(t, "", args...)
		if widest(wide) <= 100 {
			t.Fatalf("%q is already within 100 columns; the check would prove nothing", args)
		}
		out, stderr, code := profdiff(t, "", append(args, "--width", "100")...)
		if code == 2 || out == "" {
			t.Fatalf("%q --width 100: exit %d: %s", args, code, stderr)
		}
		if w := widest(out); w > 100 {
			t.Errorf("%q --width 100: a line of %d columns:\n%s", args, w, out)
		}
		if strings.Contains(out, "\x1b[") || strings.Contains(wide, "\x1b[") {
			t.Errorf("%q: colour on a buffer without --color", args)
		}
	}
	out, _, _ := profdiff(t, "", "diff", "--color", "always", net10, net11)
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("diff --color always has no colour:\n%s", out)
	}
}

// widest is the width of the longest line of s, in display columns (the
// tables' box-drawing characters are one column each).
func widest(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, displayWidth(l))
	}
	return w
}
