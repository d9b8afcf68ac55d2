package symbolize

import (
	"errors"

	pprofile "github.com/google/pprof/profile"
)

// An Object is one opened symbol file: an ELF binary or separate debug
// file (its .symtab and .dynsym, DWARF line tables with inlined calls, a
// Go pclntab), or a perf map for JIT code.
type Object interface {
	// Path is the file the object was read from.
	Path() string
	// BuildID is the file's GNU build ID in hex, else its Go build ID, ""
	// when it has neither (a perf map).
	BuildID() string
	// Frames returns the frames at the runtime address pc of a process in
	// which m maps this file (nil m: pc is the file's own virtual
	// address), innermost (inlined) first, as pprof orders Location.Line;
	// nil when the object knows nothing at pc.
	Frames(m *pprofile.Mapping, pc uint64) []SymFrame
	// Close releases the file.
	Close() error
}

// SymFrame is one frame an Object names: the displayed name (demangled),
// the name the object spelled (SystemName, mangled), source file and line
// (0 when unknown).
type SymFrame struct {
	Name       string
	SystemName string
	File       string
	Line       int64
}

// ErrNoSymbols is returned by OpenObject for a file that holds nothing to
// name addresses with (no symbol table, no DWARF, no pclntab).
var ErrNoSymbols = errors.New("no symbol table, DWARF or Go pclntab")
