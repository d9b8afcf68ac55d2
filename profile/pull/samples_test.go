package pull

import (
	"errors"
	"slices"
	"testing"
)

// readIDs reads varints within the packed field it is given, as pprof's
// decoder does: one that runs past the field's end is an error at its
// offset, even when the bytes after the field would complete it.
func TestReadIDsWithinField(t *testing.T) {
	d := &File{locIDs: make([]uint64, 300), locIdx: make([]int32, 301)}
	for i := range d.locIDs {
		d.locIDs[i], d.locIdx[i+1] = uint64(i+1), int32(i+1)
	}
	// The ids 5 and 300 (0xac 0x02), then a value field's key.
	rec := []byte{0x05, 0xac, 0x02, 0x12}
	r := &sampleReader{d: d}
	if err := r.readIDs(rec[:3], 0, true); err != nil || !slices.Equal(r.rec.IDs, []uint64{5, 300}) {
		t.Fatalf("whole field: ids %v, %v", r.rec.IDs, err)
	}
	r.rec.IDs = r.rec.IDs[:0]
	var de *DecodeError
	if err := r.readIDs(rec[:2], 0, true); !errors.As(err, &de) || de.Offset != 1 {
		t.Errorf("a varint past the field's end: %v, want a DecodeError at byte 1", err)
	}
}
