package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile"
)

// TestFormatsCommand checks `profdiff formats` lists the registry's
// formats, in its order, with their record commands, kinds and limits, in
// JSON and Markdown.
func TestFormatsCommand(t *testing.T) {
	want := profile.Formats()
	out, stderr, code := profdiff(t, "", "formats", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []struct {
		Format, Description string
		Record, Kinds       []string
		Blind               string `json:"cannot_tell"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d formats, want %d: %s", len(rows), len(want), out)
	}
	for i, r := range rows {
		w := want[i]
		if r.Format != string(w.Format) || r.Description != w.Description || strings.Join(r.Record, "\n") != strings.Join(w.Record, "\n") || len(r.Kinds) != len(w.Kinds) || r.Blind != w.Blind {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	md, _, code := profdiff(t, "", "formats", "--format", "markdown")
	if code != 0 {
		t.Fatalf("markdown: exit %d", code)
	}
	for _, f := range want {
		if !strings.Contains(md, "\n| `"+string(f.Format)+"` ") {
			t.Errorf("markdown has no row for %s:\n%s", f.Format, md)
		}
	}
	// A pipe inside a record command stays inside its cell.
	if !strings.Contains(md, "`perf script \\| stackcollapse-perf.pl`") {
		t.Errorf("folded's record command is not escaped:\n%s", md)
	}
	if _, stderr, code := profdiff(t, "", "formats", "x"); code != 2 || !strings.Contains(stderr, `formats: unexpected argument "x"`) {
		t.Errorf("formats x: exit %d: %s", code, stderr)
	}
}

// The Node.js formats profdiff does not read, recorded by node, fail with
// exit 2 and a sentence saying what to record instead.
func TestNodeRefusals(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	dir := t.TempDir()
	cmd := exec.Command(node, "--heap-prof", "--heap-prof-dir="+dir, "--prof", "-e", "let a = []; for (let i = 0; i < 1e5; i++) a.push({i})")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	for pattern, want := range map[string]string{
		"*.heapprofile": "which holds allocated bytes, not time (record CPU time with `node --cpu-prof`",
		"isolate-*.log": "(record with `node --cpu-prof` instead, which writes a .cpuprofile, or summarize the log with `node --prof-process`)",
	} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		if len(m) != 1 {
			t.Fatalf("node wrote %q for %s", m, pattern)
		}
		_, stderr, code := profdiff(t, "", "top", m[0])
		if code != 2 || !strings.Contains(stderr, m[0]+": unknown format: ") || !strings.Contains(stderr, want) {
			t.Errorf("top %s: exit %d: %s", pattern, code, stderr)
		}
	}
}
