package symbolize

import (
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"fmt"
)

// goTable is a Go binary's pclntab, read on the first lookup: debug/gosym
// names the physical function of an address and the file:line of any pc;
// goInline reads the inline tree, which debug/gosym does not expose.
type goTable struct {
	ef     *elf.File
	sect   *elf.Section
	text   uint64
	module *goModule // nil when not found
	built  bool
	tab    *gosym.Table // nil when the table cannot be read
	inl    *goInline    // nil when the inline tree cannot be read
	err    error        // why either cannot
}

// newGoTable finds the pclntab: .gopclntab, or .data.rel.ro.gopclntab in a
// PIE or externally linked binary; nil when the file has none. Its
// function offsets start at runtime.text (text, from the symbol table),
// which an external linker places after the C code at the start of
// .text; without the symbol (-ldflags=-s), the module data the linker
// wrote says where, else .text is taken, as go tool addr2line does.
func newGoTable(ef *elf.File, text uint64) *goTable {
	s := ef.Section(".gopclntab")
	if s == nil {
		s = ef.Section(".data.rel.ro.gopclntab")
	}
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 {
		return nil
	}
	t := &goTable{ef: ef, sect: s, text: text}
	sect := ef.Section(".text")
	if sect != nil {
		t.module = findModule(ef, s.Addr, sect)
	}
	if sect != nil && text == 0 {
		if t.text = t.module.word(moduleTextOffset); t.text == 0 {
			t.text = sect.Addr
		}
	}
	return t
}

// Where runtime.moduledata holds text: after the pcHeader pointer, six
// slices (funcnametab, cutab, filetab, pctab, pclntable, ftab),
// findfunctab, minpc and maxpc (Go 1.16 to 1.26, 64-bit); and gofunc,
// after etext, noptrdata, enoptrdata, data, edata, bss, ebss, noptrbss,
// enoptrbss, end, gcdata, gcbss, types, etypes and rodata (Go 1.18 and
// 1.19), and covctrs, ecovctrs (Go 1.20 to 1.26).
const (
	moduleTextOffset      = 8 + 6*24 + 3*8
	moduleGofuncOffset    = moduleTextOffset + 18*8
	moduleGofunc118Offset = moduleTextOffset + 16*8
)

// goModule is runtime.firstmoduledata as the linker wrote it (.go.module
// since Go 1.26, else .noptrdata): the record starts with the pclntab's
// address, and its text lies in .text. In a PIE its pointers are zero
// and the dynamic relocations (R_*_RELATIVE) hold them.
type goModule struct {
	b      []byte            // the record, to the end of its section
	addr   uint64            // its address
	relocs map[uint64]uint64 // the relocated words of its section: address → value
	order  binary.ByteOrder
}

// findModule returns the module data of the pclntab at pcln; nil when it
// is not found (or the file is not 64-bit).
func findModule(ef *elf.File, pcln uint64, text *elf.Section) *goModule {
	if ef.Class != elf.ELFCLASS64 {
		return nil
	}
	for _, name := range []string{".go.module", ".noptrdata"} {
		s := ef.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS || s.Size > 64<<20 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		sect := &goModule{b: b, addr: s.Addr, relocs: relativeRelocs(ef, s), order: ef.ByteOrder}
		for i := 0; i+moduleGofuncOffset+8 <= len(b); i += 8 {
			m := &goModule{b: b[i:], addr: s.Addr + uint64(i), relocs: sect.relocs, order: ef.ByteOrder}
			if m.word(0) != pcln {
				continue
			}
			if v := m.word(moduleTextOffset); v >= text.Addr && v-text.Addr < text.Size {
				return m
			}
		}
	}
	return nil
}

// word returns the pointer at off in the record: as written, or where
// the file has zero there, as a dynamic relocation sets it. 0 for a nil
// module.
func (m *goModule) word(off int) uint64 {
	if m == nil || off+8 > len(m.b) {
		return 0
	}
	if v := m.order.Uint64(m.b[off:]); v != 0 {
		return v
	}
	return m.relocs[m.addr+uint64(off)]
}

// relativeRelocs returns the R_*_RELATIVE relocations (ELF64 RELA) of the
// words in section s: their address and the value they set.
func relativeRelocs(ef *elf.File, s *elf.Section) map[uint64]uint64 {
	var relative uint32
	switch ef.Machine {
	case elf.EM_X86_64:
		relative = uint32(elf.R_X86_64_RELATIVE)
	case elf.EM_AARCH64:
		relative = uint32(elf.R_AARCH64_RELATIVE)
	default:
		return nil
	}
	var relocs map[uint64]uint64
	for _, r := range ef.Sections {
		if r.Type != elf.SHT_RELA || r.Size > 256<<20 {
			continue
		}
		b, err := r.Data()
		if err != nil {
			continue
		}
		for ; len(b) >= 24; b = b[24:] {
			off, info := ef.ByteOrder.Uint64(b), ef.ByteOrder.Uint64(b[8:])
			if elf.R_TYPE64(info) != relative || off < s.Addr || off-s.Addr >= s.Size {
				continue
			}
			if relocs == nil {
				relocs = map[uint64]uint64{}
			}
			relocs[off] = ef.ByteOrder.Uint64(b[16:])
		}
	}
	return relocs
}

// build reads the table, and its inline tree where it can.
func (t *goTable) build() {
	t.built = true
	data, err := t.sect.Data()
	if err == nil {
		t.tab, err = gosym.NewTable(nil, gosym.NewLineTable(data, t.text))
	}
	if err != nil {
		t.tab, t.err = nil, fmt.Errorf("reading %s: %w", t.sect.Name, err)
		return
	}
	if len(data) < 4 {
		return
	}
	gofunc := t.module.word(moduleGofuncOffset)
	switch t.ef.ByteOrder.Uint32(data) {
	case pclnGo118:
		gofunc = t.module.word(moduleGofunc118Offset)
	}
	mem := &memory{ef: t.ef, data: map[*elf.Section][]byte{t.sect: data}}
	if t.inl, err = newGoInline(data, t.ef.ByteOrder, t.text, gofunc, mem); err != nil {
		t.err = fmt.Errorf("reading %s: %w", t.sect.Name, err)
	}
}

// frames names addr: the calls inlined there, innermost first, each at the
// file:line of the pc, then of the call site in it, and last the physical
// function. An inline tree that turns out malformed is dropped (t.err
// says why) and the physical function alone is named from then on.
func (t *goTable) frames(addr uint64) []SymFrame {
	if !t.built {
		t.build()
	}
	if t.tab == nil {
		return nil
	}
	file, line, fn := t.tab.PCToLine(addr)
	if fn == nil {
		return nil
	}
	var calls []goInlined
	if t.inl != nil {
		var err error
		if calls, err = t.inl.inlined(addr); err != nil {
			t.inl, t.err, calls = nil, fmt.Errorf("reading %s: %w", t.sect.Name, err), nil
		}
	}
	fr := make([]SymFrame, 0, len(calls)+1)
	for _, c := range calls {
		fr = append(fr, SymFrame{Name: c.name, SystemName: c.name, File: file, Line: int64(line)})
		file, line, _ = t.tab.PCToLine(c.parent)
	}
	return append(fr, SymFrame{Name: fn.Name, SystemName: fn.Name, File: file, Line: int64(line)})
}
