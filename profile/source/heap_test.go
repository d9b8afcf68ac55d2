package source

import (
	"os"
	"path/filepath"
	"testing"
)

// heapHint counts the largest regular files Load holds at once,
// heapPerByte bytes each; what is not a regular file is left out.
func TestHeapHint(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c, d := file("a", 1000), file("b", 3000), file("c", 2000), file("d", 5000)
	missing := filepath.Join(dir, "missing")
	sides := [][]string{{a, b, missing}, {c, d, dir, "pyroscope://127.0.0.1:4040?query=x"}}
	for _, tc := range []struct {
		held int
		want int64
	}{
		{1, 5000 * heapPerByte},
		{3, (5000 + 3000 + 2000) * heapPerByte},
		{10, (5000 + 3000 + 2000 + 1000) * heapPerByte},
	} {
		if got := heapHint(sides, tc.held); got != tc.want {
			t.Errorf("heapHint(%d held) = %d, want %d", tc.held, got, tc.want)
		}
	}
	if got := heapHint([][]string{{missing}, {dir}}, 3); got != 0 {
		t.Errorf("heapHint of no regular file = %d, want 0", got)
	}
}
