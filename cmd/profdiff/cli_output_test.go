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
		{"xml", render.Formats, "", `x: --format: unknown format "xml" (want table, markdown, csv or json)`},
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
		{[]string{"demo", "--format", "yaml"}, `demo: --format: unknown format "yaml" (want table, markdown, csv or json)`},
		{[]string{"top", "--width", "-5", net10}, "top: --width must be 0 (unlimited) or positive, not -5"},
		{[]string{"gate", "--color", "sometimes", net10, net11}, `gate: --color: "sometimes" is not auto, always or never`},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
