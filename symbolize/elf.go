// Reading binaries: OpenObject names the addresses of an ELF executable,
// shared library or separate debug file with Go's standard library alone
// (debug/elf, debug/dwarf, debug/gosym); no external tool runs.
//
// Three sources are consulted, best first, for each address:
//
//  1. DWARF (.debug_info and .debug_line, compressed or not): the
//     function containing the address and the chain of inlined calls
//     inside it, one frame per inlined call, innermost first as pprof's
//     Location.Line lists them. The innermost frame's file:line comes
//     from the line table, each outer frame's from the DW_AT_call_file
//     and DW_AT_call_line of the inlined call it made. Compilation units
//     are indexed by their address ranges on the first lookup; a unit's
//     line table and inline tree are read when an address first falls
//     into it and kept in a compact form (16 bytes a line row).
//  2. The Go pclntab (.gopclntab, which survives -ldflags=-s and strip):
//     the physical function and the file:line of a pc from debug/gosym,
//     and the chain of inlined calls from the pclntab's inline tree,
//     which debug/gosym does not expose (goinline.go): the same frames
//     as DWARF gives, for the pclntabs of Go 1.13 and later.
//  3. The symbol tables (.symtab and .dynsym): function symbols (STT_FUNC,
//     STT_GNU_IFUNC, and untyped labels in code sections, as assembly
//     writes them), each covering its size, or when its size is 0 up to
//     the next symbol or the end of its section. Where DWARF has a line
//     for the address but no function, the line is added.
//
// Names are demangled with [Demangle] (C++, Rust); the spelled name stays
// in SymFrame.SystemName. Go names are kept as the runtime writes them
// (main.Sum[go.shape.int]), so a profile symbolized here reads like one
// runtime/pprof symbolized.
//
// Addresses: Frames(m, pc) takes a runtime address of a process in which
// the mapping m maps the file. The file offset pc − m.Start + m.Offset is
// turned into the ELF virtual address through the PT_LOAD segment that
// holds it (vaddr = off − p_offset + p_vaddr), which covers non-PIE
// executables, PIE and shared libraries, and Go PIE linked at 0x400000.
// An address that is already a file offset (perf script's DSO-relative
// callchain addresses) is passed with a zero Mapping (&Mapping{}); a nil
// Mapping means pc is already the file's virtual address. A separate
// debug file's segments have lost their file offsets; they are rebuilt
// from the image base (see loadSegments). Kernel mappings (vmlinux,
// modules, _stext relocation) are out of scope.
//
// Frames looks up pc as given. Go's runtime/pprof stores PCs that already
// point into the call instruction; the return addresses of a perf or
// legacy callchain (every frame but the leaf) point after the call and
// need pc−1 to name the calling line: the caller decides.
//
// Build IDs: BuildID is the GNU build ID (NT_GNU_BUILD_ID, hex), else the
// Go build ID (.note.go.buildid); ReadBuildID reads both without opening
// an Object.
//
// Frames is safe for concurrent use. Malformed debug data never panics:
// the reader that failed is dropped, later lookups use the others, and
// the object's Err method (reached by a type assertion) says what failed.

package symbolize

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	pprofile "github.com/google/pprof/profile"
)

// OpenObject opens an ELF binary or debug file as an Object. A file that
// is not ELF, or whose headers or symbol tables cannot be read, gives an
// error naming it; a file with no symbol table, no DWARF and no Go
// pclntab gives an error wrapping ErrNoSymbols.
func OpenObject(path string) (Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	o, err := newELFObject(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	o.closer = f
	return o, nil
}

// elfObject is an opened ELF file. The symbol table is read at open; the
// pclntab and DWARF are read on the first lookup that needs them.
type elfObject struct {
	path   string
	ef     *elf.File
	closer io.Closer
	gnuID  string
	goID   string
	loads  []elf.ProgHeader // PT_LOAD segments
	syms   symtab

	mu     sync.Mutex
	gopcln *goTable // nil when the file has no .gopclntab
	dw     *dwarfIndex
	hasDW  bool
	broken error // a reader that failed (malformed input); it is not asked again
}

// newELFObject reads the headers, notes and symbol tables of the ELF file
// in r. It recovers from a panic of the standard library's readers, which
// a malformed file can provoke, into an error.
func newELFObject(path string, r io.ReaderAt) (o *elfObject, err error) {
	defer func() {
		if p := recover(); p != nil {
			o, err = nil, fmt.Errorf("%s: malformed ELF file: %v", path, p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, elfError(path, r, err)
	}
	o = &elfObject{path: path, ef: ef}
	o.gnuID, o.goID = noteBuildIDs(ef)
	o.loads = loadSegments(ef)
	if o.syms, err = readSymtab(ef); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	o.gopcln = newGoTable(ef, o.syms.goText)
	o.hasDW = hasDWARF(ef)
	if len(o.syms.syms) == 0 && o.gopcln == nil && !o.hasDW {
		return nil, fmt.Errorf("%s: %w", path, ErrNoSymbols)
	}
	return o, nil
}

func (o *elfObject) Path() string { return o.path }

func (o *elfObject) BuildID() string {
	if o.gnuID != "" {
		return o.gnuID
	}
	return o.goID
}

func (o *elfObject) Close() error {
	if o.closer == nil {
		return nil
	}
	return o.closer.Close()
}

// Frames names pc; see the comment at the top of elf.go for how pc and m
// are read. It is safe for concurrent use.
func (o *elfObject) Frames(m *pprofile.Mapping, pc uint64) []SymFrame {
	addr, ok := o.vaddr(m, pc)
	if !ok {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.frames(addr)
}

// loadSegments returns the PT_LOAD segments. A separate debug file
// (objcopy --only-keep-debug: its code sections are SHT_NOBITS) keeps
// their addresses and sizes but not their file offsets; these are taken
// to be each address less the image base (the lowest segment's address,
// at offset 0): exact for the code of GNU ld's and the Go linker's
// layouts, a guess for others.
func loadSegments(ef *elf.File) []elf.ProgHeader {
	var loads []elf.ProgHeader
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, p.ProgHeader)
		}
	}
	if len(loads) == 0 || !debugOnly(ef) {
		return loads
	}
	base := loads[0].Vaddr
	for _, p := range loads {
		base = min(base, p.Vaddr)
	}
	base &^= max(loads[0].Align, 1) - 1
	for i := range loads {
		loads[i].Off, loads[i].Filesz = loads[i].Vaddr-base, loads[i].Memsz
	}
	return loads
}

// debugOnly says whether the file's code sections hold no bytes.
func debugOnly(ef *elf.File) bool {
	code := false
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Size > 0 {
			if s.Type != elf.SHT_NOBITS {
				return false
			}
			code = true
		}
	}
	return code
}

// Err reports a reader that failed on the first lookup that needed it
// (malformed or unreadable DWARF or pclntab), nil if none did; the
// lookups fall back on the other sources. Callers reach it by a type
// assertion (interface{ Err() error }) to warn once.
func (o *elfObject) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.broken != nil:
		return o.broken
	case o.dw != nil && o.dw.err != nil:
		return fmt.Errorf("%s: %w", o.path, o.dw.err)
	case o.gopcln != nil && o.gopcln.err != nil:
		return fmt.Errorf("%s: %w", o.path, o.gopcln.err)
	}
	return nil
}

// vaddr turns a runtime address into the file's virtual address.
func (o *elfObject) vaddr(m *pprofile.Mapping, pc uint64) (uint64, bool) {
	if m == nil {
		return pc, true
	}
	off := pc - m.Start + m.Offset
	for _, p := range o.loads {
		if off >= p.Off && off-p.Off < p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// frames looks addr up in DWARF, then the pclntab, then the symbol
// tables. A reader that panics on malformed data is disabled, and the
// lookup falls through to the next.
func (o *elfObject) frames(addr uint64) (fr []SymFrame) {
	defer func() {
		if p := recover(); p != nil {
			o.broken = fmt.Errorf("%s: malformed debug data: %v", o.path, p)
			o.dw, o.hasDW, o.gopcln = nil, false, nil
			fr = o.symFrames(addr, nil)
		}
	}()
	var line *SymFrame
	if d := o.dwarf(); d != nil {
		fr, line = d.frames(addr)
		if fr != nil {
			if fr[0].Line == 0 && o.gopcln != nil { // Go's wrappers: <autogenerated>:1
				if g := o.gopcln.frames(addr); g != nil {
					fr[0].File, fr[0].Line = g[0].File, g[0].Line
				}
			}
			return fr
		}
	}
	if o.gopcln != nil {
		if fr = o.gopcln.frames(addr); fr != nil {
			return fr
		}
	}
	return o.symFrames(addr, line)
}

// symFrames names addr from the symbol tables, with the DWARF line (whose
// Name is empty) when there is one.
func (o *elfObject) symFrames(addr uint64, line *SymFrame) []SymFrame {
	s := o.syms.lookup(addr)
	if s == nil {
		return nil
	}
	f := SymFrame{Name: s.name, SystemName: s.name}
	if d, ok := Demangle(s.name); ok {
		f.Name = d
	}
	if line != nil {
		f.File, f.Line = line.File, line.Line
	}
	return []SymFrame{f}
}

// dwarf returns the DWARF index, building it on the first call; nil when
// the file has no usable DWARF.
func (o *elfObject) dwarf() *dwarfIndex {
	if !o.hasDW || o.dw != nil {
		return o.dw
	}
	d, err := newDWARFIndex(o.ef)
	if err != nil {
		o.hasDW, o.broken = false, fmt.Errorf("%s: %w", o.path, err)
		return nil
	}
	o.dw = d
	return d
}

// ReadBuildID returns the GNU build ID (hex) and the Go build ID of the
// ELF file at path, "" for one it lacks.
func ReadBuildID(path string) (gnu, goID string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return "", "", elfError(path, f, err)
	}
	gnu, goID = noteBuildIDs(ef)
	return gnu, goID, nil
}

// elfError says why debug/elf could not read the file at path: it is not
// ELF (no magic number), it ends before its headers do, or they are
// malformed.
func elfError(path string, r io.ReaderAt, err error) error {
	var magic [4]byte
	if _, e := r.ReadAt(magic[:], 0); e != nil || string(magic[:]) != elf.ELFMAG {
		return fmt.Errorf("%s: not an ELF binary or debug file", path)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: truncated ELF file: its headers reach past its end", path)
	}
	return fmt.Errorf("%s: malformed ELF file: %w", path, err)
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
