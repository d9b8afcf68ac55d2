package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
)

// Note types of the build IDs: NT_GNU_BUILD_ID under owner "GNU", and the
// Go linker's build ID (a string) under owner "Go".
const (
	ntGNUBuildID = 3
	ntGoBuildID  = 4
)

// noteBuildIDs returns the GNU build ID (hex) and the Go build ID found in
// the file's note sections, or in its PT_NOTE segments when the section
// headers name none.
func noteBuildIDs(ef *elf.File) (gnu, goID string) {
	found := false
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		found = true
		if b, err := s.Data(); err == nil {
			gnu, goID = scanNotes(b, ef.ByteOrder, gnu, goID)
		}
	}
	if found {
		return gnu, goID
	}
	for _, p := range ef.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err == nil {
			gnu, goID = scanNotes(b, ef.ByteOrder, gnu, goID)
		}
	}
	return gnu, goID
}

// scanNotes reads the notes in b (namesz, descsz, type, then name and
// desc each padded to 4 bytes) and returns the first GNU and Go build IDs
// among them, keeping those already found.
func scanNotes(b []byte, bo binary.ByteOrder, gnu, goID string) (string, string) {
	for len(b) >= 12 {
		namesz, descsz, typ := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:])
		b = b[12:]
		nameEnd := align4(uint64(namesz))
		descEnd := nameEnd + align4(uint64(descsz))
		if nameEnd > uint64(len(b)) || descEnd > uint64(len(b)) {
			break
		}
		name := cstring(b[:namesz])
		desc := b[nameEnd : nameEnd+uint64(descsz)]
		switch {
		case name == "GNU" && typ == ntGNUBuildID && gnu == "":
			gnu = hex.EncodeToString(desc)
		case name == "Go" && typ == ntGoBuildID && goID == "":
			goID = cstring(desc)
		}
		b = b[descEnd:]
	}
	return gnu, goID
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }
