package diff

import (
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/symbolize"
)

// The streaming pprof decoder reads a pprof protobuf (profile.Raw: the
// bytes, decompressed) straight into what the Analyzer needs, without
// building a *pprofile.Profile: the string table as offsets (each string
// made once, when something reads it), mappings, functions and locations
// (each resolved to methods and frame rules once, by the locResolver),
// and the samples, read from the bytes as they are classified, through
// one reused sample, never held. Memory is the bytes plus the tables.
//
// It decodes in two steps. Prepare, safe to run for many profiles at once,
// reads the tables and checks every sample as package profile's Load would
// (CheckValid's references and value counts, checkValues' signs and sums,
// the diff-profile label, the profiler's own samples, kind detection).
// The Analyzer then reads the samples again as it classifies them. Any
// profile the decoder does not take exactly as pprof's model would read it
// (a decoding error, a reserved or repeated id, a missing reference, a
// negative value, no samples, a location with an address and no name,
// which wants symbolizing) goes through profile.Raw.Load instead, so its
// result, warnings and errors are those of the model path. With
// PrepareOptions.IDsInWalk, the samples' location ids are checked by the
// walk that reads them, not by Prepare: a profile refused there goes
// through Raw.Load then (Analyzer.settle).

// Input is one profile ready to be added to an Analyzer (AddInput) or a
// gate: the pprof model, or a protobuf the streaming decoder has checked.
type Input struct {
	l *profile.Loaded
	d *pbProfile
}

// NewInput wraps a loaded profile.
func NewInput(l *profile.Loaded) *Input { return &Input{l: l} }

// Loaded is what loading said of the profile: source, format, kind,
// warnings, profiler samples dropped. For a streamed profile its Profile
// is a header only (sample types, period, duration, comments, mappings),
// with no samples, locations or functions.
func (in *Input) Loaded() *profile.Loaded { return in.l }

// Streamed reports whether the streaming decoder reads the profile
// (until it is added).
func (in *Input) Streamed() bool { return in.d != nil }

// errFallback says that the model path reads the profile.
var errFallback = errors.New("read with the pprof model")

// Prepare decodes r for the streaming path, or loads it with r.Load when
// the decoder does not take it. It may run for several profiles at once.
func Prepare(r *profile.Raw) (*Input, error) { return PrepareWith(r, PrepareOptions{}) }

// PrepareOptions are PrepareWith's.
type PrepareOptions struct {
	// IDsInWalk leaves the samples' packed location ids out of Prepare's
	// checks (unless they need them), to be checked by the walk, which
	// reads them anyway: one pass less over the samples, for an Analyzer
	// that walks in parallel (Analyzer.WalksInParallel). A profile whose
	// ids pprof refuses is then refused by AddInput or Analyzer.Wait,
	// with the error Prepare gives it. A serial walk checks them first,
	// on the caller's goroutine.
	IDsInWalk bool
	// Names is the memo of function names shared by the profiles of one
	// comparison (see Names); nil gives the profile one of its own.
	Names *Names
}

// PrepareWith is Prepare with options.
func PrepareWith(r *profile.Raw, opts PrepareOptions) (*Input, error) {
	d, err := decodeRaw(r, opts)
	if err != nil {
		l, err := r.Load()
		if err != nil {
			return nil, err
		}
		return &Input{l: l}, nil
	}
	return &Input{l: d.loaded, d: d}, nil
}

// decodeRaw decodes and checks r; any error means: use the model path.
func decodeRaw(r *profile.Raw, opts PrepareOptions) (d *pbProfile, err error) {
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, errFallback // a decoder bug must not crash; the model path decides
		}
	}()
	d = &pbProfile{src: r.Source, data: r.Data, raw: r, names: opts.Names}
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
	d.loaded = l
	return d, nil
}

// pbProfile is a decoded protobuf profile: the tables, and where the
// samples are.
type pbProfile struct {
	names  *Names // the function names' memo (PrepareOptions.Names)
	src    string
	data   []byte
	loaded *profile.Loaded
	header *pprofile.Profile

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
	fnInfos []*fnInfo
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
func (d *pbProfile) scan() error {
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
				if d.samples%markEvery == 0 {
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
func (d *pbProfile) sizeTables(from int) {
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
// (signs and sums, errFallback for what the model path must read), and
// anything more that check would read (labels, location ids that are not
// packed, another value count than the first record's, a field of an
// unexpected wire type) sets checkAll. When nothing does, check need not
// read the samples again (see check).
func (d *pbProfile) scanSample(s, e int) error {
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
			return errFallback // an error, or a delta heap profile's types to remove
		case d.sums[n] > math.MaxInt64-v:
			return errFallback
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
func (d *pbProfile) scalar(f *wireField, at int) error {
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
func (d *pbProfile) fields(s, e int, fn func(f *wireField, at int) error) error {
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

func (d *pbProfile) valueType(s, e int) (vt pbValueType, err error) {
	err = d.fields(s, e, func(f *wireField, at int) error {
		switch f.num {
		case 1:
			return int64Field(f, at, &vt.typeX)
		case 2:
			return int64Field(f, at, &vt.unitX)
		}
		return nil
	})
	return vt, err
}

// str returns string table entry x, or false when x is out of range
// (pprof's "malformed profile").
func (d *pbProfile) str(x int64) (string, bool) {
	if x < 0 || x >= int64(len(d.strS)) {
		return "", false
	}
	if !d.strMade[x] {
		d.strMemo[x], d.strMade[x] = string(d.data[d.strS[x]:d.strE[x]]), true
	}
	return d.strMemo[x], true
}

// okStr reports whether x is a string table index.
func (d *pbProfile) okStr(x int64) bool { return x >= 0 && x < int64(len(d.strS)) }

var errMalformed = errors.New("malformed profile: a string index out of range")

// header builds the profile's header: sample types, period, duration,
// comments, the default type, mappings (the main binary's build ID).
func (d *pbProfile) buildHeader() error {
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
func (d *pbProfile) build() error {
	if len(d.strS) == 0 {
		return errMalformed // pprof reads every name through the table
	}
	d.strMemo, d.strMade = make([]string, len(d.strS)), make([]bool, len(d.strS))
	if err := d.buildHeader(); err != nil {
		return err
	}
	if len(d.sampleTypes) == 0 || d.samples == 0 {
		return errFallback // no sample types, or no samples: the model path says so
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

func (d *pbProfile) buildMappings() error {
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
			return errFallback // CheckValid refuses it; the model path may number them
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

// fnIndex finds a function's index in pbProfile.fnInfos by its ID: a slice
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

func (d *pbProfile) buildFunctions() (*fnIndex, error) {
	if d.names == nil {
		d.names = &Names{} // the profile's own
	}
	n := len(d.fnRanges)
	ids := make([]uint64, n)
	d.fnInfos = make([]*fnInfo, n)
	raw := make([]string, n) // names the memo lacks, else ""
	var missing []int
	maxID := uint64(0)
	if err := d.readFunctions(ids, raw, &missing, &maxID); err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		// Named outside the lock, stored in one step; a name another
		// profile stored meanwhile keeps its first entry.
		made := make([]fnInfo, len(missing))
		for k, i := range missing {
			made[k] = newFnInfo(raw[i])
			d.fnInfos[i] = &made[k]
		}
		d.names.mu.Lock()
		if d.names.m == nil {
			d.names.m = map[string]*fnInfo{}
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
		if info.profiler {
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
				return nil, errFallback // a repeated ID
			}
			fx.dense[id] = int32(i) + 1
		}
	} else {
		fx.m = make(map[uint64]int32, n)
		for i, id := range ids {
			if _, dup := fx.m[id]; dup {
				return nil, errFallback
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
func (d *pbProfile) readFunctions(ids []uint64, raw []string, missing *[]int, maxID *uint64) error {
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
			return errFallback
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
func (d *pbProfile) functionFields(r [2]int, v *fnFields) error {
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

// fnInfo is what the decoder makes of a function name, once per process
// (Names): the name as profile's demangleFunctions leaves it, and what
// the Analyzer's resolver makes of that (fnName), and whether it is one
// of the profiler's own frames (profile.IsProfilerFrame).
type fnInfo struct {
	raw, name string // as the profile spells it; demangled (or raw)
	demangled bool
	profiler  bool
	nm        fnName
}

func newFnInfo(raw string) fnInfo {
	in := fnInfo{raw: raw, name: raw}
	if dm, ok := symbolize.Demangle(raw); ok {
		in.name, in.demangled = dm, true
	}
	in.profiler = profile.IsProfilerFrame(in.name)
	in.nm.mod, in.nm.rest = symbolize.SplitModule(in.name)
	in.nm.key = symbolize.Normalize(in.nm.rest)
	in.nm.family = closureFamily(in.nm.key)
	return in
}

// fnName is what the Analyzer's resolver makes of a function's name:
// symbolize.SplitModule's module and rest, the rest's normalized name
// (symbolize.Normalize) and closure family. Prepare works them out, for
// several profiles at once, so that the Analyzer's serial walk does not.
type fnName struct{ mod, rest, key, family string }

// Names holds what Prepare made of the function names it met, by the
// name as spelled, for the profiles that follow: a gate's profiles, and
// the two sides of a diff, name mostly the same functions, and an
// Analyzer that meets one name's entry again finds its frame by the
// entry (Analyzer.infoFrames). A profile reads it under one read lock and
// adds the names it lacked under one write lock, so the profiles of one
// comparison may be prepared at once. Entries are not changed once
// stored; it stops growing at fnMemoCap names. The zero value is ready.
type Names struct {
	mu sync.RWMutex
	m  map[string]*fnInfo
}

const fnMemoCap = 1 << 20

// function returns function i of the table as the pprof model has it,
// made from its bytes when first asked and kept (as location does).
func (d *pbProfile) function(i int32) *pprofile.Function {
	return d.fnMade.get(int(i), len(d.fnInfos), func() *pprofile.Function { return d.makeFunction(i) })
}

// makeFunction makes function i of the table from its bytes, which
// buildFunctions checked.
func (d *pbProfile) makeFunction(i int32) *pprofile.Function {
	info := d.fnInfos[i]
	var v fnFields
	_ = d.functionFields(d.fnRanges[i], &v) // read without error by buildFunctions
	fn := &pprofile.Function{ID: v[1], Name: info.name, StartLine: int64(v[5])}
	sysX, fileX := int64(v[3]), int64(v[4])
	// Strings made here are not memoized in the table (str): the walks
	// of one profile's parts may ask at once.
	s := func(x int64) string { return string(d.data[d.strS[x]:d.strE[x]]) }
	fn.SystemName, fn.Filename = s(sysX), s(fileX)
	if info.demangled && (fn.SystemName == "" || fn.SystemName == info.raw) {
		fn.SystemName = info.raw // as profile's demangleFunctions does
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

// name returns what the decoder made of fn's name; false for a nil d
// (the model path) or another function.
func (d *pbProfile) name(fn *pprofile.Function) (fnName, bool) {
	if d == nil || fn == nil {
		return fnName{}, false
	}
	i := d.fx.get(fn.ID)
	if i < 0 || d.function(i) != fn {
		return fnName{}, false
	}
	return d.fnInfos[i].nm, true
}

// buildLocations reads the location table into a compact form, checked
// as CheckValid checks it, and builds no *pprofile.Location: the walk
// resolves a location from its lines' function indexes (locRef), and the
// few paths that want the model's object (an unnamed location, a sample
// of one location, a contention profile's leaves, sparse IDs) have it
// made from its bytes when first asked (location).
func (d *pbProfile) buildLocations(fx *fnIndex) error {
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
		if in.name == "" {
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
					return errFallback
				}
				if unnamed != nil && unnamed[fi] {
					named = false
				}
				d.locFns = append(d.locFns, fi)
			}
		}
		nl := len(d.locFns) - start
		if addr != 0 && nl == 0 {
			return errFallback // symbolization's job
		}
		if id == 0 {
			return errFallback
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

// locRef is where a location's lines are in pbProfile.locFns (n of them
// at off; n is 0 for a location the walk resolves from its
// *pprofile.Location: one with an unnamed line or none) and its mapping's
// index (-1 for none).
type locRef struct {
	off     uint32
	n       uint16
	mapping int32
}

// indexLocations indexes the locations by ID, refusing repeated IDs.
func (d *pbProfile) indexLocations(maxID uint64) error {
	if maxID <= uint64(4*len(d.locIDs)+16) {
		d.locIdx = make([]int32, maxID+1)
		for i, id := range d.locIDs {
			if d.locIdx[id] != 0 {
				return errFallback
			}
			d.locIdx[id] = int32(i) + 1
		}
		return nil
	}
	d.locIdxMap = make(map[uint64]int32, len(d.locIDs))
	for i, id := range d.locIDs {
		if _, dup := d.locIdxMap[id]; dup {
			return errFallback
		}
		d.locIdxMap[id] = int32(i)
	}
	return nil
}

// lineFns is the function index of each line of location i of the table.
func (d *pbProfile) lineFns(i int) []int32 { return d.locFns[d.locOff[i]:d.locOff[i+1]] }

// locIndex is the table index of the location with an ID, -1 for none.
func (d *pbProfile) locIndex(id uint64) int {
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
func (d *pbProfile) hasLocation(id uint64) bool {
	if n := d.locCount1N(); n > 0 {
		return id != 0 && id <= n
	}
	return d.locIndex(id) >= 0
}

// locCount1N is the number of locations when their IDs are 1..n, else 0.
func (d *pbProfile) locCount1N() uint64 {
	if d.locIdx != nil && len(d.locIdx) == len(d.locIDs)+1 {
		return uint64(len(d.locIDs))
	}
	return 0
}

// location returns the location with an ID as the pprof model has it,
// nil when there is none. It is made from the location's bytes when first
// asked and kept, so each location is one object, whoever asks; walks of
// one profile's parts may ask at once.
func (d *pbProfile) location(id uint64) *pprofile.Location {
	i := d.locIndex(id)
	if i < 0 {
		return nil
	}
	return d.locMade.get(i, len(d.locIDs), func() *pprofile.Location { return d.makeLocation(i) })
}

// makeLocation makes location i of the table from its bytes, which
// buildLocations checked.
func (d *pbProfile) makeLocation(i int) *pprofile.Location {
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
func (d *pbProfile) kind() profile.Kind {
	d.header.Sample = make([]*pprofile.Sample, len(d.leaves))
	for i, id := range d.leaves {
		d.header.Sample[i] = &pprofile.Sample{Location: []*pprofile.Location{d.location(id)}}
	}
	k := profile.DetectKind(d.header)
	d.header.Sample = nil
	return k
}

// contention reports whether kind detection reads the samples' leaves
// (DetectKind's contentions/delay case).
func (d *pbProfile) contention() bool {
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
func (d *pbProfile) check(drop, idsLater bool) error {
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
	err := d.eachSample(&rs, locs, func(smp *pprofile.Sample, profiler bool) error {
		if len(smp.Label[profile.BaseLabel]) > 0 {
			return errFallback // a diff profile: refused
		}
		if leafFns != nil && len(rs.ids) > 0 {
			if fns := d.lineFns(d.locIndex(rs.ids[0])); len(fns) > 0 {
				if fi := fns[0]; !leafFns[fi] {
					leafFns[fi] = true
					d.leaves = append(d.leaves, rs.ids[0])
				}
			}
		}
		if profiler {
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
		err = errFallback // every sample the profiler's
	}
	return err
}

// sampleReader decodes sample records into one reused *pprofile.Sample,
// as pprof's decoder fills one: Value, Location, and Label (string labels
// only; nil when there are none). Numeric labels are checked, not kept:
// nothing in the analysis reads them.
type sampleReader struct {
	d   *pbProfile
	smp pprofile.Sample
	ids []uint64 // of smp.Location
	// packS, packE: with fuseIDs, the one packed field of ids left for
	// the walk to read (data[packS:packE]), 0 and 0 when ids holds them.
	packS, packE int
	labels       []pbLabel
	lab          map[string][]string
	labVals      []string
}

type pbLabel struct{ keyX, strX, numX, unitX int64 }

func (r *sampleReader) init(d *pbProfile) {
	r.d = d
	r.smp.Value = make([]int64, 0, len(d.sampleTypes))
}

// What sampleReader.read makes of a sample's location ids.
const (
	// skipIDs: a packed field of them is left unread (smp.Location and
	// ids stay empty); an unpacked one is checked.
	skipIDs  = iota
	checkIDs // only check that they exist (smp.Location stays empty)
	keepIDs  // check them and keep them in ids
	// readIDs: ids, and smp.Location only for a sample of one location
	// (SampleBucket reads it); the walk's resolver finds the others by
	// ID (locResolver.entryAt), so a frame costs no Location.
	readIDs
	// fuseIDs is readIDs, but a sample's ids in one packed field too
	// long to hold a single id are left unread, at packS:packE, for the
	// walk's resolver to read and check as it resolves them
	// (locResolver.framesPacked): one pass over them, not two. Only
	// for a profile without profiler frames (profiler reads the ids).
	fuseIDs
)

// fuseMin is the shortest packed field of location ids fuseIDs leaves
// to the walk: a varint has at most 10 bytes, so a longer field holds
// two ids or more (or is malformed), and a sample of one location, whose
// smp.Location SampleBucket reads, is always read here.
const fuseMin = 11

// read decodes the sample at data[s:e]; profiler says whether it is one
// of the profiler's own (DropProfilerSamples' test, when the ids are
// kept or none is the profiler's).
func (r *sampleReader) read(s, e int, locs int) (profiler bool, err error) {
	d, smp := r.d, &r.smp
	smp.Value, smp.Location, r.labels, r.ids = smp.Value[:0], smp.Location[:0], r.labels[:0], r.ids[:0]
	r.packS, r.packE = 0, 0
	data := d.data[:e]
	var f wireField
	for pos := s; pos < e; {
		at := pos
		if err := next(data, &pos, e, &f); err != nil {
			return false, err
		}
		switch f.num {
		case 1:
			if f.typ == 2 {
				if locs == skipIDs {
					continue
				}
				if locs == fuseIDs && r.packE == 0 && len(r.ids) == 0 && f.e-f.s >= fuseMin {
					r.packS, r.packE = f.s, f.e
					continue
				}
				if err := r.unpack(data); err != nil {
					return false, err
				}
				if err := r.readIDs(data[:f.e], f.s, locs >= keepIDs); err != nil {
					return false, err
				}
			} else if err := f.want(0, at); err != nil {
				return false, decodeErr(at, "field %d: wire type %d, want 0 or 2", f.num, f.typ)
			} else if !d.hasLocation(f.u) {
				return false, errFallback
			} else if locs >= keepIDs {
				if err := r.unpack(data); err != nil {
					return false, err
				}
				r.ids = append(r.ids, f.u)
			}
		case 2:
			if f.typ == 2 {
				vals := data[:f.e] // a varint may not run past its field
				for p := f.s; p < f.e; {
					u, q, ok := uvarint(vals, p)
					if !ok {
						return false, decodeErr(p, "bad varint in a sample's values")
					}
					smp.Value = append(smp.Value, int64(u))
					p = q
				}
			} else if err := f.varints(data, at, func(u uint64) { smp.Value = append(smp.Value, int64(u)) }); err != nil {
				return false, err
			}
		case 3:
			if err := f.want(2, at); err != nil {
				return false, err
			}
			lb, err := d.label(f.s, f.e)
			if err != nil {
				return false, err
			}
			r.labels = append(r.labels, lb)
		}
	}
	if len(smp.Value) != len(d.sampleTypes) {
		return false, errFallback // CheckValid: value count mismatch
	}
	if locs >= readIDs && len(r.ids) == 1 && len(smp.Location) == 0 {
		smp.Location = append(smp.Location, d.location(r.ids[0]))
	}
	if err := r.fillLabels(); err != nil {
		return false, err
	}
	return r.profiler(), nil // profLoc is set only when ids are kept
}

// readIDs reads the packed location ids at data[s:], checking that each
// is a location's (CheckValid: "sample has nil location"), and keeps them
// in r.ids when keep. Ids of up to three bytes are read inline
// (varint3); ids 1..n, as every pprof writer numbers them, are
// checked without a lookup.
func (r *sampleReader) readIDs(data []byte, s int, keep bool) error {
	e := len(data) // the field's end: a varint may not run past it, as pprof reads it
	d := r.d
	ids := r.ids
	n1 := d.locCount1N()
	if keep {
		ids = slices.Grow(ids, e-s) // at most one id a byte
	}
	for p := s; p < e; {
		u, q := varint3(data, p)
		if q != p {
			p = q
		} else {
			v, q, ok := uvarintSlow(data, p)
			if !ok {
				return decodeErr(p, "bad varint in a sample's location ids")
			}
			u, p = v, q
		}
		if n1 > 0 {
			if u-1 >= n1 {
				r.ids = ids
				return errFallback
			}
		} else if !d.hasLocation(u) {
			r.ids = ids
			return errFallback
		}
		if keep {
			ids = append(ids, u)
		}
	}
	r.ids = ids
	return nil
}

// unpack reads the packed field fuseIDs left at packS:packE into ids,
// for a sample with more location ids after it, whose order ids keeps.
func (r *sampleReader) unpack(data []byte) error {
	if r.packE == 0 {
		return nil
	}
	s, e := r.packS, r.packE
	r.packS, r.packE = 0, 0
	return r.readIDs(data[:e], s, true)
}

// label reads one Label message and checks its string indexes.
func (d *pbProfile) label(s, e int) (lb pbLabel, err error) {
	err = d.fields(s, e, func(f *wireField, at int) error {
		switch f.num {
		case 1:
			return int64Field(f, at, &lb.keyX)
		case 2:
			return int64Field(f, at, &lb.strX)
		case 3:
			return int64Field(f, at, &lb.numX)
		case 4:
			return int64Field(f, at, &lb.unitX)
		}
		return nil
	})
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

// fillLabels sets the sample's string labels as pprof's decoder does:
// values of one key in order, a nil map when there are none.
func (r *sampleReader) fillLabels() error {
	smp := &r.smp
	smp.Label = nil
	n := 0
	for _, lb := range r.labels {
		if lb.strX != 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if r.lab == nil {
		r.lab = map[string][]string{}
	}
	clear(r.lab)
	r.labVals = r.labVals[:0]
	for _, lb := range r.labels {
		if lb.strX == 0 {
			continue
		}
		k, _ := r.d.str(lb.keyX)
		v, _ := r.d.str(lb.strX)
		if old, ok := r.lab[k]; ok {
			r.lab[k] = append(old[:len(old):len(old)], v)
			continue
		}
		i := len(r.labVals)
		r.labVals = append(r.labVals, v)
		r.lab[k] = r.labVals[i : i+1 : i+1]
	}
	smp.Label = r.lab
	return nil
}

// profiler is DropProfilerSamples' test of the sample just read.
func (r *sampleReader) profiler() bool {
	smp := &r.smp
	if len(smp.Label) > 0 && len(smp.Label[profile.LabelProfiler]) > 0 {
		return true
	}
	if r.d.profLoc == nil {
		return false
	}
	for _, id := range r.ids {
		if r.d.profLoc[r.d.locIndex(id)] {
			return true
		}
	}
	return false
}

// eachSample decodes every sample record in order and calls fn with it.
func (d *pbProfile) eachSample(r *sampleReader, locs int, fn func(smp *pprofile.Sample, profiler bool) error) error {
	return d.eachSampleIn(r, locs, d.firstSample, len(d.data), fn)
}

// eachSampleIn is eachSample for the records of data[from:to], where
// both are places a field starts (the first record, a mark, the end).
func (d *pbProfile) eachSampleIn(r *sampleReader, locs, from, to int, fn func(smp *pprofile.Sample, profiler bool) error) error {
	var f wireField
	for pos := from; pos < to; {
		if err := next(d.data, &pos, len(d.data), &f); err != nil {
			return err
		}
		if f.num != 2 {
			continue
		}
		profiler, err := r.read(f.s, f.e, locs)
		if err != nil {
			return err
		}
		if err := fn(&r.smp, profiler); err != nil {
			return err
		}
	}
	return nil
}

// walkStream is walk for a decoded protobuf: every sample is read from the
// bytes into one reused sample and classified as walk classifies the
// model's, the profiler's own left out as Load leaves them out. It is
// serial: Prepare and add (for ids left to the walk) have checked every
// sample already, so no error is left to meet.
func (a *Analyzer) walkStream(side Side, prof int, d *pbProfile, idx int, kind profile.Kind) {
	_ = a.walkStreamIn(side, prof, d, idx, kind, d.firstSample, len(d.data))
}

// walkStreamIn classifies the records of data[from:to] (see
// eachSampleIn). It fails, having classified some, where a packed
// location id check left to it fails (pbProfile.idsLater): an id that
// is no location's, or a varint that does not end within its field.
func (a *Analyzer) walkStreamIn(side Side, prof int, d *pbProfile, idx int, kind profile.Kind, from, to int) error {
	lr := a.newLocResolverN(d.maxLocID, len(d.locIDs), d.maxFnID, len(d.fnInfos), side)
	lr.src = d
	w := a.newWalker(side, prof, lr, idx, CountColumn(d.header, idx), kind)
	var rs sampleReader
	rs.init(d)
	mode := readIDs
	if d.profLoc == nil && !w.spellings {
		mode = fuseIDs
	}
	return d.eachSampleIn(&rs, mode, from, to, func(smp *pprofile.Sample, profiler bool) error {
		if profiler && d.drop {
			return nil
		}
		if rs.packE > 0 {
			return w.samplePacked(smp, d.data[:rs.packE], rs.packS)
		}
		w.sample(smp, rs.ids)
		return nil
	})
}

// checkLaterIDs checks the location ids Prepare's checks left unread
// (idsLater): it reads every sample's again.
func (d *pbProfile) checkLaterIDs() error {
	var rs sampleReader
	rs.init(d)
	return d.eachSample(&rs, checkIDs, func(*pprofile.Sample, bool) error { return nil })
}

// model loads the profile d was decoded from with the pprof model, for
// a walk whose check failed: pprof refuses a location ID that is no
// location's and a varint that runs past its field, so this is the
// model's error, as Prepare would have returned it.
func (d *pbProfile) model() (*profile.Loaded, error) {
	if d.raw == nil { // decoded by a test from bytes alone
		return nil, fmt.Errorf("%s: a sample's location ids: %w", d.src, errFallback)
	}
	return d.raw.Load()
}
