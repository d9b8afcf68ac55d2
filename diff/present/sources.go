package present

import (
	"path/filepath"
	"strings"

	"github.com/profdiff/profdiff/diff/report"
)

// ShortSources names each side's sources by their shortest unambiguous
// form, for the reports' headings and summaries (a pull request comment,
// where a CI runner's absolute paths say nothing; a terminal, where they
// wrap): the leading directories that every
// file path of every side shares are removed, each path keeping at least
// its file name (/ci/_temp/prof/base/run-1.pb.gz and
// /ci/_temp/prof/new/run-1.pb.gz are base/run-1.pb.gz and
// new/run-1.pb.gz; a lone /home/me/cpu.pb.gz is cpu.pb.gz). URLs, queries
// and "-" (standard input) stay whole. Two files of the same name in
// different folders keep the folders that tell them apart. JSON and CSV
// keep the paths as given.
func ShortSources(sides ...[]string) [][]string {
	split := func(s string) []string {
		if s == "-" || strings.Contains(s, "://") {
			return nil
		}
		return strings.Split(filepath.ToSlash(s), "/")
	}
	common := -1
	var first []string
	for _, side := range sides {
		for _, s := range side {
			p := split(s)
			if p == nil {
				continue
			}
			if common < 0 {
				first, common = p, len(p)-1
			}
			n := 0
			for n < min(common, len(p)-1) && p[n] == first[n] {
				n++
			}
			common = n
		}
	}
	out := make([][]string, len(sides))
	for i, side := range sides {
		out[i] = make([]string, len(side))
		for j, s := range side {
			if p := split(s); p != nil && common > 0 {
				s = strings.Join(p[common:], "/")
			}
			out[i][j] = s
		}
	}
	return out
}

// SourceList names sources as report.List does, each by its short name
// (short, from ShortSources) with its path as given (full) as the whole
// form that the table format shows with --wide.
func SourceList(short, full []string) report.Line {
	cells := make([]report.Cell, len(full))
	for i, s := range full {
		cells[i] = report.Text(short[i])
		if short[i] != s {
			cells[i] = cells[i].OrWhole(s)
		}
	}
	return report.ListCells(cells)
}
