package symbolize

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// symtab is the function symbols of .symtab and .dynsym, sorted by
// address, one per address, each with the end of the range it names.
type symtab struct {
	syms   []elfSym
	goText uint64 // the address of runtime.text, where a Go pclntab's offsets start; 0 if absent
}

type elfSym struct {
	addr, end uint64
	name      string
	rank      int  // binding rank, lower wins among symbols at one address
	sized     bool // end is addr+size; else the section's end, 0 when unknown
}

// readSymtab reads the function symbols of .symtab and .dynsym. A missing
// table is no error; one that cannot be read is.
func readSymtab(ef *elf.File) (symtab, error) {
	var all []elf.Symbol
	for _, t := range []struct {
		name string
		read func() ([]elf.Symbol, error)
	}{{".symtab", ef.Symbols}, {".dynsym", ef.DynamicSymbols}} {
		s, err := t.read()
		if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
			return symtab{}, fmt.Errorf("reading %s: %w", t.name, err)
		}
		all = append(all, s...)
	}
	var syms []elfSym
	var goText uint64
	for _, s := range all {
		if s.Name == "runtime.text" {
			goText = s.Value
		}
		if !isCodeSymbol(ef, s) {
			continue
		}
		e := elfSym{addr: s.Value, end: s.Value + s.Size, name: s.Name,
			rank: bindRank(elf.ST_BIND(s.Info), s.Name), sized: s.Size > 0}
		if elf.ST_TYPE(s.Info) == elf.STT_NOTYPE {
			e.rank += 6 // a function symbol at the same address wins
		}
		if !e.sized {
			var in bool
			if e.end, in = sectionEnd(ef, s); !in {
				continue // a marker at the end of its section (runtime.etext)
			}
		}
		syms = append(syms, e)
	}
	return symtab{syms: dedupSyms(syms), goText: goText}, nil
}

// isCodeSymbol says whether s names code: a function (STT_FUNC,
// STT_GNU_IFUNC), or an untyped label in an executable section, as
// assembly writes them (_start, _dl_start_user); not ARM's mapping
// symbols ($x, $d) nor local labels (.L…).
func isCodeSymbol(ef *elf.File, s elf.Symbol) bool {
	if s.Value == 0 || s.Section == elf.SHN_UNDEF || s.Name == "" {
		return false
	}
	switch elf.ST_TYPE(s.Info) {
	case elf.STT_FUNC, elf.STT_GNU_IFUNC:
		return true
	case elf.STT_NOTYPE:
		i := int(s.Section)
		return s.Section < elf.SHN_LORESERVE && i < len(ef.Sections) &&
			ef.Sections[i].Flags&elf.SHF_EXECINSTR != 0 &&
			!strings.HasPrefix(s.Name, "$") && !strings.HasPrefix(s.Name, ".L")
	}
	return false
}

// bindRank orders the names of one address: global before weak before
// local, and a name without leading underscores before one with them.
func bindRank(b elf.SymBind, name string) int {
	r := 2
	switch b {
	case elf.STB_GLOBAL:
		r = 0
	case elf.STB_WEAK:
		r = 1
	}
	if strings.HasPrefix(name, "_") && !strings.HasPrefix(name, "_Z") && !strings.HasPrefix(name, "_R") {
		r += 3
	}
	return r
}

// sectionEnd is the end of the section holding s, the bound of a symbol
// without a size: 0 when the section is unknown (the next symbol bounds
// it then), and false when s lies outside its section.
func sectionEnd(ef *elf.File, s elf.Symbol) (uint64, bool) {
	i := int(s.Section)
	if s.Section >= elf.SHN_LORESERVE || i >= len(ef.Sections) {
		return 0, true
	}
	sec := ef.Sections[i]
	if s.Value < sec.Addr || s.Value-sec.Addr >= sec.Size {
		return 0, false
	}
	return sec.Addr + sec.Size, true
}

// dedupSyms sorts the symbols by address, keeps the best-ranked name of
// each address (a sized one first, the longest range among equals), and
// bounds each sizeless symbol by the next symbol.
func dedupSyms(syms []elfSym) []elfSym {
	slices.SortFunc(syms, func(a, b elfSym) int {
		switch {
		case a.addr != b.addr:
			return cmpU64(a.addr, b.addr)
		case a.sized != b.sized:
			if a.sized {
				return -1
			}
			return 1
		case a.rank != b.rank:
			return a.rank - b.rank
		case a.end != b.end:
			return cmpU64(b.end, a.end)
		}
		return strings.Compare(a.name, b.name)
	})
	out := syms[:0]
	for _, s := range syms {
		if len(out) > 0 && out[len(out)-1].addr == s.addr {
			continue
		}
		out = append(out, s)
	}
	for i := range out {
		next := ^uint64(0)
		if i+1 < len(out) {
			next = out[i+1].addr
		}
		if s := &out[i]; !s.sized && (s.end == 0 || s.end > next) {
			s.end = next
		}
	}
	return slices.Clip(out)
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// lookupWindow bounds how many earlier ranges holding tries when the
// nearest one ends before addr (a range nested in a larger one).
const lookupWindow = 8

// addrRange is an element of a slice sorted by start address.
type addrRange interface{ span() (lo, hi uint64) }

// upTo returns how many of the sorted xs start at or before addr.
func upTo[T addrRange](xs []T, addr uint64) int {
	return sort.Search(len(xs), func(i int) bool {
		lo, _ := xs[i].span()
		return lo > addr
	})
}

// holding returns the index of the range of the sorted xs that holds
// addr: the nearest one starting at or before it, or one of the few
// before that enclosing it; -1 when none.
func holding[T addrRange](xs []T, addr uint64) int {
	i := upTo(xs, addr)
	for j := i - 1; j >= 0 && j >= i-lookupWindow; j-- {
		if _, hi := xs[j].span(); addr < hi {
			return j
		}
	}
	return -1
}

func (s elfSym) span() (uint64, uint64)  { return s.addr, s.end }
func (t topSpan) span() (uint64, uint64) { return t.lo, t.hi }
func (r lineRow) span() (uint64, uint64) { return r.addr, r.addr }

// lookup returns the symbol whose range holds addr, nil if none.
func (t *symtab) lookup(addr uint64) *elfSym {
	if i := holding(t.syms, addr); i >= 0 {
		return &t.syms[i]
	}
	return nil
}
