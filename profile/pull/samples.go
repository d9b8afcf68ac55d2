package pull

import (
	"slices"

	"github.com/profdiff/profdiff/profile"
)

// sampleReader decodes sample records into one reused Record: Values,
// IDs (or a packed field of them left to the caller) and string Labels.
// Numeric labels are checked, not kept: nothing in the analysis reads
// them.
type sampleReader struct {
	d      *File
	rec    Record
	labels []pbLabel
}

type pbLabel struct{ keyX, strX, numX, unitX int64 }

func (r *sampleReader) init(d *File) {
	r.d = d
	r.rec.Values = make([]int64, 0, len(d.sampleTypes))
}

// What sampleReader.read makes of a sample's location ids.
const (
	// skipIDs: a packed field of them is left unread (IDs stays
	// empty); an unpacked one is checked.
	skipIDs  = iota
	checkIDs // only check that they exist (IDs stays empty)
	keepIDs  // check them and keep them in IDs
	readIDs  // keepIDs, for a Reader
	// fuseIDs is readIDs, but a sample's ids in one packed field too
	// long to hold a single id are left unread (Record.Packed), for the
	// caller to read and check as it resolves them (Varint3, VarintSlow): one pass
	// over them, not two. Only for a profile without profiler frames
	// (profiler reads the ids).
	fuseIDs
)

// fuseMin is the shortest packed field of location ids fuseIDs leaves
// to the caller: a varint has at most 10 bytes, so a longer field holds
// two ids or more (or is malformed).
const fuseMin = 11

// read decodes the sample at data[s:e] into the record; its Profiler says
// whether it is one of the profiler's own (DropProfilerSamples' test,
// when the ids are kept or none is the profiler's).
func (r *sampleReader) read(s, e int, locs int) error {
	d, rec := r.d, &r.rec
	rec.Values, rec.IDs, r.labels = rec.Values[:0], rec.IDs[:0], r.labels[:0]
	rec.Packed, rec.PackedAt = nil, 0
	data := d.data[:e]
	var f wireField
	for pos := s; pos < e; {
		at := pos
		if err := next(data, &pos, e, &f); err != nil {
			return err
		}
		switch f.num {
		case 1:
			if f.typ == 2 {
				if locs == skipIDs {
					continue
				}
				if locs == fuseIDs && rec.Packed == nil && len(rec.IDs) == 0 && f.e-f.s >= fuseMin {
					rec.Packed, rec.PackedAt = data[:f.e], f.s
					continue
				}
				if err := r.unpack(data); err != nil {
					return err
				}
				if err := r.readIDs(data[:f.e], f.s, locs >= keepIDs); err != nil {
					return err
				}
			} else if err := f.want(0, at); err != nil {
				return decodeErr(at, "field %d: wire type %d, want 0 or 2", f.num, f.typ)
			} else if !d.HasLocation(f.u) {
				return ErrModel
			} else if locs >= keepIDs {
				if err := r.unpack(data); err != nil {
					return err
				}
				rec.IDs = append(rec.IDs, f.u)
			}
		case 2:
			if f.typ == 2 {
				vals := data[:f.e] // a varint may not run past its field
				for p := f.s; p < f.e; {
					u, q, ok := uvarint(vals, p)
					if !ok {
						return decodeErr(p, "bad varint in a sample's values")
					}
					rec.Values = append(rec.Values, int64(u))
					p = q
				}
			} else if err := f.varints(data, at, func(u uint64) { rec.Values = append(rec.Values, int64(u)) }); err != nil {
				return err
			}
		case 3:
			if err := f.want(2, at); err != nil {
				return err
			}
			lb, err := d.label(f.s, f.e)
			if err != nil {
				return err
			}
			r.labels = append(r.labels, lb)
		}
	}
	if len(rec.Values) != len(d.sampleTypes) {
		return ErrModel // CheckValid: value count mismatch
	}
	r.fillLabels()
	rec.Profiler = r.profiler() // profLoc is set only when ids are kept
	return nil
}

// readIDs reads the packed location ids at data[s:], checking that each
// is a location's (CheckValid: "sample has nil location"), and keeps them
// in the record's IDs when keep. Ids of up to three bytes are read inline
// (Varint3); ids 1..n, as every pprof writer numbers them, are
// checked without a lookup.
func (r *sampleReader) readIDs(data []byte, s int, keep bool) error {
	e := len(data) // the field's end: a varint may not run past it, as pprof reads it
	d := r.d
	ids := r.rec.IDs
	n1 := d.DenseLocations()
	if keep {
		ids = slices.Grow(ids, e-s) // at most one id a byte
	}
	for p := s; p < e; {
		u, q := Varint3(data, p)
		if q != p {
			p = q
		} else {
			v, q, ok := VarintSlow(data, p)
			if !ok {
				return decodeErr(p, "bad varint in a sample's location ids")
			}
			u, p = v, q
		}
		if n1 > 0 {
			if u-1 >= n1 {
				r.rec.IDs = ids
				return ErrModel
			}
		} else if !d.HasLocation(u) {
			r.rec.IDs = ids
			return ErrModel
		}
		if keep {
			ids = append(ids, u)
		}
	}
	r.rec.IDs = ids
	return nil
}

// unpack reads the packed field fuseIDs left (Record.Packed) into IDs,
// for a sample with more location ids after it, whose order IDs keeps.
func (r *sampleReader) unpack(data []byte) error {
	rec := &r.rec
	if rec.Packed == nil {
		return nil
	}
	p, at := rec.Packed, rec.PackedAt
	rec.Packed, rec.PackedAt = nil, 0
	return r.readIDs(p, at, true)
}

// label reads one Label message and checks its string indexes.
func (d *File) label(s, e int) (lb pbLabel, err error) {
	err = d.int64s(s, e, &lb.keyX, &lb.strX, &lb.numX, &lb.unitX)
	switch {
	case err != nil:
	case !d.okStr(lb.keyX):
		err = errMalformed
	case lb.strX != 0 && !d.okStr(lb.strX):
		err = errMalformed
	case lb.strX == 0 && lb.unitX != 0 && !d.okStr(lb.unitX):
		err = errMalformed
	}
	return lb, err
}

// fillLabels sets the record's string labels, in the order the record
// has them (label checked their indexes).
func (r *sampleReader) fillLabels() {
	rec := &r.rec
	rec.Labels = rec.Labels[:0]
	for _, lb := range r.labels {
		if lb.strX == 0 {
			continue
		}
		k, _ := r.d.str(lb.keyX)
		v, _ := r.d.str(lb.strX)
		rec.Labels = append(rec.Labels, Label{Key: k, Value: v})
	}
}

// profiler is DropProfilerSamples' test of the sample just read.
func (r *sampleReader) profiler() bool {
	rec := &r.rec
	if rec.Has(profile.LabelProfiler) {
		return true
	}
	if r.d.profLoc == nil {
		return false
	}
	for _, id := range rec.IDs {
		if r.d.profLoc[r.d.locIndex(id)] {
			return true
		}
	}
	return false
}

// eachSample decodes every sample record in order and calls fn with it.
func (d *File) eachSample(r *sampleReader, locs int, fn func(rec *Record) error) error {
	return d.eachSampleIn(r, locs, d.firstSample, len(d.data), fn)
}

// eachSampleIn is eachSample for the records of data[from:to], where
// both are places a field starts (the first record, a mark, the end).
func (d *File) eachSampleIn(r *sampleReader, locs, from, to int, fn func(rec *Record) error) error {
	var f wireField
	for pos := from; pos < to; {
		if err := next(d.data, &pos, len(d.data), &f); err != nil {
			return err
		}
		if f.num != 2 {
			continue
		}
		if err := r.read(f.s, f.e, locs); err != nil {
			return err
		}
		if err := fn(&r.rec); err != nil {
			return err
		}
	}
	return nil
}
