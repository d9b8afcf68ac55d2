package pull

import (
	"encoding/binary"
	"testing"
)

// Varint3 reads what uvarint reads for every varint of one to three
// bytes with at least four bytes from its start, and leaves the rest
// (longer varints, fewer bytes left, a run of continuation bytes) to
// VarintSlow by returning its start.
func TestVarint3(t *testing.T) {
	check := func(data []byte, p int) {
		t.Helper()
		u, q := Varint3(data, p)
		wu, wq, ok := uvarint(data, p)
		switch {
		case q == p:
			if ok && wq-p <= 3 && p+4 <= len(data) {
				t.Fatalf("% x at %d: not read, uvarint reads %d (%d bytes)", data, p, wu, wq-p)
			}
		case !ok || u != wu || q != wq:
			t.Fatalf("% x at %d: %d, next at %d; uvarint %d, %d (ok %v)", data, p, u, q, wu, wq, ok)
		}
	}
	for v := uint64(0); v < 1<<21+1<<10; v++ {
		if v > 1<<15 && v < 1<<21-1<<10 && v%61 != 0 {
			continue // every value near the lengths' edges, a sample between
		}
		b := binary.AppendUvarint(nil, v)
		for _, tail := range [][]byte{{}, {0x05}, {0x05, 0x80}, {0x81, 0x82, 0x83}} {
			data := append(append([]byte{0x99}, b...), tail...)
			check(data, 1)
		}
	}
	for _, data := range [][]byte{{0x80, 0x80, 0x80, 0x01}, {0xff, 0xff, 0xff, 0xff, 0x0f}, {0x80, 0x80, 0x80}, {}} {
		check(data, 0)
	}
	if u, q := Varint3([]byte{0xac, 0x02, 0, 0}, 0); u != 300 || q != 2 {
		t.Errorf("0xac 0x02: %d, next at %d; want 300, 2", u, q)
	}
}
