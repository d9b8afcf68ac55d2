package symbolize

import (
	"debug/elf"
	"io"
	"os"
)

// fileBuildIDs reads the build IDs a file carries (see ReadBuildID). A file
// that is no ELF file has neither and no error: a perf map, say. Only
// Locate uses it, to match files to mappings before any is opened.
func fileBuildIDs(path string) (gnu, goID string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	var magic [4]byte
	_, rerr := io.ReadFull(f, magic[:])
	f.Close()
	if rerr != nil || string(magic[:]) != elf.ELFMAG {
		return "", "", nil
	}
	return ReadBuildID(path)
}
