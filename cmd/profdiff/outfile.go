package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/profdiff/profdiff/profile/source"
)

// outputFile is a file a command writes besides its report: the flag that
// names it and its path ("-": standard output, "": not asked).
type outputFile struct{ flag, path string }

// guardOutputs refuses, before any profile is read, an output that would
// destroy something (see checkOutput): once at the call, and again when
// src's arguments are resolved, against the files they name (a glob, a
// capture folder's profile), before src.Resolved, which it wraps.
func guardOutputs(src *source.Options, outs ...outputFile) error {
	for _, o := range outs {
		if err := checkOutput(o, nil); err != nil {
			return err
		}
	}
	prev := src.Resolved
	src.Resolved = func(srcs [][]string) error {
		for _, o := range outs {
			if err := checkOutput(o, srcs); err != nil {
				return err
			}
		}
		if prev != nil {
			return prev(srcs)
		}
		return nil
	}
	return nil
}

// checkOutput refuses to write o where that would destroy or escape what
// the user named: a symbolic link (writing would follow it to a file the
// link's maker chose), a folder, a path whose folder does not exist (no
// work is done only to fail at the end), and a file that is one of the
// inputs (the same file by device and inode, whatever path names it).
func checkOutput(o outputFile, inputs [][]string) error {
	if o.path == "" || o.path == "-" {
		return nil
	}
	fi, err := os.Lstat(o.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(o.path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("%s: %s: folder %s does not exist", o.flag, o.path, dir)
		}
		return nil
	case err != nil:
		return usagef("%s: %v", o.flag, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return usagef("%s: %s is a symbolic link; profdiff does not write through one (name a plain file)", o.flag, o.path)
	case fi.IsDir():
		return usagef("%s: %s is a folder, not a file", o.flag, o.path)
	}
	for _, side := range inputs {
		for _, in := range side {
			if st, err := os.Stat(in); err == nil && os.SameFile(st, fi) {
				return usagef("%s: %s is an input (%s); writing it would destroy it (name another file)", o.flag, o.path, in)
			}
		}
	}
	return nil
}

// createOutput creates (or truncates) the output file path, refusing a
// symbolic link put there since checkOutput looked (noFollow).
func createOutput(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollow, 0o666)
}
