// Package pull is profdiff's pull reader for pprof protobufs: the one
// package that decodes pprof's wire format.
//
// Open reads a profile's bytes (a profile.Raw: decompressed, not parsed)
// into its tables (strings as offsets, each string made once when read;
// mappings; functions, each name worked out once per Names; locations as
// their lines' function indexes) and checks every sample as profile's Load
// would, without building a *pprofile.Profile. A Reader then yields the
// sample records, one reused Record at a time, until io.EOF:
//
//	f, err := pull.Open(raw, pull.Options{})
//	if err != nil {
//		l, err := pull.Load(raw) // the pprof model reads what Open does not take
//		...
//	}
//	from, to := f.Range()
//	r := f.NewReader(from, to, false)
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		... rec.Values, rec.IDs, rec.Labels: valid until the next Next
//	}
//
// Cuts splits the records into runs that separate Readers read at once.
// Profiles every other reader returns (*pprofile.Profile) are read as the
// same records with FromProfile, so a consumer has one input type. Memory
// is the bytes plus the tables; nothing is held at package level.
package pull

import (
	"errors"
	"fmt"
	"io"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
)

// ErrModel says that the pprof model reads the profile: Open does not take
// it exactly as pprof's model would read it (see Open).
var ErrModel = errors.New("read with the pprof model")

// DefaultMarkEvery is the record spacing of the places Cuts can cut a
// profile at when Options.MarkEvery is 0.
const DefaultMarkEvery = 4096

// Options are Open's.
type Options struct {
	// IDsInWalk leaves the samples' packed location ids out of Open's
	// checks (unless they need them), for the caller's walk to check as
	// it reads them (Record.Packed, Varint3): one pass less over the
	// samples. A profile whose ids pprof refuses then fails that walk;
	// IDsLater says the check is left, CheckLaterIDs runs it.
	IDsInWalk bool
	// Names is the memo of function names shared by the profiles of one
	// comparison (see Names); nil gives the profile one of its own.
	Names *Names
	// Describe, when set, is what the caller makes of each function name
	// (Func.Ext), worked out once per name per Names: the profiles
	// sharing a Names share one Describe.
	Describe func(name string) any
	// MarkEvery is the record spacing of the places Cuts can cut at; 0
	// means DefaultMarkEvery (tests cut finer).
	MarkEvery int
}

// Record is one sample record: the values, the location ids (leaf
// first) and the string labels. A Reader reuses it: it is valid until
// the next call of Next.
type Record struct {
	Values []int64
	// IDs are the location ids, leaf first; empty when Packed holds them.
	IDs []uint64
	// Packed, when not nil, holds the sample's location ids still packed
	// (a Reader made with fuse): Packed[PackedAt:] is the whole field.
	// Varint3 (VarintSlow past three bytes) reads them one at a time; the caller checks each with
	// File.HasLocation (DenseLocations for ids 1..n), as Open left them
	// unchecked only with Options.IDsInWalk.
	Packed   []byte
	PackedAt int
	// Labels are the record's string labels, in record order (a key with
	// several values appears once for each).
	Labels []Label
	// Profiler marks a sample of the profiler's own goroutines or frames
	// (profile.IsProfilerFrame, profile.LabelProfiler).
	Profiler bool
}

// Label is one string label of a record.
type Label struct{ Key, Value string }

// Label returns the value of the record's label key when it has exactly
// one.
func (r *Record) Label(key string) (string, bool) {
	v, n := "", 0
	for i := range r.Labels {
		if r.Labels[i].Key == key {
			v, n = r.Labels[i].Value, n+1
		}
	}
	return v, n == 1
}

// Has reports whether the record has a label key.
func (r *Record) Has(key string) bool {
	for i := range r.Labels {
		if r.Labels[i].Key == key {
			return true
		}
	}
	return false
}

// Reader reads the sample records of a File in a range of its data.
type Reader struct {
	f        *File
	rs       sampleReader
	pos, end int
	mode     int
	err      error
}

// Range is the whole of the File's sample records, for NewReader.
func (d *File) Range() (from, to int) { return d.firstSample, len(d.data) }

// NewReader returns a Reader of the records of the File's data[from:to],
// two places a record starts (Range, or two neighbours of Cuts). With
// fuse, a sample's location ids in one packed field long enough to hold
// two are left packed (Record.Packed) for the caller to read as it
// resolves them; not for a profile with the profiler's frames, whose
// records must be read to be recognised.
func (d *File) NewReader(from, to int, fuse bool) *Reader {
	r := &Reader{f: d, pos: from, end: to, mode: readIDs}
	if fuse && d.profLoc == nil {
		r.mode = fuseIDs
	}
	r.rs.init(d)
	return r
}

// Next returns the next record, io.EOF after the last, or the error that
// stops the reading: a record pprof refuses (only where Open left its
// location ids to the walk, IDsLater).
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	var f wireField
	for r.pos < r.end {
		if err := next(r.f.data, &r.pos, len(r.f.data), &f); err != nil {
			r.err = err
			return nil, err
		}
		if f.num != 2 {
			continue
		}
		if err := r.rs.read(f.s, f.e, r.mode); err != nil {
			r.err = err
			return nil, err
		}
		return &r.rs.rec, nil
	}
	r.err = io.EOF
	return nil, io.EOF
}

// Cuts divides the sample records into k runs of about equal count, at
// the places Open marked (every Options.MarkEvery records): k+1 offsets,
// from the first record to the end of the data, fewer when the profile
// has fewer marks.
func (d *File) Cuts(k int) []int {
	k = max(1, min(k, len(d.marks)))
	b := make([]int, 0, k+1)
	b = append(b, d.firstSample)
	for i := 1; i < k; i++ {
		b = append(b, d.marks[i*len(d.marks)/k])
	}
	return append(b, len(d.data))
}

// Header is the profile without samples, locations or functions: sample
// types, period, duration, comments, mappings.
func (d *File) Header() *pprofile.Profile { return d.header }

// Loaded is what loading says of the profile: source, format, kind,
// warnings, the profiler's samples dropped; its Profile is Header.
func (d *File) Loaded() *profile.Loaded { return d.loaded }

// Samples is the number of sample records.
func (d *File) Samples() int { return d.samples }

// Funcs is the function table, in table order: Func i is the one a
// location's line names by index (LocFuncs).
func (d *File) Funcs() []*Func { return d.fnInfos }

// FuncFile is the source file of function i of Funcs (pprof's
// Function.filename), read from the profile's bytes at each call: a
// caller that wants it for a few functions (a frame named like a C
// library call, to tell a script's from a native one) pays for those.
func (d *File) FuncFile(i int32) string {
	var v fnFields
	if d.functionFields(d.fnRanges[i], &v) != nil || !d.okStr(int64(v[4])) {
		return "" // read without error by buildFunctions
	}
	return string(d.data[d.strS[v[4]]:d.strE[v[4]]])
}

// MaxFuncID is the largest function id.
func (d *File) MaxFuncID() uint64 { return d.maxFnID }

// Locations is the number of locations; MaxLocID the largest location id.
func (d *File) Locations() int   { return len(d.locIDs) }
func (d *File) MaxLocID() uint64 { return d.maxLocID }

// LocFuncs returns the function indexes (Funcs) of the lines of the
// location with an id, leaf first, and the index of its mapping (-1 for
// none); ok is false where the location is read only as a model object
// (Location): sparse ids, an unnamed line, or more lines than the compact
// form holds.
func (d *File) LocFuncs(id uint64) (fns []int32, mapping int32, ok bool) {
	if id >= uint64(len(d.locRef)) || d.locRef[id].n == 0 {
		return nil, -1, false
	}
	ref := d.locRef[id]
	return d.locFns[ref.off : ref.off+uint32(ref.n)], ref.mapping, true
}

// MappingBase is the base name of mapping i's file (path.Base).
func (d *File) MappingBase(i int32) string { return d.mapBase[i] }

// DropsProfiler reports whether the profiler's samples are to be left
// out (the profile.Options the bytes were loaded with say so).
func (d *File) DropsProfiler() bool { return d.drop }

// IDsLater reports whether Open left the packed location ids unchecked
// (Options.IDsInWalk): the walk that reads them checks them, or
// CheckLaterIDs does first.
func (d *File) IDsLater() bool { return d.idsLater }

// Load is r.Load, where a protobuf that the pprof library refuses without
// naming a place says where this reader's decoder stops on it
// (profile.Raw.LoadPlaced): "truncated or corrupt pprof data: at byte
// 162: bad varint in a sample's values (bad varint)", the library's words
// last where they differ. Every load of a Raw goes through it, so that
// each command says the same of one file.
func Load(r *profile.Raw) (*profile.Loaded, error) { return r.LoadPlaced(place) }

// place is where Open stops on r, "at byte N: what", or "" where it reads
// r or fails on something other than the protobuf's bytes.
func place(r *profile.Raw) string {
	_, err := Open(r, Options{})
	var de *DecodeError
	if errors.As(err, &de) {
		return fmt.Sprintf("at byte %d: %s", de.Offset, de.What)
	}
	return ""
}
