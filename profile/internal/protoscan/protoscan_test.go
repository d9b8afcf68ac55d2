package protoscan

import (
	"strconv"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/readertest"
)

func TestBreak(t *testing.T) {
	data := readertest.RuntimeProfile(t, "heap")
	if where, cut := Break(data); where != "" || cut {
		t.Fatalf("whole profile: Break = %q, %v; want no break", where, cut)
	}
	// Cut anywhere inside the last field, or in the middle, the file is
	// cut short at its own length.
	for _, n := range []int{len(data) - 1, len(data) / 2, 3} {
		where, cut := Break(data[:n])
		if !cut || !strings.Contains(where, "runs past the end of the file, at byte "+strconv.Itoa(n)) {
			t.Errorf("cut to %d bytes: Break = %q, %v; want a field that runs past byte %d", n, where, cut, n)
		}
	}
	// Field number 0 is no field: a tag that cannot be read, at its byte.
	bad := append(append([]byte(nil), data...), 0x00)
	where, cut := Break(bad)
	if cut || !strings.HasPrefix(where, "at byte "+strconv.Itoa(len(data))+": the tag of a top-level field") {
		t.Errorf("zero tag at the end: Break = %q, %v", where, cut)
	}
}
