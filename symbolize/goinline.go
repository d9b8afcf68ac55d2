package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The inline tree of a Go pclntab. The compiler records, for each function
// with inlined calls, a table (FUNCDATA_InlTree) of the calls it inlined,
// and a pc-value table (PCDATA_InlTreeIndex) giving, at each pc, the index
// in that table of the innermost inlined call the pc belongs to (-1: the
// function's own code). An entry names the inlined function and a pc
// (parentPc, an offset from the function's entry) whose position is the
// call site: the file:line of the caller's frame is the line table's at
// that pc, and the caller's own entry is the index there (Go 1.20 and
// later; before, each entry held its parent's index). This is how the
// runtime expands inlined frames in tracebacks (runtime/symtabinl.go);
// debug/gosym does not expose it, so a Go binary without DWARF lost its
// inlined frames here, as in go tool pprof.
//
// The layouts read (runtime/symtab.go, runtime2.go and cmd/link of each
// version; amd64 and other 64- and 32-bit targets):
//
//	magic       Go          ftab entry          _func fixed part   funcdata        inlinedCall
//	0xfffffffb  1.12–1.15   pc, offset (ptr)    ptr+32 bytes       pointers        20 bytes, parent index
//	0xfffffffa  1.16–1.17   pc, offset (ptr)    ptr+36             pointers        20 bytes, parent index
//	0xfffffff0  1.18–1.19   pc−text, offset u32 40                 u32 from gofunc 20 bytes, parent index
//	0xfffffff1  1.20–       pc−text, offset u32 44 (startLine)     u32 from gofunc 16 bytes, parentPc only
//
// The pcdata and funcdata indexes of the tree are 2 and 3 since Go 1.16,
// 2 and 4 in Go 1.13 to 1.15, and 1 and 2 in Go 1.12; as 1.12 to 1.15 share
// a magic number, the version the linker wrote into .go.buildinfo (Go 1.13
// and later) decides. Go 1.12's tables, which have no .go.buildinfo, and
// those of Go 1.2 to 1.11, whose tree had another layout, are not
// expanded (the physical function is still named).

// pclntab magic numbers (internal/abi.PCLnTabMagic).
const (
	pclnGo12  = 0xfffffffb
	pclnGo116 = 0xfffffffa
	pclnGo118 = 0xfffffff0
	pclnGo120 = 0xfffffff1
)

// maxInlineDepth bounds a chain of inlined calls: a malformed tree may
// loop. The compiler's inlining budget keeps real chains far shorter.
const maxInlineDepth = 256

// errInlineTree is wrapped by the errors of a malformed inline tree.
var errInlineTree = errors.New("malformed inline tree")

// goInline reads the inline tree of one pclntab.
type goInline struct {
	order   binary.ByteOrder
	ver     int // 112, 116, 118 or 120: the format (see the table above)
	ptr     int // pointer size
	quantum uint64
	text    uint64 // what 1.18+ function offsets count from
	gofunc  uint64 // what 1.18+ funcdata offsets count from
	nfunc   int
	names   []byte    // the function names (Go 1.13–1.15: the whole table)
	pctab   []byte    // the pc-value tables (Go 1.13–1.15: the whole table)
	funcs   []byte    // the function table and the _func records
	funcsAt int       // funcs' offset in the pclntab, for 1.13–1.17's funcdata alignment
	ftabAt  int       // where the function table starts in funcs
	mem     memReader // where the trees are
	// the indexes of the tree's pcdata (PCDATA_InlTreeIndex) and funcdata
	// (FUNCDATA_InlTree)
	pcdataInl, funcdataInl uint32
}

// goInlined is one inlined call at a pc: the function inlined, and the
// address whose file:line is the call site in its caller.
type goInlined struct {
	name   string
	parent uint64
}

// newGoInline reads the header of the pclntab data. text is runtime.text;
// gofunc the module's go:func.* (Go 1.18 and later; 0 if unknown); mem
// reads the file's memory image, where the trees are. It returns nil, nil
// where the tree is not read: a Go 1.2 to 1.12 table, or a Go 1.18+ one
// whose go:func.* is not known.
func newGoInline(data []byte, order binary.ByteOrder, text, gofunc uint64, mem memReader) (*goInline, error) {
	if len(data) < 8 || data[4] != 0 || data[5] != 0 {
		return nil, fmt.Errorf("%w: no pclntab header", errInlineTree)
	}
	g := &goInline{order: order, quantum: uint64(data[6]), ptr: int(data[7]), text: text, gofunc: gofunc, mem: mem,
		pcdataInl: 2, funcdataInl: 3}
	if g.ptr != 4 && g.ptr != 8 || g.quantum == 0 {
		return nil, fmt.Errorf("%w: pointer size %d, instruction size %d", errInlineTree, g.ptr, g.quantum)
	}
	word := func(i int) int {
		v, ok := g.uptr(data, 8+i*g.ptr)
		if !ok || v > uint64(len(data)) {
			return -1
		}
		return int(v)
	}
	var names, pctab, funcs int
	switch magic := order.Uint32(data); magic {
	case pclnGo12:
		g.ver, names, pctab, funcs, g.ftabAt = 112, 0, 0, 0, 8+g.ptr
		if minor := goMinor(goVersion(mem, order)); minor < 13 || minor > 15 {
			return nil, nil // Go 1.2 to 1.12: not read
		}
		g.funcdataInl = 4
	case pclnGo116:
		g.ver, names, pctab, funcs = 116, word(2), word(5), word(6)
	case pclnGo118, pclnGo120:
		g.ver, names, pctab, funcs = 118, word(3), word(6), word(7)
		if magic == pclnGo120 {
			g.ver = 120
		}
		if gofunc == 0 {
			return nil, nil // no module data to locate the trees (a 32-bit binary)
		}
	default:
		return nil, fmt.Errorf("%w: unknown pclntab version %#x", errInlineTree, magic)
	}
	g.nfunc = word(0)
	if g.nfunc < 0 || names < 0 || pctab < 0 || funcs < 0 {
		return nil, fmt.Errorf("%w: pclntab header out of range", errInlineTree)
	}
	g.names, g.pctab, g.funcs, g.funcsAt = data[names:], data[pctab:], data[funcs:], funcs
	if g.ftabAt+(g.nfunc+1)*g.ftabEntry() > len(g.funcs) {
		return nil, fmt.Errorf("%w: function table of %d entries past the end", errInlineTree, g.nfunc)
	}
	return g, nil
}

// ftabEntry is the size of an entry of the function table.
func (g *goInline) ftabEntry() int {
	if g.ver >= 118 {
		return 8
	}
	return 2 * g.ptr
}

// u32 reads a uint32 at off in b; false when it is not all there.
func (g *goInline) u32(b []byte, off int) (uint32, bool) {
	if off < 0 || off > len(b)-4 {
		return 0, false
	}
	return g.order.Uint32(b[off:]), true
}

// uptr reads a pointer-sized word at off in b.
func (g *goInline) uptr(b []byte, off int) (uint64, bool) {
	if g.ptr == 4 {
		v, ok := g.u32(b, off)
		return uint64(v), ok
	}
	if off < 0 || off > len(b)-8 {
		return 0, false
	}
	return g.order.Uint64(b[off:]), true
}

// entry returns the address where function i of the table starts and
// the offset of its _func record in funcs.
func (g *goInline) entry(i int) (pc uint64, rec int) {
	at := g.ftabAt + i*g.ftabEntry()
	if g.ver >= 118 {
		e, _ := g.u32(g.funcs, at)
		r, _ := g.u32(g.funcs, at+4)
		return g.text + uint64(e), int(r)
	}
	e, _ := g.uptr(g.funcs, at)
	r, _ := g.uptr(g.funcs, at+g.ptr)
	return e, int(min(r, uint64(len(g.funcs))))
}

// goFunc is a function's _func record.
type goFunc struct {
	entry              uint64
	rec                int // its offset in funcs
	fixed              int // the size of the fixed part, where pcdata starts
	npcdata, nfuncdata uint32
}

// find returns the function holding pc; false when none does.
func (g *goInline) find(pc uint64) (goFunc, bool) {
	i := sort.Search(g.nfunc, func(i int) bool { e, _ := g.entry(i); return e > pc }) - 1
	if end, _ := g.entry(g.nfunc); i < 0 || pc >= end {
		return goFunc{}, false
	}
	f := goFunc{}
	f.entry, f.rec = g.entry(i)
	var np int
	switch g.ver {
	case 112:
		f.fixed, np = g.ptr+32, g.ptr+24
	case 116:
		f.fixed, np = g.ptr+36, g.ptr+24
	case 118:
		f.fixed, np = 40, 28
	default:
		f.fixed, np = 44, 28
	}
	var ok bool
	if f.npcdata, ok = g.u32(g.funcs, f.rec+np); !ok || f.rec+f.fixed > len(g.funcs) {
		return goFunc{}, false
	}
	f.nfuncdata = uint32(g.funcs[f.rec+f.fixed-1])
	return f, true
}

// pcvalue returns the value at pc of the pc-value table at off in pctab
// (-1 where it has none): a sequence of (value delta, pc delta) varint
// pairs from the function's entry, the value delta zig-zag encoded, the pc
// delta in instruction quanta, ended by a zero value delta.
func (g *goInline) pcvalue(off uint32, entry, pc uint64) (int32, error) {
	if off == 0 {
		return -1, nil
	}
	if uint64(off) >= uint64(len(g.pctab)) {
		return -1, fmt.Errorf("%w: pc-value table at %#x past the end", errInlineTree, off)
	}
	p := g.pctab[off:]
	val, at := int32(-1), entry
	for {
		first := at == entry
		uv, n := binary.Uvarint(p)
		if n <= 0 {
			return -1, fmt.Errorf("%w: pc-value table at %#x cut short", errInlineTree, off)
		}
		if uv == 0 && !first {
			return -1, nil // the table does not cover pc
		}
		p = p[n:]
		d := uint32(uv)
		val += int32(-(d & 1) ^ (d >> 1))
		pd, n := binary.Uvarint(p)
		if n <= 0 {
			return -1, fmt.Errorf("%w: pc-value table at %#x cut short", errInlineTree, off)
		}
		p = p[n:]
		at += uint64(uint32(pd)) * g.quantum
		if pc < at {
			return val, nil
		}
	}
}

// pcdata returns the value of f's pc-value table i at pc.
func (g *goInline) pcdata(f goFunc, i uint32, pc uint64) (int32, error) {
	if i >= f.npcdata {
		return -1, nil
	}
	off, ok := g.u32(g.funcs, f.rec+f.fixed+4*int(i))
	if !ok {
		return -1, fmt.Errorf("%w: pcdata of the function at %#x past the end", errInlineTree, f.entry)
	}
	return g.pcvalue(off, f.entry, pc)
}

// funcdata returns the address of f's funcdata i; 0 when it has none.
func (g *goInline) funcdata(f goFunc, i uint32) (uint64, error) {
	if i >= f.nfuncdata {
		return 0, nil
	}
	at := f.rec + f.fixed + 4*int(f.npcdata)
	if g.ver >= 118 {
		off, ok := g.u32(g.funcs, at+4*int(i))
		if !ok {
			return 0, fmt.Errorf("%w: funcdata of the function at %#x past the end", errInlineTree, f.entry)
		}
		if off == ^uint32(0) {
			return 0, nil
		}
		return g.gofunc + uint64(off), nil
	}
	if g.ptr == 8 && (g.funcsAt+at)%8 != 0 { // the pointers are aligned
		at += 4
	}
	p, ok := g.uptr(g.funcs, at+g.ptr*int(i))
	if !ok {
		return 0, fmt.Errorf("%w: funcdata of the function at %#x past the end", errInlineTree, f.entry)
	}
	return p, nil
}

// inlined returns the calls inlined at pc, innermost first; none for a
// pc outside any function or in a function's own code.
func (g *goInline) inlined(pc uint64) ([]goInlined, error) {
	f, ok := g.find(pc)
	if !ok {
		return nil, nil
	}
	tree, err := g.funcdata(f, g.funcdataInl)
	if err != nil || tree == 0 {
		return nil, err
	}
	idx, err := g.pcdata(f, g.pcdataInl, pc)
	var calls []goInlined
	for err == nil && idx >= 0 {
		if len(calls) == maxInlineDepth {
			return nil, fmt.Errorf("%w: more than %d calls deep at %#x", errInlineTree, maxInlineDepth, pc)
		}
		size := 20
		if g.ver >= 120 {
			size = 16
		}
		rec := g.mem.read(tree+uint64(idx)*uint64(size), size)
		if rec == nil {
			return nil, fmt.Errorf("%w: entry %d of the tree at %#x is not in the file", errInlineTree, idx, tree)
		}
		var name, parentPC int32
		if g.ver >= 120 {
			name, parentPC = int32(g.order.Uint32(rec[4:])), int32(g.order.Uint32(rec[8:]))
		} else {
			name, parentPC = int32(g.order.Uint32(rec[12:])), int32(g.order.Uint32(rec[16:]))
		}
		if name < 0 || int(name) >= len(g.names) || parentPC < 0 {
			return nil, fmt.Errorf("%w: entry %d of the tree at %#x out of range", errInlineTree, idx, tree)
		}
		call := goInlined{name: cstring(g.names[name:]), parent: f.entry + uint64(parentPC)}
		calls = append(calls, call)
		if g.ver >= 120 {
			idx, err = g.pcdata(f, g.pcdataInl, call.parent)
		} else {
			idx = int32(int16(g.order.Uint16(rec)))
		}
	}
	return calls, err
}

// goVersion returns the Go version that .go.buildinfo names in Go 1.13
// to 1.17 binaries: after a 16-byte header ("\xff Go buildinf:", the
// pointer size, the byte order), a pointer to runtime.buildVersion, a Go
// string. "" when there is none.
func goVersion(mem memReader, order binary.ByteOrder) string {
	m, ok := mem.(*memory)
	if !ok {
		return ""
	}
	s := m.ef.Section(".go.buildinfo")
	if s == nil {
		return ""
	}
	hdr := m.read(s.Addr, 32)
	if hdr == nil || string(hdr[:14]) != "\xff Go buildinf:" || hdr[14] != 8 {
		return ""
	}
	str := m.read(order.Uint64(hdr[16:]), 16)
	if str == nil {
		return ""
	}
	v := m.read(order.Uint64(str), int(min(order.Uint64(str[8:]), 64)))
	return string(v)
}

// goMinor returns the minor version of a "go1.N..." version; 0 if none.
func goMinor(v string) int {
	n := 0
	for _, c := range strings.TrimPrefix(v, "go1.") {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	if !strings.HasPrefix(v, "go1.") {
		return 0
	}
	return n
}

// memReader reads n bytes at a virtual address; nil where the image has
// not all of them.
type memReader interface {
	read(addr uint64, n int) []byte
}

// memory reads a file's allocated sections by virtual address; each
// section's bytes are read on first use and kept.
type memory struct {
	ef   *elf.File
	data map[*elf.Section][]byte
}

// read returns the n bytes at addr; nil if no section holds them all.
func (m *memory) read(addr uint64, n int) []byte {
	for _, s := range m.ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || addr < s.Addr || addr-s.Addr >= s.Size {
			continue
		}
		b, ok := m.data[s]
		if !ok {
			b, _ = s.Data()
			m.data[s] = b
		}
		off := addr - s.Addr
		if off+uint64(n) > uint64(len(b)) {
			return nil
		}
		return b[off : off+uint64(n)]
	}
	return nil
}
