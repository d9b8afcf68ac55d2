package symbolize

import "fmt"

// OpenObject opens an ELF binary or debug file as an Object.
//
// Skeleton: the ELF, DWARF and pclntab readers arrive in the next commits.
func OpenObject(path string) (Object, error) {
	return nil, fmt.Errorf("%s: %w", path, ErrNoSymbols)
}
