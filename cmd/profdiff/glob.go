package main

import (
	"path/filepath"
	"sort"
)

// globFiles expands a pattern to the sorted list of matching paths.
func globFiles(pattern string) ([]string, error) {
	m, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	sort.Strings(m)
	return m, nil
}
