// Package nettrace reads .NET EventPipe traces (.nettrace, as `dotnet-trace
// collect` writes them) without a .NET SDK, into thread-time profiles.
//
// The reader handles the NetTrace V4 layout (Trace object version 4,
// compressed and uncompressed event headers) with V5's metadata tags, which
// is what the runtime writes from .NET Core 3.0 to .NET 10: metadata, stack,
// event and sequence-point blocks. The V6 layout that `dotnet-trace
// collect-linux` writes is recognized and refused with ErrV6.
//
// # What becomes a sample
//
// Microsoft-DotNETCore-SampleProfiler's ThreadSample events: the sampler
// visits every managed thread about once per millisecond, running or
// blocked, and records its managed stack and whether the thread was in
// managed code (Managed) or in native or runtime code, which includes
// blocking in the OS (External). Like PerfView's thread-time view, every
// sample counts, weighted by the sampling interval: values are time
// (wall/nanoseconds; samples/count alongside) and the kind is wall-clock.
// Each stack gets PerfView's leaf pseudo-frame, CPU_TIME for a managed
// sample and UNMANAGED_CODE_TIME for an external one; the .NET rules skip
// those, so the managed frames above decide the bucket (a thread in
// ManualResetEventSlim.Wait is waiting, one in the Monitor.Enter slow path
// is contending, one in SocketAsyncEngine is in I/O), and a managed sample
// is CPU unless its frames say otherwise. The sampled thread's id becomes
// the sample label "thread", and "sample" says managed or external.
//
// # Names
//
// Addresses are named from the runtime's MethodLoadVerbose events (JIT time)
// and the rundown's MethodDCStartVerbose/MethodDCEndVerbose events, looked up
// by address and time: tiered compilation and unloading reuse code
// addresses, so a sample takes the method whose load event is the latest
// one not after the sample (rundown records describe methods alive at the
// trace's edges and serve when no load event came before). Frames are
// `Module!Namespace.Method`, the module from ModuleLoad or the rundown's
// module events. An address no method covers stays a frame, `?!0xADDR`;
// nothing is dropped. Return addresses (every frame but the leaf) are
// looked up at address-1.
//
// # Limits
//
// Work and memory are linear in the file. Every length field is checked
// against the bytes left before anything is allocated; timestamps must stay
// between 0 and 2^63-1 and span no more nanoseconds than an int64 holds,
// and the samples' total time must fit an int64: each of these fails with
// the byte offset. pprof keeps a whole stack per distinct (thread, stack)
// sample, so a profile that would need more than 4 frame references per
// byte of the file (a deep stack sampled on thousands of threads) is
// refused, as is one whose stacks would take more than 4 method lookups
// per byte to name (addresses that re-jitted methods cover in turn, sampled
// at alternating times).
package nettrace

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// DefaultSamplingInterval is used when a file's ExpectedCPUSamplingRate is
// zero: the SampleProfiler's default of one millisecond.
const DefaultSamplingInterval = 1_000_000

// Parse reads a nettrace file into a thread-time profile.
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	t, err := Read(data)
	if err != nil {
		return nil, nil, err
	}
	p, warns, err := t.Profile()
	if err != nil {
		return nil, nil, err
	}
	return p, append(t.Warnings, warns...), nil
}

// symbols resolves code addresses to methods by address and time.
type symbols struct {
	methods []Method // sorted by start address
	modules map[uint64]string
	memo    map[uint64][]int // address → indexes of the methods covering it
	names   map[*Method][2]string
	t       *Trace
}

// newSymbols sorts t.Methods by address, in place.
func newSymbols(t *Trace) *symbols {
	ms := t.Methods
	// The name's file offset is unique per event: a total order, so the
	// result does not depend on the sort's stability.
	slices.SortFunc(ms, func(a, b Method) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.nameOff, b.nameOff)
	})
	return &symbols{methods: ms, modules: t.Modules, memo: map[uint64][]int{}, names: map[*Method][2]string{}, t: t}
}

// maxOverlap bounds the backward scan for methods whose ranges cover an
// address: code ranges rarely overlap (only when an address was reused).
const maxOverlap = 64

func (s *symbols) covering(addr uint64) []int {
	if c, ok := s.memo[addr]; ok {
		return c
	}
	i := sort.Search(len(s.methods), func(i int) bool { return s.methods[i].Start > addr }) - 1
	var c []int
	for j := i; j >= 0 && j > i-maxOverlap; j-- {
		m := &s.methods[j]
		if addr >= m.Start && addr-m.Start < m.Size {
			c = append(c, j)
		}
	}
	s.memo[addr] = c
	return c
}

// lookup returns the method at addr at time ts, or nil, and the times
// [lo, hi) around ts in which the answer is the same.
func (s *symbols) lookup(addr uint64, ts int64) (m *Method, lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	c := s.covering(addr)
	switch len(c) {
	case 0:
		return nil, lo, hi
	case 1:
		return &s.methods[c[0]], lo, hi
	}
	// The latest runtime load not after ts; else a rundown record; else the
	// earliest load (clock skew between threads). The answer changes only
	// at the loads' timestamps.
	var best, rundown, earliest *Method
	for _, j := range c {
		m := &s.methods[j]
		switch {
		case m.Rundown:
			if rundown == nil {
				rundown = m
			}
		case m.Timestamp <= ts:
			lo = max(lo, m.Timestamp)
			if best == nil || m.Timestamp > best.Timestamp {
				best = m
			}
		default:
			hi = min(hi, m.Timestamp)
			if earliest == nil || m.Timestamp < earliest.Timestamp {
				earliest = m
			}
		}
	}
	switch {
	case best != nil:
		return best, lo, hi
	case rundown != nil:
		return rundown, lo, hi
	}
	return earliest, lo, hi
}

// moduleName is a module's file name without directory and extension.
func moduleName(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	b := path.Base(p)
	for _, ext := range []string{".ni.dll", ".dll", ".exe", ".ni.exe"} {
		if strings.HasSuffix(strings.ToLower(b), ext) {
			return b[:len(b)-len(ext)]
		}
	}
	return b
}

func (s *symbols) name(m *Method) (module, name string) {
	if n, ok := s.names[m]; ok {
		return n[0], n[1]
	}
	name = s.t.Name(m)
	if ns := s.t.Namespace(m); ns != "" {
		name = ns + "." + name
	}
	if p, ok := s.modules[m.ModuleID]; ok {
		module = moduleName(p)
	}
	s.names[m] = [2]string{module, name}
	return module, name
}

// Profile builds the thread-time profile: sample types samples/count and
// wall/nanoseconds (the default), each ThreadSample weighted by the
// sampling interval. Error samples are left out (a warning counts them).
//
// Its work and memory are linear in the file: a stack is resolved to
// methods once, again only for samples at times when one of its addresses
// names another method (see symbols.lookup), and a profile whose distinct
// (thread, stack) samples need more frame references than maxRefs allows
// is refused, as is one whose total time would overflow an int64.
func (t *Trace) Profile() (*pprofile.Profile, []string, error) {
	var warns []string
	interval := t.SamplingInterval
	if interval <= 0 {
		interval = DefaultSamplingInterval
		warns = append(warns, "the trace does not give its sampling interval; assuming the SampleProfiler's default of 1 ms")
	}
	if n := int64(len(t.Samples)); n > math.MaxInt64/interval {
		return nil, nil, fmt.Errorf("%d samples of %d ns each: their total time overflows a 64-bit integer of nanoseconds", n, interval)
	}
	p := t.newProfile(interval)
	b := &builder{
		Builder: build.New[string, locKey](p),
		sym:     newSymbols(t),
		samples: map[string]*pprofile.Sample{},
		fast:    map[sampleKey]*pprofile.Sample{},
		stacks:  make([]stackRes, len(t.Stacks)),
		// The bounds are generous for real traces (a sample event takes
		// a few bytes, its stack is stored once) and linear in the file.
		maxRefs: max(1<<20, 4*len(t.data)),
		maxWork: max(1<<20, 4*len(t.data)),
	}
	b.pseudo = [3]*pprofile.Location{SampleExternal: b.location(0, "", "UNMANAGED_CODE_TIME"), SampleManaged: b.location(0, "", "CPU_TIME")}
	var errors, unresolved, frames int
	for _, s := range t.Samples {
		if s.Type != SampleManaged && s.Type != SampleExternal {
			errors++
			continue
		}
		k := sampleKey{thread: s.Thread, typ: s.Type, stack: s.Stack}
		var res *stackRes
		if s.Stack >= 0 {
			res = &b.stacks[s.Stack]
			if res.gen == 0 || s.Timestamp < res.lo || s.Timestamp >= res.hi {
				if err := b.resolve(res, t.Stacks[s.Stack], s.Timestamp); err != nil {
					return nil, nil, err
				}
			}
			k.gen = res.gen
			frames += len(res.locs)
			unresolved += res.unresolved
		}
		smp := b.fast[k]
		if smp == nil {
			var err error
			if smp, err = b.sample(k, res); err != nil {
				return nil, nil, err
			}
			b.fast[k] = smp
		}
		smp.Value[0]++
		smp.Value[1] += interval
	}
	if errors > 0 {
		warns = append(warns, fmt.Sprintf("%d ThreadSample event(s) of type Error or unknown were left out", errors))
	}
	if frames > 0 && unresolved*10 > frames {
		warns = append(warns, fmt.Sprintf("%d of %d stack frames have no method name (no MethodLoadVerbose or rundown event covers them: record with rundown enabled, the default of `dotnet-trace collect`); they show as ?!0xADDR", unresolved, frames))
	}
	return p, warns, nil
}

// stackRes is an interned stack resolved to locations, leaf first, valid
// for samples whose timestamps fall in [lo, hi).
type stackRes struct {
	locs       []*pprofile.Location
	unresolved int // frames no method covers
	lo, hi     int64
	gen        int // the resolution's number; 0 before the first
}

// sampleKey identifies the samples that share a pprof sample without
// looking at their frames: same thread, type, stack and resolution.
type sampleKey struct {
	thread          uint64
	typ, stack, gen int // stack -1 (gen 0) for a sample without one
}

// resolve names the frames of ips (leaf first) at time ts into res.
func (b *builder) resolve(res *stackRes, ips []uint64, ts int64) error {
	if b.work += len(ips); b.work > b.maxWork {
		return fmt.Errorf("trace too large to resolve: more than %d frame lookups (4 per byte of the file); its stacks hold addresses that many methods cover in turn", b.maxWork)
	}
	res.locs, res.unresolved = res.locs[:0], 0
	res.lo, res.hi = math.MinInt64, math.MaxInt64
	for i, ip := range ips {
		look := ip
		if i > 0 && look > 0 {
			look-- // a return address: the call is just before it
		}
		m, lo, hi := b.sym.lookup(look, ts)
		res.lo, res.hi = max(res.lo, lo), min(res.hi, hi)
		if m != nil {
			mod, name := b.sym.name(m)
			res.locs = append(res.locs, b.location(ip, mod, name))
		} else {
			res.unresolved++
			res.locs = append(res.locs, b.location(ip, "", "?!0x"+strconv.FormatUint(ip, 16)))
		}
	}
	b.gens++
	res.gen = b.gens
	return nil
}

// sample returns the pprof sample of a thread, type and resolved stack
// (nil for none), with zero values when new.
func (b *builder) sample(k sampleKey, res *stackRes) (*pprofile.Sample, error) {
	locs := append(b.locBuf[:0], b.pseudo[k.typ])
	if res != nil {
		locs = append(locs, res.locs...)
	}
	b.locBuf = locs
	key := b.key[:0]
	key = binary.AppendUvarint(key, k.thread)
	key = append(key, byte(k.typ))
	for _, l := range locs {
		key = binary.AppendUvarint(key, l.ID)
	}
	b.key = key
	if smp, ok := b.samples[string(key)]; ok {
		return smp, nil
	}
	if b.refs += len(locs); b.refs > b.maxRefs {
		return nil, fmt.Errorf("trace too large: its samples need more than %d frame references (4 per byte of the file) after merging identical stacks of a thread", b.maxRefs)
	}
	kind := "managed"
	if k.typ == SampleExternal {
		kind = "external"
	}
	smp := &pprofile.Sample{
		Location: append([]*pprofile.Location(nil), locs...),
		Value:    []int64{0, 0},
		Label:    map[string][]string{labels.Thread: {strconv.FormatUint(k.thread, 10)}, "sample": {kind}},
	}
	b.samples[string(key)] = smp
	b.AddSample(smp)
	return smp, nil
}

// newProfile returns the profile's header: thread time sampled every
// interval nanoseconds, over the span of the trace's events.
func (t *Trace) newProfile(interval int64) *pprofile.Profile {
	p := &pprofile.Profile{
		SampleType:        []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}},
		DefaultSampleType: "wall",
		PeriodType:        &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            interval,
		Comments:          []string{fmt.Sprintf("nettrace: .NET EventPipe SampleProfiler thread time; pid %d, %d processors, %d-bit", t.ProcessID, t.Processors, t.PointerSize*8)},
	}
	// Read made sure timestamps are not negative and the span in
	// nanoseconds fits; SyncQPC is not checked, so neither is TimeNanos.
	if t.QPCFreq > 0 && t.Stats.MaxTimestamp > t.Stats.MinTimestamp {
		span := t.Stats.MaxTimestamp - t.Stats.MinTimestamp
		p.DurationNanos = int64(float64(span) * 1e9 / float64(t.QPCFreq))
		if t.SyncQPC >= 0 && t.Stats.MinTimestamp >= t.SyncQPC {
			if ns := float64(t.Stats.MinTimestamp-t.SyncQPC) * 1e9 / float64(t.QPCFreq); ns < math.MaxInt64 {
				p.TimeNanos = int64(ns)
			}
		}
	}
	return p
}

type locKey struct {
	addr         uint64
	module, name string // module!name split at its first `!`
}

// builder keys functions by `module!name` and locations by address and
// that name, and pprof samples by thread, type and locations.
type builder struct {
	*build.Builder[string, locKey]
	sym     *symbols
	pseudo  [3]*pprofile.Location // the leaf pseudo-frame of each sample type
	samples map[string]*pprofile.Sample
	fast    map[sampleKey]*pprofile.Sample // the same, without building the key
	stacks  []stackRes                     // by index in Trace.Stacks
	gens    int                            // resolutions made
	work    int                            // frames resolved
	refs    int                            // frame references of the samples
	maxWork int
	maxRefs int
	key     []byte
	locBuf  []*pprofile.Location
}

// location returns the location of addr named module!name (the module as
// the location's mapping, the way folded .NET frames load).
func (b *builder) location(addr uint64, module, name string) *pprofile.Location {
	// The key is the address and module!name, split at its first `!`
	// (so that no string is concatenated to look a frame up, yet two
	// frames whose module!name reads the same share their location).
	k := locKey{addr, module, name}
	if strings.IndexByte(module, '!') >= 0 {
		k.module, k.name, _ = strings.Cut(module+"!"+name, "!")
	}
	if l, ok := b.Location(k); ok {
		return l
	}
	fn := b.Function(module+"!"+name, pprofile.Function{Name: name, SystemName: name})
	l := &pprofile.Location{Address: addr, Line: []pprofile.Line{{Function: fn}}}
	if module != "" {
		l.Mapping = b.Mapping(module)
	}
	return b.AddLocationAs(k, l)
}
