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
package nettrace

import (
	"cmp"
	"fmt"
	"github.com/profdiff/profdiff/profile/internal/build"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"

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
	p, warns := t.Profile()
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

// lookup returns the method at addr at time ts, or nil.
func (s *symbols) lookup(addr uint64, ts int64) *Method {
	c := s.covering(addr)
	switch len(c) {
	case 0:
		return nil
	case 1:
		return &s.methods[c[0]]
	}
	// The latest runtime load not after ts; else a rundown record; else the
	// earliest load (clock skew between threads).
	var best, rundown, earliest *Method
	for _, j := range c {
		m := &s.methods[j]
		switch {
		case m.Rundown:
			if rundown == nil {
				rundown = m
			}
		case m.Timestamp <= ts:
			if best == nil || m.Timestamp > best.Timestamp {
				best = m
			}
		default:
			if earliest == nil || m.Timestamp < earliest.Timestamp {
				earliest = m
			}
		}
	}
	switch {
	case best != nil:
		return best
	case rundown != nil:
		return rundown
	}
	return earliest
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
func (t *Trace) Profile() (*pprofile.Profile, []string) {
	var warns []string
	interval := t.SamplingInterval
	if interval <= 0 {
		interval = DefaultSamplingInterval
		warns = append(warns, "the trace does not give its sampling interval; assuming the SampleProfiler's default of 1 ms")
	}
	p := t.newProfile(interval)
	sym := newSymbols(t)
	b := &builder{Builder: build.New[string, locKey](p), samples: map[string]*pprofile.Sample{}}
	pseudo := [3]*pprofile.Location{SampleExternal: b.location(0, "", "UNMANAGED_CODE_TIME"), SampleManaged: b.location(0, "", "CPU_TIME")}
	var errors, unresolved, frames int
	var key []byte
	var locs []*pprofile.Location
	for _, s := range t.Samples {
		if s.Type != SampleManaged && s.Type != SampleExternal {
			errors++
			continue
		}
		locs = append(locs[:0], pseudo[s.Type])
		if s.Stack >= 0 {
			for i, ip := range t.Stacks[s.Stack] {
				look := ip
				if i > 0 && look > 0 {
					look-- // a return address: the call is just before it
				}
				frames++
				if m := sym.lookup(look, s.Timestamp); m != nil {
					mod, name := sym.name(m)
					locs = append(locs, b.location(ip, mod, name))
				} else {
					unresolved++
					locs = append(locs, b.location(ip, "", "?!0x"+strconv.FormatUint(ip, 16)))
				}
			}
		}
		key = key[:0]
		key = strconv.AppendUint(key, s.Thread, 10)
		key = append(key, '/', byte('0'+s.Type))
		for _, l := range locs {
			key = append(key, '/')
			key = strconv.AppendUint(key, l.ID, 10)
		}
		if smp, ok := b.samples[string(key)]; ok {
			smp.Value[0]++
			smp.Value[1] += interval
			continue
		}
		kind := "managed"
		if s.Type == SampleExternal {
			kind = "external"
		}
		smp := &pprofile.Sample{
			Location: append([]*pprofile.Location(nil), locs...),
			Value:    []int64{1, interval},
			Label:    map[string][]string{labels.Thread: {strconv.FormatUint(s.Thread, 10)}, "sample": {kind}},
		}
		b.samples[string(key)] = smp
		b.AddSample(smp)
	}
	if errors > 0 {
		warns = append(warns, fmt.Sprintf("%d ThreadSample event(s) of type Error or unknown were left out", errors))
	}
	if frames > 0 && unresolved*10 > frames {
		warns = append(warns, fmt.Sprintf("%d of %d stack frames have no method name (no MethodLoadVerbose or rundown event covers them: record with rundown enabled, the default of `dotnet-trace collect`); they show as ?!0xADDR", unresolved, frames))
	}
	return p, warns
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
	if t.QPCFreq > 0 && t.Stats.MaxTimestamp > t.Stats.MinTimestamp {
		span := t.Stats.MaxTimestamp - t.Stats.MinTimestamp
		p.DurationNanos = int64(float64(span) * 1e9 / float64(t.QPCFreq))
		if t.Stats.MinTimestamp >= t.SyncQPC {
			p.TimeNanos = int64(float64(t.Stats.MinTimestamp-t.SyncQPC) * 1e9 / float64(t.QPCFreq))
		}
	}
	return p
}

type locKey struct {
	addr uint64
	name string
}

// builder keys functions by `module!name` and locations by address and
// that name.
type builder struct {
	*build.Builder[string, locKey]
	samples map[string]*pprofile.Sample
}

// location returns the location of addr named module!name (the module as
// the location's mapping, the way folded .NET frames load).
func (b *builder) location(addr uint64, module, name string) *pprofile.Location {
	k := locKey{addr, module + "!" + name}
	if l, ok := b.Location(k); ok {
		return l
	}
	fn := b.Function(k.name, pprofile.Function{Name: name, SystemName: name})
	l := &pprofile.Location{Address: addr, Line: []pprofile.Line{{Function: fn}}}
	if module != "" {
		l.Mapping = b.Mapping(module)
	}
	return b.AddLocationAs(k, l)
}
