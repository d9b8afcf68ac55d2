// Package build assembles a *pprofile.Profile for profdiff's format
// readers. It interns functions, locations and mappings under keys the
// reader chooses (what makes two frames the same differs by format) and
// numbers each kind 1, 2, ... in the order it is first added, so that IDs,
// and every output made from them, follow the input and never map order.
package build

import (
	"fmt"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

// Builder adds to one profile. FK is the reader's key of a function, LK of
// a location; mappings are keyed by their file. The zero value is not
// usable; call New.
type Builder[FK, LK comparable] struct {
	P     *pprofile.Profile
	funcs map[FK]*pprofile.Function
	locs  map[LK]*pprofile.Location
	maps  map[string]*pprofile.Mapping
}

// New returns a builder adding to p, or to a new empty profile when p is
// nil. p's Function, Location and Mapping lists should be empty: IDs are
// positions in them.
func New[FK, LK comparable](p *pprofile.Profile) *Builder[FK, LK] {
	if p == nil {
		p = &pprofile.Profile{}
	}
	return &Builder[FK, LK]{
		P:     p,
		funcs: map[FK]*pprofile.Function{},
		locs:  map[LK]*pprofile.Location{},
		maps:  map[string]*pprofile.Mapping{},
	}
}

// Function returns the function filed under key; when there is none it
// adds a copy of fn (its ID set) under key.
func (b *Builder[FK, LK]) Function(key FK, fn pprofile.Function) *pprofile.Function {
	if f, ok := b.funcs[key]; ok {
		return f
	}
	f := new(pprofile.Function) // a copy, so that fn does not escape on a hit
	*f = fn
	b.AddFunction(f)
	b.funcs[key] = f
	return f
}

// Location returns the location filed under key, if any. A reader builds
// a new one (its lines need functions that may be new too) and files it
// with AddLocationAs.
func (b *Builder[FK, LK]) Location(key LK) (*pprofile.Location, bool) {
	l, ok := b.locs[key]
	return l, ok
}

// AddLocationAs adds l (its ID set) and files it under key.
func (b *Builder[FK, LK]) AddLocationAs(key LK, l *pprofile.Location) *pprofile.Location {
	b.AddLocation(l)
	b.locs[key] = l
	return l
}

// Mapping returns the mapping of a module or binary file, adding it when
// new. Its frames are already symbolized (HasFunctions).
func (b *Builder[FK, LK]) Mapping(file string) *pprofile.Mapping {
	m, ok := b.maps[file]
	if !ok {
		m = b.AddMapping(&pprofile.Mapping{File: file, HasFunctions: true})
		b.maps[file] = m
	}
	return m
}

// AddFunction numbers fn and appends it, for readers that intern by their
// own dense index.
func (b *Builder[FK, LK]) AddFunction(fn *pprofile.Function) *pprofile.Function {
	fn.ID = uint64(len(b.P.Function) + 1)
	b.P.Function = append(b.P.Function, fn)
	return fn
}

// AddLocation numbers l and appends it.
func (b *Builder[FK, LK]) AddLocation(l *pprofile.Location) *pprofile.Location {
	l.ID = uint64(len(b.P.Location) + 1)
	b.P.Location = append(b.P.Location, l)
	return l
}

// AddMapping numbers m and appends it.
func (b *Builder[FK, LK]) AddMapping(m *pprofile.Mapping) *pprofile.Mapping {
	m.ID = uint64(len(b.P.Mapping) + 1)
	b.P.Mapping = append(b.P.Mapping, m)
	return m
}

// AddSample appends s.
func (b *Builder[FK, LK]) AddSample(s *pprofile.Sample) { b.P.Sample = append(b.P.Sample, s) }

// SplitModule splits a TraceEvent-style `Module!Function` frame name, the
// way folded stacks and speedscope frames carry .NET modules: the module
// must be non-empty and free of spaces and of ; < > ( ), the function
// non-empty. Otherwise module is "" and name the whole frame.
func SplitModule(frame string) (module, name string) {
	if i := strings.IndexByte(frame, '!'); i > 0 && i < len(frame)-1 && !strings.ContainsAny(frame[:i], " ;<>()") {
		return frame[:i], frame[i+1:]
	}
	return "", frame
}

// Check is p.CheckValid, the same checks with the same messages, made by
// index for a profile numbered as a Builder numbers it (every mapping,
// function and location ID its position plus one), without the three
// maps CheckValid fills: for a profile of millions of distinct frames
// those maps were a third of the time and the peak memory of loading it.
// A profile numbered otherwise gets CheckValid.
func Check(p *pprofile.Profile) error {
	if !dense(p) {
		return p.CheckValid()
	}
	if len(p.SampleType) == 0 && len(p.Sample) != 0 {
		return fmt.Errorf("missing sample type information")
	}
	for _, s := range p.Sample {
		if s == nil {
			return fmt.Errorf("profile has nil sample")
		}
		if len(s.Value) != len(p.SampleType) {
			return fmt.Errorf("mismatch: sample has %d values vs. %d types", len(s.Value), len(p.SampleType))
		}
		for _, l := range s.Location {
			if l == nil {
				return fmt.Errorf("sample has nil location")
			}
		}
	}
	for _, l := range p.Location {
		if m := l.Mapping; m != nil && !inTable(p.Mapping, m.ID, m) {
			return fmt.Errorf("inconsistent mapping %p: %d", m, m.ID)
		}
		for _, ln := range l.Line {
			f := ln.Function
			if f == nil {
				return fmt.Errorf("location id: %d has a line with nil function", l.ID)
			}
			if !inTable(p.Function, f.ID, f) {
				return fmt.Errorf("inconsistent function %p: %d", f, f.ID)
			}
		}
	}
	return nil
}

// inTable reports whether x is the element of a densely numbered table
// with the given ID.
func inTable[T comparable](table []T, id uint64, x T) bool {
	return id != 0 && id <= uint64(len(table)) && table[id-1] == x
}

// dense reports whether every mapping, function and location of p is
// non-nil with its position plus one as ID (so IDs are also unique and
// none is the reserved 0).
func dense(p *pprofile.Profile) bool {
	for i, m := range p.Mapping {
		if m == nil || m.ID != uint64(i+1) {
			return false
		}
	}
	for i, f := range p.Function {
		if f == nil || f.ID != uint64(i+1) {
			return false
		}
	}
	for i, l := range p.Location {
		if l == nil || l.ID != uint64(i+1) {
			return false
		}
	}
	return true
}
