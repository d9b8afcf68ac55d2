// Package golden is a test helper: it compares output with golden files in
// testdata/, named after the command and flags that produce them, and
// `go test -update` rewrites them. On a mismatch it prints a unified diff
// of the golden file (---) against the output (+++), not both files whole.
//
// It lives at the module root, not under diff/, because the workloads
// tests check their sweep tables against golden files too.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with testdata/name, or writes it there when update
// is set. pkg names the package in the hint printed on a mismatch
// ("./diff/render").
func Check(t testing.TB, pkg, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
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
