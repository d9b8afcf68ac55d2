package symbolize

import (
	"fmt"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

// Options says where Symbolize looks for symbol files.
type Options struct {
	// Paths are the caller's symbol files, in order: binaries, separate
	// debug files, perf maps, or directories searched like
	// PPROF_BINARY_PATH and like a debuginfod client cache
	// (BUILDID/debuginfo).
	Paths []string
	// PathsName is how messages name Paths when no file was found ("":
	// "the symbol paths"): a command gives the flag that sets them.
	PathsName string
	// Env is consulted for PPROF_BINARY_PATH and DEBUGINFOD_CACHE_PATH
	// (and HOME, XDG_CACHE_HOME for the cache's default place; nil: no
	// environment).
	Env func(string) string
	// ReturnAddresses says that the addresses of callers (locations that
	// are never a sample's leaf, nor the first user frame under kernel
	// frames) are return addresses, the instruction
	// after the call, as perf script prints them: they are looked up one
	// byte lower, inside the call. Go's runtime/pprof writes the call's
	// own PC, and pprof's legacy parsers have already moved them, so a
	// pprof profile leaves this unset.
	ReturnAddresses bool
}

// Report says what Symbolize did, mapping by mapping.
type Report struct {
	Mappings []MappingReport
	// Share is the share of the profile's sampled value (first sample
	// type) in samples with a location left unnamed, of any mapping but
	// the Skipped ones.
	Share float64
	// Problems are what a symbol file turned out to hold wrongly once
	// read (broken DWARF, say: inline frames and lines are then missing),
	// one line per file.
	Problems []string
}

// MappingReport is one mapping of the profile: which file served it, or
// why none did, and how many of its sampled locations were named.
type MappingReport struct {
	File     string // the mapping's file, as the profile names it
	BuildID  string
	ServedBy string // the symbol file used, "" when none
	By       string // how ServedBy matched: ByBuildID or ByName
	Why      string // why none was, when ServedBy is ""
	// Skipped is set for a mapping no file can serve ([vdso], //anon,
	// no file name; see Unsymbolizable): it is not warned about.
	Skipped bool
	// Locations and Named count the mapping's locations that had no name
	// and those Symbolize named; Share is the share of the profile's
	// sampled value (first sample type) at locations left unnamed.
	Locations, Named int
	Share            float64
}

// Symbolize names the locations of p that have an address but no
// function, from the symbol files opts lead to (see Locate), in place.
// Locations that already have names are left alone. Each mapping's file is
// located and opened once; its frames become Location.Line innermost
// first, with Functions shared by name, system name and file. A mapping
// all of whose locations were named gets HasFunctions (and HasFilenames,
// HasLineNumbers when every frame had them). The report lists every
// mapping that had unnamed locations, in the profile's mapping order.
func Symbolize(p *pprofile.Profile, opts Options) (*Report, error) {
	s := newSession(p, opts)
	defer s.close()
	groups := s.unnamed()
	rep := &Report{}
	for _, g := range groups {
		rep.Mappings = append(rep.Mappings, s.symbolizeMapping(g))
	}
	s.shares(rep, groups)
	rep.Problems = s.problems()
	return rep, nil
}

// problems are what the opened objects found wrong after opening (broken
// DWARF or pclntab: their names then come from what else the file has),
// one line per file, in path order.
func (s *session) problems() []string {
	var out []string
	for path, o := range s.objs {
		if e, ok := o.obj.(interface{ Err() error }); ok && o.obj != nil {
			if err := e.Err(); err != nil {
				out = append(out, fmt.Sprintf("%s: %v", path, err))
			}
		}
	}
	sort.Strings(out)
	return out
}

// group is one mapping's unnamed locations.
type group struct {
	m    *pprofile.Mapping // nil: locations without a mapping
	locs []*pprofile.Location
}

// session is one Symbolize call: the profile, the opened objects by path
// and the Functions by key.
type session struct {
	p     *pprofile.Profile
	opts  Options
	lc    *locator
	objs  map[string]objOrErr
	funcs map[SymFrame]*pprofile.Function
	leaf  map[*pprofile.Location]bool
	maxID uint64
}

type objOrErr struct {
	obj Object
	err error
}

func newSession(p *pprofile.Profile, opts Options) *session {
	s := &session{p: p, opts: opts, lc: newLocator(opts), objs: map[string]objOrErr{}, funcs: map[SymFrame]*pprofile.Function{}}
	for _, f := range p.Function {
		s.maxID = max(s.maxID, f.ID)
		s.funcs[SymFrame{Name: f.Name, SystemName: f.SystemName, File: f.Filename}] = f
	}
	if opts.ReturnAddresses {
		// A sample's leaf is the interrupted PC, and so is the first
		// user-space frame under kernel frames (a sample taken in the
		// kernel: that frame is where the program was stopped, not a
		// return address).
		s.leaf = map[*pprofile.Location]bool{}
		for _, smp := range p.Sample {
			for i, l := range smp.Location {
				if i == 0 || smp.Location[i-1].Address >= kernelHalf {
					s.leaf[l] = true
				}
				if l.Address < kernelHalf {
					break
				}
			}
		}
	}
	return s
}

func (s *session) close() {
	for _, o := range s.objs {
		if o.obj != nil {
			o.obj.Close()
		}
	}
}

// unnamed groups the locations with an address and no line by mapping,
// in mapping order (locations without a mapping last).
func (s *session) unnamed() []*group {
	by := map[*pprofile.Mapping]*group{}
	var out []*group
	for _, l := range s.p.Location {
		if l.Address == 0 || len(l.Line) > 0 {
			continue
		}
		g := by[l.Mapping]
		if g == nil {
			g = &group{m: l.Mapping}
			by[l.Mapping] = g
			out = append(out, g)
		}
		g.locs = append(g.locs, l)
	}
	sort.SliceStable(out, func(i, j int) bool { return mappingOrder(out[i].m) < mappingOrder(out[j].m) })
	return out
}

func mappingOrder(m *pprofile.Mapping) uint64 {
	if m == nil {
		return ^uint64(0)
	}
	return m.ID
}

// symbolizeMapping names what it can of one group.
func (s *session) symbolizeMapping(g *group) MappingReport {
	r := MappingReport{Locations: len(g.locs)}
	if g.m == nil {
		r.Why = "the locations have no mapping: nothing says which file their addresses are in"
		return r
	}
	r.File, r.BuildID = g.m.File, g.m.BuildID
	if Unsymbolizable(g.m) {
		r.Skipped, r.Why = true, "not a file symbols can come from"
		return r
	}
	at, err := s.lc.locate(g.m)
	if err != nil {
		r.Why = err.Error()
		return r
	}
	obj, err := s.open(at.Path)
	if err != nil {
		r.Why = err.Error()
		if len(at.Refused) > 0 {
			r.Why += "; refused for their build ID: " + joinFirst(at.Refused, 3)
		}
		return r
	}
	r.ServedBy, r.By = at.Path, at.By
	files, lines := true, true
	for _, l := range g.locs {
		frames := obj.Frames(g.m, s.lookupPC(l))
		if len(frames) == 0 {
			continue
		}
		r.Named++
		for _, f := range frames {
			files = files && f.File != ""
			lines = lines && f.Line > 0
			l.Line = append(l.Line, pprofile.Line{Function: s.function(f), Line: f.Line})
		}
	}
	if r.Named == r.Locations {
		g.m.HasFunctions, g.m.HasFilenames, g.m.HasLineNumbers = true, files, lines
	}
	return r
}

// kernelHalf is where the kernel's half of a 64-bit address space starts
// (x86-64 and arm64 map the kernel at the top).
const kernelHalf = 1 << 63

// lookupPC is the address to look l up at: one byte into the call for
// return addresses of callers (Options.ReturnAddresses).
func (s *session) lookupPC(l *pprofile.Location) uint64 {
	if s.leaf != nil && !s.leaf[l] && l.Address > 0 {
		return l.Address - 1
	}
	return l.Address
}

// open opens a located file once: a perf map by its name, anything else
// as an ELF object.
func (s *session) open(path string) (Object, error) {
	if o, ok := s.objs[path]; ok {
		return o.obj, o.err
	}
	var o objOrErr
	if IsPerfMap(path) {
		pm, err := OpenPerfMap(path)
		if err == nil {
			o.obj = pm
		}
		o.err = err
	} else {
		o.obj, o.err = OpenObject(path)
	}
	if o.err != nil && !strings.Contains(o.err.Error(), path) {
		o.err = fmt.Errorf("%s: %w", path, o.err)
	}
	s.objs[path] = o
	return o.obj, o.err
}

// function returns the profile's Function for a frame, adding it when new.
func (s *session) function(f SymFrame) *pprofile.Function {
	key := SymFrame{Name: f.Name, SystemName: f.SystemName, File: f.File}
	if fn := s.funcs[key]; fn != nil {
		return fn
	}
	s.maxID++
	fn := &pprofile.Function{ID: s.maxID, Name: f.Name, SystemName: f.SystemName, Filename: f.File}
	s.p.Function = append(s.p.Function, fn)
	s.funcs[key] = fn
	return fn
}

// shares fills in the share of the first sample type's value left unnamed,
// per mapping and in all.
func (s *session) shares(rep *Report, groups []*group) {
	var total int64
	left := make([]int64, len(groups))
	var any int64
	index := map[*pprofile.Mapping]int{}
	for i, g := range groups {
		index[g.m] = i
	}
	seen := make([]bool, len(groups))
	for _, smp := range s.p.Sample {
		if len(smp.Value) == 0 {
			continue
		}
		v := smp.Value[0]
		total += v
		clear(seen)
		hit := false
		for _, l := range smp.Location {
			if l.Address == 0 || len(l.Line) > 0 {
				continue
			}
			if i, ok := index[l.Mapping]; ok && !seen[i] {
				seen[i] = true
				left[i] += v
				hit = hit || !rep.Mappings[i].Skipped
			}
		}
		if hit {
			any += v
		}
	}
	if total <= 0 {
		return
	}
	for i := range rep.Mappings {
		rep.Mappings[i].Share = float64(left[i]) / float64(total)
	}
	rep.Share = float64(any) / float64(total)
}

// Unnamed returns the mappings of the report that kept unnamed locations
// and are worth a warning (not Skipped).
func (r *Report) Unnamed() []MappingReport {
	var out []MappingReport
	for _, m := range r.Mappings {
		if !m.Skipped && m.Named < m.Locations {
			out = append(out, m)
		}
	}
	return out
}

// Warning is one line saying what stayed unsymbolized, "" when nothing
// (besides Skipped mappings) did: how many mappings, the share of the
// sampled value in samples they touch, and for each its file, build ID
// and why.
//
//	symbols: 2 mappings unsymbolized (31.2% of samples): libfoo.so (build ID 1a2b3c4d5e6f…): no file found in ...; ...
func (r *Report) Warning() string {
	var w []string
	if un := r.Unnamed(); len(un) > 0 {
		parts := make([]string, len(un))
		for i, m := range un {
			parts[i] = m.describe()
		}
		w = append(w, fmt.Sprintf("symbols: %d mapping%s unsymbolized (%s of samples): %s", len(un), plural(len(un)), percent(r.Share), joinFirst(parts, 5)))
	}
	if len(r.Problems) > 0 {
		w = append(w, "symbols: "+joinFirst(r.Problems, 3))
	}
	return strings.Join(w, "; ")
}

// describe is "file (build ID x…): why", with the named part when some
// locations were named.
func (m MappingReport) describe() string {
	name := m.File
	if name == "" {
		name = "(no mapping)"
	}
	if m.BuildID != "" {
		name += " (build ID " + shortID(m.BuildID) + ")"
	}
	why := m.Why
	if m.ServedBy != "" {
		why = fmt.Sprintf("%s named %d of %d addresses", m.ServedBy, m.Named, m.Locations)
	}
	return name + ": " + why
}

// Served lists, one line each, which file served which mapping and how it
// matched: "symbols: /tmp/prog served prog (by build ID): 15 of 15 addresses named".
func (r *Report) Served() []string {
	var out []string
	for _, m := range r.Mappings {
		if m.ServedBy != "" {
			out = append(out, fmt.Sprintf("symbols: %s served %s (by %s): %d of %d addresses named", m.ServedBy, m.File, m.By, m.Named, m.Locations))
		}
	}
	return out
}

func percent(f float64) string {
	p := 100 * f
	if p > 0 && p < 0.1 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", p)
}
