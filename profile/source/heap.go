package source

import (
	"os"
	"slices"

	"github.com/profdiff/profdiff/profile/source/internal/hugeheap"
)

// heapPerByte is about how many bytes of heap a profile file's byte
// costs while it is read: a gzipped pprof file inflates to about 1.5
// times its size and its tables take about as much again (the
// 200,000-stack pair, 2 x 13.9 MB, peaks at about 110 MiB).
const heapPerByte = 4

// reserveHeap has the heap that loading the sources' files builds backed
// by huge pages where the system leaves that to the program
// (hugeheap.Reserve, which does nothing for a small job); held is how
// many Load holds at once. See README.md, Speed.
func reserveHeap(sources [][]string, held int) { hugeheap.Reserve(heapHint(sources, held)) }

// heapHint is about the heap that loading the sources' files builds:
// heapPerByte bytes for each byte of the held largest local files. A
// source that is not a regular file (a fleet source, a pipe) is not
// counted: its size is not known before it is read.
func heapHint(sources [][]string, held int) int64 {
	var sizes []int64
	for _, srcs := range sources {
		for _, src := range srcs {
			if fi, err := os.Stat(src); err == nil && fi.Mode().IsRegular() {
				sizes = append(sizes, fi.Size())
			}
		}
	}
	slices.Sort(sizes)
	total := int64(0)
	for i := len(sizes) - 1; i >= max(0, len(sizes)-held); i-- {
		total += sizes[i]
	}
	return total * heapPerByte
}
