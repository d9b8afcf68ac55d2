package protoscan

import (
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/profdiff/profdiff/profile/internal/readertest"
)

func TestBreak(t *testing.T) {
	data := readertest.RuntimeProfile(t, "heap")
	if where, cut := Break(data); where != "" || cut {
		t.Fatalf("whole profile: Break = %q, %v; want no break", where, cut)
	}
	// The top-level fields' spans: a cut inside one, never between two
	// (where the data is whole protobuf), is seen.
	var longest [2]int
	for off := 0; off < len(data); {
		_, _, n := protowire.ConsumeField(data[off:])
		if n < 0 {
			t.Fatalf("the runtime's profile does not read at byte %d", off)
		}
		if n > longest[1]-longest[0] {
			longest = [2]int{off, off + n}
		}
		off += n
	}
	for _, n := range []int{1, (longest[0] + longest[1]) / 2, len(data) - 1} {
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
