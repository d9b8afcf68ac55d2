package pull

import (
	"io"
	"slices"

	pprofile "github.com/google/pprof/profile"
)

// ProfileReader reads the samples of a *pprofile.Profile (what every
// other format's reader returns) as Records, so a consumer of records
// reads every format alike. A record's IDs are its locations' ids, which
// Location turns back into the profile's locations; a profile whose
// location ids are not unique and non-zero (a hand-built one: readers
// check theirs) has its locations numbered by their place in the table.
type ProfileReader struct {
	p    *pprofile.Profile
	next int
	rec  Record
	keys []string
	// by id: dense (ids up to about 4 per location) or a map; renumber
	// holds the place-numbering when ids cannot serve.
	dense    []*pprofile.Location
	byID     map[uint64]*pprofile.Location
	renumber map[*pprofile.Location]uint64
	maxID    uint64
}

// FromProfile returns a reader of p's samples, in order.
func FromProfile(p *pprofile.Profile) *ProfileReader {
	r := &ProfileReader{p: p}
	seen := make(map[uint64]bool, len(p.Location))
	ok := true
	for _, l := range p.Location {
		if l == nil || l.ID == 0 || seen[l.ID] {
			ok = false
			break
		}
		seen[l.ID] = true
		r.maxID = max(r.maxID, l.ID)
	}
	if !ok {
		r.renumber = make(map[*pprofile.Location]uint64, len(p.Location))
		r.dense = make([]*pprofile.Location, len(p.Location)+1)
		for i, l := range p.Location {
			r.renumber[l] = uint64(i) + 1
			r.dense[i+1] = l
		}
		r.maxID = uint64(len(p.Location))
		return r
	}
	if r.maxID <= uint64(4*len(p.Location)+16) {
		r.dense = make([]*pprofile.Location, r.maxID+1)
		for _, l := range p.Location {
			r.dense[l.ID] = l
		}
	} else {
		r.byID = make(map[uint64]*pprofile.Location, len(p.Location))
		for _, l := range p.Location {
			r.byID[l.ID] = l
		}
	}
	return r
}

// MaxID is the largest id a record names; Locations the number of
// locations.
func (r *ProfileReader) MaxID() uint64  { return r.maxID }
func (r *ProfileReader) Locations() int { return len(r.p.Location) }

// Location returns the location a record's id names (nil for none).
func (r *ProfileReader) Location(id uint64) *pprofile.Location {
	if r.dense != nil {
		if id < uint64(len(r.dense)) {
			return r.dense[id]
		}
		return nil
	}
	return r.byID[id]
}

// Next returns the next sample as a record, io.EOF after the last. The
// record's Values are the sample's own slice; its IDs and Labels are
// reused. Samples the profile holds are kept ones (profile's Load drops
// the profiler's), so Profiler is never set.
func (r *ProfileReader) Next() (*Record, error) {
	if r.next >= len(r.p.Sample) {
		return nil, io.EOF
	}
	s := r.p.Sample[r.next]
	r.next++
	rec := &r.rec
	rec.Values = s.Value
	rec.IDs = rec.IDs[:0]
	for _, l := range s.Location {
		if r.renumber != nil {
			rec.IDs = append(rec.IDs, r.renumber[l])
		} else {
			rec.IDs = append(rec.IDs, l.ID)
		}
	}
	rec.Labels = rec.Labels[:0]
	if len(s.Label) > 0 {
		r.keys = r.keys[:0]
		for k := range s.Label {
			r.keys = append(r.keys, k)
		}
		slices.Sort(r.keys)
		for _, k := range r.keys {
			for _, v := range s.Label[k] {
				rec.Labels = append(rec.Labels, Label{Key: k, Value: v})
			}
		}
	}
	return rec, nil
}
