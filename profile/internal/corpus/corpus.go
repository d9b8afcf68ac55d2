// Package corpus finds the shared corpus of real profiles for tests: the
// folder ../shared/corpus next to the module root. Tests that use it skip
// when it is absent; its files are never copied into the repository.
package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the corpus folder, found from the working directory upwards
// (the module root is the folder holding go.mod), or "" when there is none.
func Dir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(c, "index.tsv")); err != nil {
		return ""
	}
	return c
}

// Need returns the corpus folder, or skips the test with a one-line reason
// when it is absent (a fresh clone has no ../shared beside it).
func Need(tb testing.TB) string {
	tb.Helper()
	dir := Dir()
	if dir == "" {
		tb.Skip("no ../shared/corpus beside the module: corpus test skipped")
	}
	return dir
}
