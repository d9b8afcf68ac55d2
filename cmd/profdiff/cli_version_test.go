package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/profdiff/profdiff", Version: "v1.2.0"},
		Settings: []debug.BuildSetting{
			{Key: "-compiler", Value: "gc"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "4b11057a9c0e1f2d3c4b5a69788796a5b4c3d2e1"},
			{Key: "vcs.time", Value: "2026-12-01T20:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}
	want := "profdiff github.com/profdiff/profdiff v1.2.0, revision 4b11057a9c0e1f2d3c4b5a69788796a5b4c3d2e1+dirty (2026-12-01T20:00:00Z), go1.26.0"
	if got := versionLine(bi); got != want {
		t.Errorf("versionLine =\n%s\nwant\n%s", got, want)
	}
	bi.Settings[4].Value = "false"
	if got := versionLine(bi); strings.Contains(got, "dirty") || !strings.Contains(got, "revision 4b11057a9c0e1f2d3c4b5a69788796a5b4c3d2e1 (") {
		t.Errorf("clean tree: %s", got)
	}
	// A test binary: no main module, no VCS.
	if got := versionLine(&debug.BuildInfo{GoVersion: "go1.26.1"}); got != "profdiff github.com/profdiff/profdiff (devel), no VCS revision recorded, go1.26.1" {
		t.Errorf("no VCS: %s", got)
	}
}

// 'profdiff --version' and 'profdiff version' print the one line on
// stdout and exit 0.
func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, stderr, code := profdiff(t, "", args...)
		if code != 0 || stderr != "" || !strings.HasPrefix(out, "profdiff github.com/profdiff/profdiff ") || !strings.HasSuffix(out, ", "+runtime.Version()+"\n") || strings.Count(out, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	if _, stderr, code := profdiff(t, "", "version", "extra"); code != 2 || !strings.Contains(stderr, `version: unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d, %q", code, stderr)
	}
}
