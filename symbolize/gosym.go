package symbolize

import (
	"debug/elf"
	"debug/gosym"
	"fmt"
)

// goTable is a Go binary's pclntab, read by debug/gosym on the first
// lookup. It names the physical function of an address and the innermost
// file:line; the inline tree is not exposed by debug/gosym.
type goTable struct {
	sect  *elf.Section
	text  uint64
	built bool
	tab   *gosym.Table // nil when the table cannot be read
	err   error        // why not
}

// newGoTable finds the pclntab: .gopclntab, or .data.rel.ro.gopclntab in a
// PIE or externally linked binary; nil when the file has none. Its
// function offsets start at runtime.text (text, from the symbol table),
// which an external linker places after the C code at the start of
// .text; without the symbol (-ldflags=-s), the module data the linker
// wrote says where, else .text is taken, as go tool addr2line does (wrong
// for a stripped, externally linked PIE).
func newGoTable(ef *elf.File, text uint64) *goTable {
	s := ef.Section(".gopclntab")
	if s == nil {
		s = ef.Section(".data.rel.ro.gopclntab")
	}
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 {
		return nil
	}
	t := &goTable{sect: s, text: text}
	if sect := ef.Section(".text"); sect != nil && text == 0 {
		if t.text = moduleText(ef, s.Addr, sect); t.text == 0 {
			t.text = sect.Addr
		}
	}
	return t
}

// moduleTextOffset is where runtime.moduledata holds text: after the
// pcHeader pointer, six slices (funcnametab, cutab, filetab, pctab,
// pclntable, ftab), findfunctab, minpc and maxpc (Go 1.18 to 1.26, 64-bit).
const moduleTextOffset = 8 + 6*24 + 3*8

// moduleText returns runtime.text as the linker wrote it into
// runtime.firstmoduledata (.go.module since Go 1.26, else .noptrdata):
// the record starts with the pclntab's address, and its text must lie in
// .text. 0 when it is not found, as in a PIE, where a dynamic relocation
// fills it in at load.
func moduleText(ef *elf.File, pcln uint64, text *elf.Section) uint64 {
	if ef.Class != elf.ELFCLASS64 {
		return 0
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
		for i := 0; i+moduleTextOffset+8 <= len(b); i += 8 {
			if ef.ByteOrder.Uint64(b[i:]) != pcln {
				continue
			}
			if v := ef.ByteOrder.Uint64(b[i+moduleTextOffset:]); v >= text.Addr && v-text.Addr < text.Size {
				return v
			}
		}
	}
	return 0
}

// build reads the table.
func (t *goTable) build() {
	t.built = true
	data, err := t.sect.Data()
	if err == nil {
		t.tab, err = gosym.NewTable(nil, gosym.NewLineTable(data, t.text))
	}
	if err != nil {
		t.tab, t.err = nil, fmt.Errorf("reading %s: %w", t.sect.Name, err)
	}
}

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
	return []SymFrame{{Name: fn.Name, SystemName: fn.Name, File: file, Line: int64(line)}}
}
