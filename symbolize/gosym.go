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
// .text; without the symbol, .text is taken, as go tool addr2line does
// (wrong for a stripped, externally linked binary, whose header records
// 0 too).
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
		t.text = sect.Addr
	}
	return t
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
