package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
)

// fileBuildIDs reads the build IDs a file carries: the GNU build ID (note
// owner "GNU", type 3) in lowercase hex and the Go build ID (note owner
// "Go", type 4, a string). A file that is no ELF file has neither and no
// error: a perf map, say. Only Locate uses it, to match files to mappings
// before any is opened.
//
// Merge note: this is the locator's own note reader, to be replaced by
// ReadBuildID of elf.go (same results) once that lands.
func fileBuildIDs(path string) (gnu, goID string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		if _, ok := err.(*elf.FormatError); ok {
			return "", "", nil
		}
		return "", "", err
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		forNotes(data, f.ByteOrder, func(owner string, typ uint32, desc []byte) {
			switch {
			case owner == "GNU" && typ == 3 && gnu == "":
				gnu = hex.EncodeToString(desc)
			case owner == "Go" && typ == 4 && goID == "":
				goID = string(desc)
			}
		})
	}
	return gnu, goID, nil
}

// forNotes calls fn for each note of an SHT_NOTE section's data: namesz,
// descsz and type (4 bytes each), the name and the descriptor, each padded
// to 4 bytes.
func forNotes(data []byte, bo binary.ByteOrder, fn func(owner string, typ uint32, desc []byte)) {
	pad := func(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }
	for len(data) >= 12 {
		namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
		data = data[12:]
		if pad(namesz)+pad(descsz) > uint64(len(data)) {
			return
		}
		name := string(bytes.TrimRight(data[:namesz], "\x00"))
		desc := data[pad(namesz) : pad(namesz)+uint64(descsz)]
		fn(name, typ, desc)
		data = data[pad(namesz)+pad(descsz):]
	}
}
