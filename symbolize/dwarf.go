package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"slices"
	"strings"
)

// dwarfIndex finds the compilation unit of an address by binary search
// over the units' address ranges, built once from the unit headers; a
// unit's line rows and function tree are read on its first lookup and
// kept (see dwarfUnit).
type dwarfIndex struct {
	d      *dwarf.Data
	ranges []topSpan // the units' ranges (node: the unit), sorted by lo
	units  []*dwarfUnit
	aux    *dwarf.Reader           // reads abstract origins and specifications
	names  map[dwarf.Offset]string // their names
	err    error                   // the first unit that could not be read
	// relocatable: an ET_REL object, whose sections all start at 0
	relocatable bool
}

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, the linkage name of
// producers older than DWARF 4.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// maxOriginDepth bounds the chain of abstract origins and specifications
// followed for a name (a malformed file may loop).
const maxOriginDepth = 8

// hasDWARF says whether the file holds DWARF function information.
func hasDWARF(ef *elf.File) bool {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := ef.Section(name); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
			return true
		}
	}
	return false
}

// dwarfSections are the DWARF sections names and lines are read from;
// the others (.debug_frame, .debug_loc, .debug_loclists, .debug_types: a
// third of cmd/go's DWARF) are not decompressed.
var dwarfSections = []string{"abbrev", "info", "str", "line", "ranges",
	"addr", "line_str", "str_offsets", "rnglists"}

// loadDWARF reads the DWARF sections that name functions and lines. A
// relocatable object, or one with old-style .zdebug sections, is left to
// elf.File.DWARF, which reads them all.
func loadDWARF(ef *elf.File) (*dwarf.Data, error) {
	if ef.Type == elf.ET_REL || slices.ContainsFunc(ef.Sections, func(s *elf.Section) bool {
		return strings.HasPrefix(s.Name, ".zdebug_")
	}) {
		return ef.DWARF()
	}
	dat := map[string][]byte{}
	for _, name := range dwarfSections {
		s := ef.Section(".debug_" + name)
		if s == nil || s.Type == elf.SHT_NOBITS {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", s.Name, err)
		}
		dat[name] = b
	}
	d, err := dwarf.New(dat["abbrev"], nil, nil, dat["info"], dat["line"], nil, dat["ranges"], dat["str"])
	if err != nil {
		return nil, err
	}
	for _, name := range dwarfSections[5:] {
		if b := dat[name]; b != nil {
			if err := d.AddSection(".debug_"+name, b); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// newDWARFIndex reads the unit headers of the file's DWARF. A unit whose
// header gives no ranges is read at once, its functions' ranges standing
// for it.
func newDWARFIndex(ef *elf.File) (*dwarfIndex, error) {
	d, err := loadDWARF(ef)
	if err != nil {
		return nil, fmt.Errorf("reading DWARF: %w", err)
	}
	ix := &dwarfIndex{d: d, aux: d.Reader(), names: map[dwarf.Offset]string{},
		relocatable: ef.Type == elf.ET_REL}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading DWARF units: %w", err)
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			if err := ix.addUnit(e); err != nil {
				return nil, err
			}
		}
		r.SkipChildren()
	}
	slices.SortStableFunc(ix.ranges, func(a, b topSpan) int { return cmpU64(a.lo, b.lo) })
	return ix, nil
}

// addUnit indexes the unit whose top entry is e.
func (ix *dwarfIndex) addUnit(e *dwarf.Entry) error {
	id := int32(len(ix.units))
	u := &dwarfUnit{off: e.Offset}
	ix.units = append(ix.units, u)
	rs, err := ix.d.Ranges(e)
	if err != nil || len(rs) == 0 {
		if err := ix.parse(u); err != nil {
			return err
		}
		for _, t := range u.tops {
			rs = append(rs, [2]uint64{t.lo, t.hi})
		}
	}
	for _, r := range rs {
		if ix.live(r) {
			ix.ranges = append(ix.ranges, topSpan{r[0], r[1], id})
		}
	}
	return nil
}

// live says whether an address range holds code: it is not empty, and it
// does not start at 0 in a linked file, where the linker leaves the DWARF
// of the functions it discarded (-Wl,--gc-sections, COMDAT duplicates).
func (ix *dwarfIndex) live(r [2]uint64) bool {
	return r[0] < r[1] && (r[0] != 0 || ix.relocatable)
}

// frames returns the inline chain at addr, innermost first, or nil when
// no function of the DWARF holds addr; line is the line table's file:line
// at addr (nil when none), for a caller that names addr otherwise.
func (ix *dwarfIndex) frames(addr uint64) (fr []SymFrame, line *SymFrame) {
	u := ix.unit(addr)
	if u == nil {
		return nil, nil
	}
	if !u.parsed {
		if err := ix.parse(u); err != nil && ix.err == nil {
			ix.err = err // what was read before the error is used
		}
	}
	file, ln, ok := u.line(addr)
	if ok {
		line = &SymFrame{File: file, Line: ln}
	}
	var buf [8]int32
	chain := u.chain(buf[:0], addr)
	if len(chain) == 0 {
		return nil, line
	}
	fr = make([]SymFrame, len(chain))
	for i, id := range chain { // chain is outermost first
		n := &u.nodes[id]
		f := &fr[len(chain)-1-i]
		f.Name, f.SystemName = n.display, n.name
		if i+1 < len(chain) {
			inner := &u.nodes[chain[i+1]]
			f.File, f.Line = inner.callFile, inner.callLine
		} else if ok {
			f.File, f.Line = file, ln
		}
	}
	return fr, line
}

// unit returns the unit whose ranges hold addr.
func (ix *dwarfIndex) unit(addr uint64) *dwarfUnit {
	if i := holding(ix.ranges, addr); i >= 0 {
		return ix.units[ix.ranges[i].node]
	}
	return nil
}

// entryName is the name a subprogram or inlined call goes by: its linkage
// name, else its name, else that of its abstract origin or specification.
func (ix *dwarfIndex) entryName(e *dwarf.Entry, depth int) string {
	for _, a := range []dwarf.Attr{dwarf.AttrLinkageName, attrMIPSLinkageName, dwarf.AttrName} {
		if s, ok := e.Val(a).(string); ok && s != "" {
			return s
		}
	}
	if depth >= maxOriginDepth {
		return ""
	}
	for _, a := range []dwarf.Attr{dwarf.AttrAbstractOrigin, dwarf.AttrSpecification} {
		if off, ok := e.Val(a).(dwarf.Offset); ok {
			return ix.originName(off, depth+1)
		}
	}
	return ""
}

// originName is the name of the entry at off, cached.
func (ix *dwarfIndex) originName(off dwarf.Offset, depth int) string {
	if s, ok := ix.names[off]; ok {
		return s
	}
	ix.aux.Seek(off)
	e, err := ix.aux.Next()
	s := ""
	if err == nil && e != nil {
		s = ix.entryName(e, depth)
	}
	ix.names[off] = s
	return s
}

// parse reads the unit's line table and function tree.
func (ix *dwarfIndex) parse(u *dwarfUnit) error {
	u.parsed = true
	r := ix.d.Reader()
	r.Seek(u.off)
	cu, err := r.Next()
	if err != nil || cu == nil {
		return fmt.Errorf("reading DWARF unit at %#x: %v", u.off, err)
	}
	var files []*dwarf.LineFile
	if lr, err := ix.d.LineReader(cu); err == nil && lr != nil {
		u.compDir, _ = cu.Val(dwarf.AttrCompDir).(string)
		files = u.readLines(lr)
	}
	if cu.Children {
		err = ix.readTree(u, r, files)
	}
	u.finish()
	return err
}

// readTree reads the subprograms and inlined calls of a unit, r being
// just past its top entry. Entries between (lexical blocks) are passed
// through; types are skipped.
func (ix *dwarfIndex) readTree(u *dwarfUnit, r *dwarf.Reader, files []*dwarf.LineFile) error {
	stack := []int32{-1} // the node children attach to, per open entry
	for len(stack) > 0 {
		e, err := r.Next()
		if err != nil {
			return fmt.Errorf("reading DWARF unit at %#x: %w", u.off, err)
		}
		if e == nil {
			return nil
		}
		if e.Tag == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		attach := stack[len(stack)-1]
		id, skip := attach, skipTag(e.Tag)
		if e.Tag == dwarf.TagSubprogram || e.Tag == dwarf.TagInlinedSubroutine {
			id, skip = ix.addNode(u, e, attach, files)
		}
		if skip && e.Children {
			r.SkipChildren()
		} else if e.Children {
			stack = append(stack, id)
		}
	}
	return nil
}

// skipTag says whether the children of a tag can hold no code (types).
func skipTag(t dwarf.Tag) bool {
	switch t {
	case dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType,
		dwarf.TagEnumerationType, dwarf.TagSubroutineType, dwarf.TagArrayType:
		return true
	}
	return false
}

// addNode adds a subprogram (a top node) or an inlined call (a child of
// parent) that has address ranges; one without (an abstract instance or a
// declaration) is skipped with its children.
func (ix *dwarfIndex) addNode(u *dwarfUnit, e *dwarf.Entry, parent int32, files []*dwarf.LineFile) (int32, bool) {
	rs, err := ix.d.Ranges(e)
	if err != nil || len(rs) == 0 {
		return parent, true
	}
	inlined := e.Tag == dwarf.TagInlinedSubroutine
	if inlined && parent < 0 {
		return parent, true
	}
	id := int32(len(u.nodes))
	n := dwarfNode{name: ix.entryName(e, 0), first: int32(len(u.spans))}
	n.display, _ = Demangle(n.name)
	for _, r := range rs {
		if ix.live(r) {
			u.spans = append(u.spans, span{r[0], r[1]})
		}
	}
	n.end = int32(len(u.spans))
	if inlined {
		if i, ok := e.Val(dwarf.AttrCallFile).(int64); ok && i >= 0 && i < int64(len(files)) && files[i] != nil {
			n.callFile = u.fileName(files[i].Name)
		}
		n.callLine, _ = e.Val(dwarf.AttrCallLine).(int64)
		u.nodes[parent].kids = append(u.nodes[parent].kids, id)
	} else {
		for _, s := range u.spans[n.first:n.end] {
			u.tops = append(u.tops, topSpan{s.lo, s.hi, id})
		}
	}
	u.nodes = append(u.nodes, n)
	return id, false
}
