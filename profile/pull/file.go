package pull

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/symbolize"
)

// Open decodes and checks the pprof protobuf r holds (decompressed), as
// profile's Load would check it, without building its samples: the
// tables, the header and where the sample records are. Any error means
// that the pprof model is to read the profile (r.Load), whose result,
// warnings and errors are then those of the model path: a decoding
// error, a reserved or repeated id, a missing reference, a negative
// value, no samples, a location with an address and no name (which
// wants symbolizing), a diff profile. Open may run for several profiles
// at once (sharing opts.Names).
func Open(r *profile.Raw, opts Options) (d *File, err error) {
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, ErrModel // a decoder bug must not crash; the model path decides
		}
	}()
	return open(r, opts)
}

// open is Open without its guard against a panic (the fuzz test's).
func open(r *profile.Raw, opts Options) (*File, error) {
	d := &File{src: r.Source, data: r.Data, raw: r, names: opts.Names, describe: opts.Describe, markEvery: opts.MarkEvery}
	if d.markEvery <= 0 {
		d.markEvery = DefaultMarkEvery
	}
	if err := d.scan(); err != nil {
		return nil, err
	}
	if err := d.build(); err != nil {
		return nil, err
	}
	d.mapRanges = nil // built; fnRanges and locRanges make the model's objects (function, location)
	if err := d.check(!r.Options.KeepProfiler, opts.IDsInWalk); err != nil {
		return nil, err
	}
	l := &profile.Loaded{Source: r.Source, Format: profile.FormatPprof, Containers: r.Containers,
		Profile: d.header, Dropped: d.dropped, Warnings: append([]string(nil), r.Warnings...)}
	if d.header.Period == 0 {
		l.Warnings = append(l.Warnings, r.Source+": profile has no sampling period")
	}
	l.Kind = d.kind()
	profile.CheckTiming(l, d.sums) // d.header is l.Profile: its duration and period are checked in place
	d.loaded = l
	return d, nil
}

// File is a decoded pprof protobuf: the tables, and where the samples
// are. Its records are read with a Reader (NewReader), several at once.
type File struct {
	names     *Names                // the function names' memo (Options.Names)
	describe  func(name string) any // Options.Describe
	markEvery int                   // Options.MarkEvery
	src       string
	data      []byte
	loaded    *profile.Loaded
	header    *pprofile.Profile

	strS, strE []int    // string table entries: data[strS[i]:strE[i]]
	strMemo    []string // made on first read
	strMade    []bool

	sampleTypes []pbValueType
	periodType  *pbValueType
	commentX    []int64
	defaultX    int64
	dropX       int64
	keepX       int64
	docX        int64
	timeNanos   int64
	duration    int64
	period      int64

	mapRanges, fnRanges, locRanges [][2]int // message payloads
	samples                        int      // sample records
	firstSample, lastSample        int      // payload offsets of the first and last sample fields

	mappings []*pprofile.Mapping
	// The function table: what the decoder made of each function's name
	// (Names), in table order; its index by ID (fx). A
	// *pprofile.Function is made only when asked for (function).
	fnInfos []*Func
	fx      *fnIndex
	maxFnID uint64
	fnMade  madeOnDemand[pprofile.Function]
	mapBase []string         // path.Base of each mapping's file
	mapByID map[uint64]int32 // mapping index by ID

	// The location table, compact: in table order, each location's ID
	// and its lines' function indexes (locFns[locOff[i]:locOff[i+1]]);
	// by ID, its table index + 1 (locIdx, dense) or index (locIdxMap),
	// and the walk's locRef (dense IDs only). A *pprofile.Location is
	// made only when asked for (location), from locRanges.
	locIDs    []uint64
	locOff    []uint32
	locFns    []int32
	locIdx    []int32
	locIdxMap map[uint64]int32
	locRef    []locRef
	maxLocID  uint64
	locMade   madeOnDemand[pprofile.Location]

	profFn      []bool // by function index: profiler-only (profile.IsProfilerFrame); nil for none
	profLoc     []bool // by location table index: has a profiler frame; nil for none
	drop        bool   // drop the profiler's samples
	anyProfiler bool   // a profiler label or frame is in the profile
	dropped     int64
	leaves      []uint64 // one location ID per distinct leaf function (contention kinds)
	// idsLater says that check left the samples' packed location ids
	// unread: a walk checks them (checkIDs first, for a serial one).
	idsLater bool
	raw      *profile.Raw // what it was decoded from, for the model path
	marks    []int        // where every markEvery'th sample record starts (scan)
	// What scan's read of the sample records found (scanSample): the
	// sums of their values by index (checked as check checks them), how
	// many values the first has, and whether any left check something
	// to read (labels, unpacked location ids, another value count or
	// wire type).
	sums     []int64
	nValues  int
	checkAll bool
}

type pbValueType struct{ typeX, unitX int64 }

// scan reads the top-level fields: everything but the samples, which it
// counts.
func (d *File) scan() error {
	data := d.data
	var f wireField
	sized := false // the tables' slices made to size (sizeTables)
	for pos := 0; pos < len(data); {
		at := pos
		if err := next(data, &pos, len(data), &f); err != nil {
			return err
		}
		var err error
		switch f.num {
		case 1, 11:
			if err = f.want(2, at); err == nil {
				vt, verr := d.valueType(f.s, f.e)
				if err = verr; f.num == 1 {
					d.sampleTypes = append(d.sampleTypes, vt)
				} else {
					d.periodType = &vt
				}
			}
		case 2:
			if err = f.want(2, at); err == nil {
				if d.samples == 0 {
					d.firstSample = at
				}
				if d.samples%d.markEvery == 0 {
					d.marks = append(d.marks, at)
				}
				err = d.scanSample(f.s, f.e)
				d.samples++
				d.lastSample = pos
			}
		case 3, 4, 5:
			if !sized {
				sized = true
				d.sizeTables(at)
			}
			if err = f.want(2, at); err == nil {
				r := [2]int{f.s, f.e}
				switch f.num {
				case 3:
					d.mapRanges = append(d.mapRanges, r)
				case 4:
					d.locRanges = append(d.locRanges, r)
				default:
					d.fnRanges = append(d.fnRanges, r)
				}
			}
		case 6:
			if !sized {
				sized = true
				d.sizeTables(at)
			}
			if err = f.want(2, at); err == nil {
				if len(d.strS) == 0 && f.e > f.s {
					return decodeErr(at, "string_table[0] must be ''")
				}
				d.strS, d.strE = append(d.strS, f.s), append(d.strE, f.e)
			}
		case 7, 8, 9, 10, 12, 14, 15:
			err = d.scalar(&f, at)
		case 13:
			err = f.varints(data, at, func(u uint64) { d.commentX = append(d.commentX, int64(u)) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sizeTables gives the table slices scan appends to (mappings,
// locations, functions, strings) room for the fields of those numbers
// from data[from:] on, counted by a skim of the fields' keys and lengths:
// they are most of a profile's records after its samples (every pprof
// writer puts the tables last), and grown by append they would be
// copied a dozen times, the copies' pages faulted in, for the collector
// to free (perf on the 200k pair: 2% of the CPU). The skim stops,
// leaving the slices to append, at a field it cannot read: scan reports
// that one.
func (d *File) sizeTables(from int) {
	var n [7]int
	data := d.data
	for pos := from; pos < len(data); {
		key, p, ok := uvarint(data, pos)
		if !ok {
			break
		}
		switch key & 7 {
		case 0:
			if _, p, ok = uvarint(data, p); !ok {
				return
			}
		case 1:
			p += 8
		case 2:
			l, q, ok := uvarint(data, p)
			if !ok || l > uint64(len(data)-q) {
				return
			}
			p = q + int(l)
			if num := key >> 3; num >= 3 && num <= 6 {
				n[num]++
			}
		case 5:
			p += 4
		default:
			return
		}
		pos = p
	}
	d.mapRanges = growExact(d.mapRanges, n[3])
	d.locRanges = growExact(d.locRanges, n[4])
	d.fnRanges = growExact(d.fnRanges, n[5])
	d.strS, d.strE = growExact(d.strS, n[6]), growExact(d.strE, n[6])
}

// growExact returns s with room for n more elements and no more (where
// slices.Grow rounds up to the allocator's size class).
func growExact[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	g := make([]T, len(s), len(s)+n)
	copy(g, s)
	return g
}

// scanSample reads the sample record at data[s:e] as scan meets it, while
// its bytes are in cache: its values are checked as check checks them
// (signs and sums, ErrModel for what the model path must read), and
// anything more that check would read (labels, location ids that are not
// packed, another value count than the first record's, a field of an
// unexpected wire type) sets checkAll. When nothing does, check need not
// read the samples again (see check).
func (d *File) scanSample(s, e int) error {
	data := d.data[:e] // a varint may not run past its record
	var f wireField
	n := 0
	value := func(u uint64) error {
		v := int64(u)
		if n == len(d.sums) {
			d.sums = append(d.sums, 0)
		}
		switch {
		case v < 0:
			return ErrModel // an error, or a delta heap profile's types to remove
		case d.sums[n] > math.MaxInt64-v:
			return ErrModel
		}
		d.sums[n] += v
		n++
		return nil
	}
	for pos := s; pos < e; {
		if err := next(data, &pos, e, &f); err != nil {
			return err
		}
		switch f.num {
		case 1:
			if f.typ != 2 {
				d.checkAll = true
			}
		case 2:
			switch f.typ {
			case 0:
				if err := value(f.u); err != nil {
					return err
				}
			case 2:
				for p := f.s; p < f.e; {
					u, q, ok := uvarint(data[:f.e], p)
					if !ok {
						return decodeErr(p, "bad varint in a sample's values")
					}
					if err := value(u); err != nil {
						return err
					}
					p = q
				}
			default:
				d.checkAll = true
			}
		case 3:
			d.checkAll = true
		}
	}
	if d.samples == 0 {
		d.nValues = n
	} else if n != d.nValues {
		d.checkAll = true
	}
	return nil
}

// scalar reads a top-level int64 field.
func (d *File) scalar(f *wireField, at int) error {
	if err := f.want(0, at); err != nil {
		return err
	}
	v := int64(f.u)
	switch f.num {
	case 7:
		d.dropX = v
	case 8:
		d.keepX = v
	case 9:
		if d.timeNanos != 0 {
			return decodeErr(at, "concatenated profiles detected")
		}
		d.timeNanos = v
	case 10:
		d.duration = v
	case 12:
		d.period = v
	case 14:
		d.defaultX = v
	case 15:
		d.docX = v
	}
	return nil
}

// fields calls fn for each field of the message at data[s:e], stopping at
// the first error.
func (d *File) fields(s, e int, fn func(f *wireField, at int) error) error {
	var f wireField
	for pos := s; pos < e; {
		at := pos
		if err := next(d.data, &pos, e, &f); err != nil {
			return err
		}
		if err := fn(&f, at); err != nil {
			return err
		}
	}
	return nil
}

// int64Field reads a known int64 or uint64 field of a message, which must
// be a varint.
func int64Field(f *wireField, at int, dst *int64) error {
	if err := f.want(0, at); err != nil {
		return err
	}
	*dst = int64(f.u)
	return nil
}

// int64s reads a message whose fields 1, 2, ... are varints into dsts,
// in that order; other fields are skipped.
func (d *File) int64s(s, e int, dsts ...*int64) error {
	return d.fields(s, e, func(f *wireField, at int) error {
		if f.num >= 1 && f.num <= len(dsts) {
			return int64Field(f, at, dsts[f.num-1])
		}
		return nil
	})
}

func (d *File) valueType(s, e int) (vt pbValueType, err error) {
	err = d.int64s(s, e, &vt.typeX, &vt.unitX)
	return vt, err
}

// str returns string table entry x, or false when x is out of range
// (pprof's "malformed profile").
func (d *File) str(x int64) (string, bool) {
	if x < 0 || x >= int64(len(d.strS)) {
		return "", false
	}
	if !d.strMade[x] {
		d.strMemo[x], d.strMade[x] = string(d.data[d.strS[x]:d.strE[x]]), true
	}
	return d.strMemo[x], true
}

// okStr reports whether x is a string table index.
func (d *File) okStr(x int64) bool { return x >= 0 && x < int64(len(d.strS)) }

var errMalformed = errors.New("malformed profile: a string index out of range")

// header builds the profile's header: sample types, period, duration,
// comments, the default type, mappings (the main binary's build ID).
func (d *File) buildHeader() error {
	h := &pprofile.Profile{TimeNanos: d.timeNanos, DurationNanos: d.duration, Period: d.period}
	vt := func(v pbValueType) (*pprofile.ValueType, error) {
		t, ok1 := d.str(v.typeX)
		u, ok2 := d.str(v.unitX)
		if !ok1 || !ok2 {
			return nil, errMalformed
		}
		return &pprofile.ValueType{Type: t, Unit: u}, nil
	}
	for _, st := range d.sampleTypes {
		v, err := vt(st)
		if err != nil {
			return err
		}
		h.SampleType = append(h.SampleType, v)
	}
	pt := d.periodType
	if pt == nil {
		pt = &pbValueType{}
	}
	var err error
	if h.PeriodType, err = vt(*pt); err != nil {
		return err
	}
	for _, c := range d.commentX {
		s, ok := d.str(c)
		if !ok {
			return errMalformed
		}
		h.Comments = append(h.Comments, s)
	}
	var ok [4]bool
	h.DefaultSampleType, ok[0] = d.str(d.defaultX)
	h.DropFrames, ok[1] = d.str(d.dropX)
	h.KeepFrames, ok[2] = d.str(d.keepX)
	h.DocURL, ok[3] = d.str(d.docX)
	if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
		return errMalformed
	}
	d.header = h
	return nil
}

// build makes the tables: mappings, functions (names demangled as profile
// does), locations, each checked as CheckValid checks them.
func (d *File) build() error {
	if len(d.strS) == 0 {
		return errMalformed // pprof reads every name through the table
	}
	d.strMemo, d.strMade = make([]string, len(d.strS)), make([]bool, len(d.strS))
	if err := d.buildHeader(); err != nil {
		return err
	}
	if len(d.sampleTypes) == 0 || d.samples == 0 {
		return ErrModel // no sample types, or no samples: the model path says so
	}
	if err := d.buildMappings(); err != nil {
		return err
	}
	d.header.Mapping = d.mappings
	fx, err := d.buildFunctions()
	if err != nil {
		return err
	}
	return d.buildLocations(fx)
}

func (d *File) buildMappings() error {
	seen := map[uint64]bool{}
	for _, r := range d.mapRanges {
		m := &pprofile.Mapping{}
		var fileX, buildX int64
		err := d.fields(r[0], r[1], func(f *wireField, at int) error {
			var v int64
			var err error
			switch f.num {
			case 1, 2, 3, 4, 7, 8, 9, 10:
				err = int64Field(f, at, &v)
			case 5:
				return int64Field(f, at, &fileX)
			case 6:
				return int64Field(f, at, &buildX)
			}
			switch f.num {
			case 1:
				m.ID = uint64(v)
			case 2:
				m.Start = uint64(v)
			case 3:
				m.Limit = uint64(v)
			case 4:
				m.Offset = uint64(v)
			case 7:
				m.HasFunctions = v != 0
			case 8:
				m.HasFilenames = v != 0
			case 9:
				m.HasLineNumbers = v != 0
			case 10:
				m.HasInlineFrames = v != 0
			}
			return err
		})
		if err != nil {
			return err
		}
		var ok1, ok2 bool
		m.File, ok1 = d.str(fileX)
		m.BuildID, ok2 = d.str(buildX)
		switch {
		case !ok1 || !ok2:
			return errMalformed
		case m.ID == 0 || seen[m.ID]:
			return ErrModel // CheckValid refuses it; the model path may number them
		}
		seen[m.ID] = true
		const prefix = "[kernel.kallsyms]"
		if strings.HasPrefix(m.File, prefix) {
			m.KernelRelocationSymbol = m.File[len(prefix):]
		}
		d.mappings = append(d.mappings, m)
	}
	return nil
}

// fnIndex finds a function's index in File.fnInfos by its ID: a slice
// when IDs are dense, else a map.
type fnIndex struct {
	dense []int32 // index + 1, 0 for none
	m     map[uint64]int32
}

func (x *fnIndex) get(id uint64) int32 {
	if x.dense != nil {
		if id < uint64(len(x.dense)) {
			return x.dense[id] - 1
		}
		return -1
	}
	if i, ok := x.m[id]; ok {
		return i
	}
	return -1
}

func (d *File) buildFunctions() (*fnIndex, error) {
	if d.names == nil {
		d.names = &Names{} // the profile's own
	}
	n := len(d.fnRanges)
	ids := make([]uint64, n)
	d.fnInfos = make([]*Func, n)
	raw := make([]string, n) // names the memo lacks, else ""
	var missing []int
	maxID := uint64(0)
	if err := d.readFunctions(ids, raw, &missing, &maxID); err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		// Named outside the lock, stored in one step; a name another
		// profile stored meanwhile keeps its first entry.
		made := make([]Func, len(missing))
		for k, i := range missing {
			made[k] = newFunc(raw[i], d.describe)
			d.fnInfos[i] = &made[k]
		}
		d.names.mu.Lock()
		if d.names.m == nil {
			d.names.m = map[string]*Func{}
		}
		for _, i := range missing {
			if old := d.names.m[raw[i]]; old != nil {
				d.fnInfos[i] = old
			} else if len(d.names.m) < fnMemoCap {
				d.names.m[raw[i]] = d.fnInfos[i]
			}
		}
		d.names.mu.Unlock()
	}
	for i, info := range d.fnInfos {
		if info.Profiler {
			if d.profFn == nil {
				d.profFn = make([]bool, n)
			}
			d.profFn[i] = true
		}
	}
	fx := &fnIndex{}
	if maxID <= uint64(4*n+16) {
		fx.dense = make([]int32, maxID+1)
		for i, id := range ids {
			if fx.dense[id] != 0 {
				return nil, ErrModel // a repeated ID
			}
			fx.dense[id] = int32(i) + 1
		}
	} else {
		fx.m = make(map[uint64]int32, n)
		for i, id := range ids {
			if _, dup := fx.m[id]; dup {
				return nil, ErrModel
			}
			fx.m[id] = int32(i)
		}
	}
	d.fx, d.maxFnID = fx, maxID
	return fx, nil
}

// readFunctions reads the function table for buildFunctions: each
// function's ID into ids, the largest into maxID, and what d.names knows of
// its name into d.fnInfos; a name it lacks is made (raw) and its index
// added to missing. It holds d.names' read lock throughout.
func (d *File) readFunctions(ids []uint64, raw []string, missing *[]int, maxID *uint64) error {
	data := d.data
	d.names.mu.RLock()
	defer d.names.mu.RUnlock()
	for i, r := range d.fnRanges {
		var v fnFields
		if err := d.functionFields(r, &v); err != nil {
			return err
		}
		id, nameX, sysX, fileX := v[1], v[2], v[3], v[4]
		switch {
		case !d.okStr(int64(nameX)) || !d.okStr(int64(sysX)) || !d.okStr(int64(fileX)):
			return errMalformed
		case id == 0:
			return ErrModel
		}
		ids[i] = id
		*maxID = max(*maxID, id)
		if info := d.names.m[string(data[d.strS[nameX]:d.strE[nameX]])]; info != nil {
			d.fnInfos[i] = info
		} else {
			*missing = append(*missing, i)
			raw[i], _ = d.str(int64(nameX))
		}
	}
	return nil
}

// fnFields are a Function message's fields by number: id, name,
// system_name and filename (string indexes), start_line; all varints.
type fnFields [6]uint64

// functionFields reads the Function message at data[r[0]:r[1]] into v,
// the last of a repeated field winning, as pprof's decoder has it.
func (d *File) functionFields(r [2]int, v *fnFields) error {
	var f wireField
	for pos := r[0]; pos < r[1]; {
		at := pos
		if err := next(d.data, &pos, r[1], &f); err != nil {
			return err
		}
		if f.num < 1 || f.num > 5 {
			continue
		}
		if err := f.want(0, at); err != nil {
			return err
		}
		v[f.num] = f.u
	}
	return nil
}

// Func is what the decoder makes of a function name, once per Names: the
// name as profile's demangleFunctions leaves it, whether it is one of the
// profiler's own frames (profile.IsProfilerFrame), and what the caller's
// Options.Describe made of it (Ext). A Func is shared by every profile
// that names the function, and never changed once made.
type Func struct {
	Raw, Name string // as the profile spells it; demangled (or Raw)
	Demangled bool
	Profiler  bool
	Ext       any // Options.Describe(Name), nil without one
}

func newFunc(raw string, describe func(string) any) Func {
	in := Func{Raw: raw, Name: raw}
	if dm, ok := symbolize.Demangle(raw); ok {
		in.Name, in.Demangled = dm, true
	}
	in.Profiler = profile.IsProfilerFrame(in.Name)
	if describe != nil {
		in.Ext = describe(in.Name)
	}
	return in
}

// Names holds what Open made of the function names it met, by the name
// as spelled, for the profiles that follow: a gate's profiles, and the
// two sides of a diff, name mostly the same functions, and a caller that
// meets one name's Func again can find what it made of it by the pointer.
// The profiles sharing a Names share one Options.Describe. A profile reads it under one read lock and
// adds the names it lacked under one write lock, so the profiles of one
// comparison may be prepared at once. Entries are not changed once
// stored; it stops growing at fnMemoCap names. The zero value is ready.
type Names struct {
	mu sync.RWMutex
	m  map[string]*Func
}

const fnMemoCap = 1 << 20

// function returns function i of the table as the pprof model has it,
// made from its bytes when first asked and kept (as location does).
func (d *File) function(i int32) *pprofile.Function {
	return d.fnMade.get(int(i), len(d.fnInfos), func() *pprofile.Function { return d.makeFunction(i) })
}

// makeFunction makes function i of the table from its bytes, which
// buildFunctions checked.
func (d *File) makeFunction(i int32) *pprofile.Function {
	info := d.fnInfos[i]
	var v fnFields
	_ = d.functionFields(d.fnRanges[i], &v) // read without error by buildFunctions
	fn := &pprofile.Function{ID: v[1], Name: info.Name, StartLine: int64(v[5])}
	sysX, fileX := int64(v[3]), int64(v[4])
	// Strings made here are not memoized in the table (str): the walks
	// of one profile's parts may ask at once.
	s := func(x int64) string { return string(d.data[d.strS[x]:d.strE[x]]) }
	fn.SystemName, fn.Filename = s(sysX), s(fileX)
	if info.Demangled && (fn.SystemName == "" || fn.SystemName == info.Raw) {
		fn.SystemName = info.Raw // as profile's demangleFunctions does
	}
	return fn
}

// madeOnDemand holds a table's objects made when first asked for, by
// table index: one object each, whichever of several goroutines asks
// first, and the same for all.
type madeOnDemand[T any] struct {
	once sync.Once
	p    []atomic.Pointer[T]
}

// get returns object i of a table of n, made by mk if it is not yet.
func (m *madeOnDemand[T]) get(i, n int, mk func() *T) *T {
	m.once.Do(func() { m.p = make([]atomic.Pointer[T], n) })
	if v := m.p[i].Load(); v != nil {
		return v
	}
	m.p[i].CompareAndSwap(nil, mk())
	return m.p[i].Load()
}

// FuncOf returns the Func of fn, a function the File made (Location);
// false for a nil File or another function.
func (d *File) FuncOf(fn *pprofile.Function) (*Func, bool) {
	if d == nil || fn == nil {
		return nil, false
	}
	i := d.fx.get(fn.ID)
	if i < 0 || d.function(i) != fn {
		return nil, false
	}
	return d.fnInfos[i], true
}

// buildLocations reads the location table into a compact form, checked
// as CheckValid checks it, and builds no *pprofile.Location: the walk
// resolves a location from its lines' function indexes (locRef), and the
// few paths that want the model's object (an unnamed location, a sample
// of one location, a contention profile's leaves, sparse IDs) have it
// made from its bytes when first asked (location).
func (d *File) buildLocations(fx *fnIndex) error {
	d.mapByID = make(map[uint64]int32, len(d.mappings))
	d.mapBase = make([]string, len(d.mappings))
	for i, m := range d.mappings {
		d.mapByID[m.ID] = int32(i)
		d.mapBase[i] = path.Base(m.File)
	}
	n := len(d.locRanges)
	maxID := uint64(0)
	refs := make([]locRef, n)
	d.locIDs = make([]uint64, n)
	d.locOff = make([]uint32, n+1)
	d.locFns = make([]int32, 0, n+n/4)
	data := d.data
	var f, g wireField
	// Which functions are unnamed (nil: none), and the last mapping
	// looked up: a table's locations mostly share one. Each location
	// would otherwise load its functions' memo entries (2 MB of them on
	// the 200k profile, out of cache) and look its mapping up in a map.
	var unnamed []bool
	for fi, in := range d.fnInfos {
		if in.Name == "" {
			if unnamed == nil {
				unnamed = make([]bool, len(d.fnInfos))
			}
			unnamed[fi] = true
		}
	}
	lastMap, lastMi := uint64(0), int32(-1)
	if mi, ok := d.mapByID[0]; ok {
		lastMi = mi
	}
	for i, r := range d.locRanges {
		var id, addr, mapID uint64
		start := len(d.locFns)
		named := true
		for pos := r[0]; pos < r[1]; {
			at := pos
			if err := next(data, &pos, r[1], &f); err != nil {
				return err
			}
			switch f.num {
			case 1, 2, 3, 5:
				if err := f.want(0, at); err != nil {
					return err
				}
				switch f.num {
				case 1:
					id = f.u
				case 2:
					mapID = f.u
				case 3:
					addr = f.u
				}
			case 4:
				if err := f.want(2, at); err != nil {
					return err
				}
				// A Line: its function must be known (CheckValid's
				// "line with nil function"); line and column are read
				// when the Location is made.
				var fnID uint64
				for q := f.s; q < f.e; {
					at := q
					if err := next(data, &q, f.e, &g); err != nil {
						return err
					}
					if g.num >= 1 && g.num <= 3 {
						if err := g.want(0, at); err != nil {
							return err
						}
						if g.num == 1 {
							fnID = g.u
						}
					}
				}
				fi := fx.get(fnID)
				if fi < 0 {
					return ErrModel
				}
				if unnamed != nil && unnamed[fi] {
					named = false
				}
				d.locFns = append(d.locFns, fi)
			}
		}
		nl := len(d.locFns) - start
		if addr != 0 && nl == 0 {
			return ErrModel // symbolization's job
		}
		if id == 0 {
			return ErrModel
		}
		ref := &refs[i]
		if mapID != lastMap {
			lastMap, lastMi = mapID, -1
			if mi, ok := d.mapByID[mapID]; ok {
				lastMi = mi
			}
		}
		ref.mapping = lastMi
		ref.off = uint32(start)
		if named && nl < 1<<16 {
			ref.n = uint16(nl) // else 0: the Location's own path (symbolize.LocationFrames)
		}
		d.locIDs[i] = id
		d.locOff[i+1] = uint32(len(d.locFns))
		maxID = max(maxID, id)
	}
	d.maxLocID = maxID
	if err := d.indexLocations(maxID); err != nil {
		return err
	}
	if d.locIdx != nil {
		d.locRef = make([]locRef, maxID+1)
		for i, id := range d.locIDs {
			d.locRef[id] = refs[i]
		}
	}
	return nil
}

// locRef is where a location's lines are in File.locFns (n of them
// at off; n is 0 for a location the walk resolves from its
// *pprofile.Location: one with an unnamed line or none) and its mapping's
// index (-1 for none).
type locRef struct {
	off     uint32
	n       uint16
	mapping int32
}

// indexLocations indexes the locations by ID, refusing repeated IDs.
func (d *File) indexLocations(maxID uint64) error {
	if maxID <= uint64(4*len(d.locIDs)+16) {
		d.locIdx = make([]int32, maxID+1)
		for i, id := range d.locIDs {
			if d.locIdx[id] != 0 {
				return ErrModel
			}
			d.locIdx[id] = int32(i) + 1
		}
		return nil
	}
	d.locIdxMap = make(map[uint64]int32, len(d.locIDs))
	for i, id := range d.locIDs {
		if _, dup := d.locIdxMap[id]; dup {
			return ErrModel
		}
		d.locIdxMap[id] = int32(i)
	}
	return nil
}

// lineFns is the function index of each line of location i of the table.
func (d *File) lineFns(i int) []int32 { return d.locFns[d.locOff[i]:d.locOff[i+1]] }

// locIndex is the table index of the location with an ID, -1 for none.
func (d *File) locIndex(id uint64) int {
	if d.locIdx != nil {
		if id < uint64(len(d.locIdx)) {
			return int(d.locIdx[id]) - 1
		}
		return -1
	}
	if i, ok := d.locIdxMap[id]; ok {
		return int(i)
	}
	return -1
}

// hasLocation reports whether there is a location with an ID; when the
// IDs are 1..n, as every pprof writer numbers them, without a load.
func (d *File) HasLocation(id uint64) bool {
	if n := d.DenseLocations(); n > 0 {
		return id != 0 && id <= n
	}
	return d.locIndex(id) >= 0
}

// locCount1N is the number of locations when their IDs are 1..n, else 0.
func (d *File) DenseLocations() uint64 {
	if d.locIdx != nil && len(d.locIdx) == len(d.locIDs)+1 {
		return uint64(len(d.locIDs))
	}
	return 0
}

// location returns the location with an ID as the pprof model has it,
// nil when there is none. It is made from the location's bytes when first
// asked and kept, so each location is one object, whoever asks; walks of
// one profile's parts may ask at once.
func (d *File) Location(id uint64) *pprofile.Location {
	i := d.locIndex(id)
	if i < 0 {
		return nil
	}
	return d.locMade.get(i, len(d.locIDs), func() *pprofile.Location { return d.makeLocation(i) })
}

// makeLocation makes location i of the table from its bytes, which
// buildLocations checked.
func (d *File) makeLocation(i int) *pprofile.Location {
	r, fns := d.locRanges[i], d.lineFns(i)
	loc := &pprofile.Location{}
	if len(fns) > 0 {
		loc.Line = make([]pprofile.Line, 0, len(fns))
	}
	data := d.data
	var f, g wireField
	for pos := r[0]; pos < r[1]; {
		if next(data, &pos, r[1], &f) != nil {
			break
		}
		switch f.num {
		case 1:
			loc.ID = f.u
		case 2:
			if mi, ok := d.mapByID[f.u]; ok {
				loc.Mapping = d.mappings[mi]
			} else {
				loc.Mapping = nil
			}
		case 3:
			loc.Address = f.u
		case 5:
			loc.IsFolded = f.u != 0
		case 4:
			ln := pprofile.Line{Function: d.function(fns[len(loc.Line)])}
			for q := f.s; q < f.e; {
				if next(data, &q, f.e, &g) != nil {
					break
				}
				switch g.num {
				case 2:
					ln.Line = int64(g.u)
				case 3:
					ln.Column = int64(g.u)
				}
			}
			loc.Line = append(loc.Line, ln)
		}
	}
	return loc
}

// kind is profile.DetectKind of the profile. Of the samples it reads only
// the leaf functions of a contention profile (mutex or block), so the
// header gets one sample per distinct leaf function for that.
func (d *File) kind() profile.Kind {
	d.header.Sample = make([]*pprofile.Sample, len(d.leaves))
	for i, id := range d.leaves {
		d.header.Sample[i] = &pprofile.Sample{Location: []*pprofile.Location{d.Location(id)}}
	}
	k := profile.DetectKind(d.header)
	d.header.Sample = nil
	return k
}

// contention reports whether kind detection reads the samples' leaves
// (DetectKind's contentions/delay case).
func (d *File) contention() bool {
	for _, st := range d.header.SampleType {
		if st.Type == "contentions" || st.Type == "delay" {
			return true
		}
	}
	return false
}

// check reads every sample once before any is classified, as Load's
// checks read them: value counts and references (CheckValid), the
// diff-profile label, and the profiler's samples (DropProfilerSamples,
// when drop); the values' signs and sums (checkValues) scan checked
// (scanSample). With idsLater, the packed location ids are left to the
// walk, unless they are needed here; and when scan found nothing else in
// the records to check, the samples are not read at all.
func (d *File) check(drop, idsLater bool) error {
	d.drop = drop
	if d.profFn != nil { // buildFunctions found the profiler's functions
		d.profLoc = make([]bool, len(d.locIDs))
		for i := range d.locIDs {
			for _, fi := range d.lineFns(i) {
				if d.profFn[fi] {
					d.profLoc[i] = true
					break
				}
			}
		}
	}
	var leafFns []bool // by function index: a leaf met
	if d.contention() {
		leafFns = make([]bool, len(d.fnInfos))
	}
	var rs sampleReader
	rs.init(d)
	kept := 0
	// The location IDs are needed only to find the profiler's samples
	// and a contention profile's leaves; else they are checked, or left
	// unread, to be checked by the walk that reads them anyway (see
	// Analyzer.settle).
	locs := checkIDs
	switch {
	case d.profLoc != nil || leafFns != nil:
		locs = keepIDs
	case idsLater:
		locs = skipIDs
	}
	d.idsLater = locs == skipIDs
	if d.idsLater && !d.checkAll && d.nValues == len(d.sampleTypes) {
		// scan checked the values, and the records hold nothing else
		// this pass would read: no labels (no diff-profile label, no
		// profiler's), no profiler frames (profLoc), no leaves to find.
		return nil
	}
	err := d.eachSample(&rs, locs, func(rec *Record) error {
		if rec.Has(profile.BaseLabel) {
			return ErrModel // a diff profile: refused
		}
		if leafFns != nil && len(rec.IDs) > 0 {
			if fns := d.lineFns(d.locIndex(rec.IDs[0])); len(fns) > 0 {
				if fi := fns[0]; !leafFns[fi] {
					leafFns[fi] = true
					d.leaves = append(d.leaves, rec.IDs[0])
				}
			}
		}
		if rec.Profiler {
			d.anyProfiler = true
			if drop {
				d.dropped++
				return nil
			}
		}
		kept++
		return nil
	})
	if err == nil && kept == 0 {
		err = ErrModel // every sample the profiler's
	}
	return err
}

// CheckLaterIDs checks the location ids Open's checks left unread
// (IDsLater): it reads every sample's again.
func (d *File) CheckLaterIDs() error {
	var rs sampleReader
	rs.init(d)
	return d.eachSample(&rs, checkIDs, func(*Record) error { return nil })
}

// Model loads the profile d was decoded from with the pprof model, for
// a walk whose check failed: pprof refuses a location ID that is no
// location's and a varint that runs past its field, so this is the
// model's error, as Open's caller would have had it from Load.
func (d *File) Model() (*profile.Loaded, error) {
	if d.raw == nil { // decoded by a test from bytes alone
		return nil, fmt.Errorf("%s: a sample's location ids: %w", d.src, ErrModel)
	}
	return Load(d.raw)
}
