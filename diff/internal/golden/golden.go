// Package golden is a test helper: it compares output with golden files in
// testdata/, named after the command and flags that produce them, and
// `go test -update` rewrites them. On a mismatch it prints a unified diff
// of the golden file (---) against the output (+++), not both files whole.
//
// Every renderer's golden files are checked from tests under diff/ (the
// workloads' sweep and load tables from diff/render's external tests), so
// the helper is internal to diff.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that checks golden
// files: `go test ./diff/... -update` rewrites them.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Check compares got with testdata/name, or writes it there under -update.
// pkg names the package in the hint printed on a mismatch ("./diff/render").
func Check(t testing.TB, pkg, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test %s -update to create it)", err, pkg)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test %s -update rewrites it):\n%s",
			name, pkg, Unified(path, "got", string(want), string(got)))
	}
}
