package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// outRoot is where runs without --out write: a folder per run, named
// after its start time and what ran (20261206-110508-demo).
const outRoot = "profdiff-out"

// keepRuns is how many folders of one kind (the demo's, one sweep's) a
// new run leaves under outRoot: the newest, its own included. Runs are
// kept for their follow-up commands and a comparison with the last few,
// not as an archive (each demo leaves a few MB, a sweep more); a folder
// given with --out is never removed.
const keepRuns = 5

// runFolder matches the folders outDir makes under outRoot.
var runFolder = regexp.MustCompile(`^[0-9]{8}-[0-9]{6}-(.+)$`)

// pruneRuns removes the folders under root that outDir made for what
// (TIME-what), all but the keep newest, and returns those it removed.
func pruneRuns(root, what string, keep int) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, e := range ents {
		if m := runFolder.FindStringSubmatch(e.Name()); e.IsDir() && m != nil && m[1] == what {
			runs = append(runs, e.Name())
		}
	}
	slices.Sort(runs) // the names start with the time: oldest first
	var removed []string
	for _, name := range runs[:max(len(runs)-keep, 0)] {
		p := filepath.Join(root, name)
		if err := os.RemoveAll(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// folderSize is the bytes of the regular files under dir.
func folderSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}
