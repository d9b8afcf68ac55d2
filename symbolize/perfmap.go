package symbolize

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

// perfMapName is the name a perf map has: perf-PID.map.
var perfMapName = regexp.MustCompile(`^perf-[0-9]+\.map$`)

// IsPerfMap reports whether a path is named like a perf map of JIT code
// (perf-PID.map, as /tmp/perf-1234.map).
func IsPerfMap(path string) bool { return perfMapName.MatchString(filepath.Base(path)) }

// MaxPerfMapLine is the longest line a perf map may have (1 MiB): a JIT's
// names are long, not that long.
const MaxPerfMapLine = 1 << 20

// PerfMap is a perf map (tools/perf/Documentation/jit-interface.txt): one
// line per range of JIT-compiled code, `START SIZE name`, START and SIZE
// in hex with or without 0x, the name the rest of the line (spaces
// allowed). Producers: the JVM (-XX:+DumpPerfMapAtExit, perf-map-agent:
// `0x7f.. 0x1c0 long Workload.compute(long)`), Node's --perf-basic-prof
// (`JS:~hotLoop file.js:1:17`) and .NET's DOTNET_PerfMapEnabled
// (`name[OptimizedTier1]`). Addresses are the process's own (absolute):
// Frames ignores the mapping. Where ranges overlap (code freed and its
// memory reused) the later line wins, as perf's reading of the map does.
type PerfMap struct {
	path string
	segs []perfSeg // sorted, disjoint
}

// perfSeg is a run of addresses [start, end) one line of the map names.
type perfSeg struct {
	start, end uint64
	name       string
}

// OpenPerfMap reads the perf map at path.
func OpenPerfMap(path string) (*PerfMap, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadPerfMap(path, f)
}

// ReadPerfMap reads a perf map from r; path names it in errors and is
// what Path returns. A line that is no `START SIZE name` is an error
// naming its number.
func ReadPerfMap(path string, r io.Reader) (*PerfMap, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxPerfMapLine)
	var ents []perfEntry
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		e, err := parsePerfMapLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v (want `START SIZE name`, hex): %.80q", path, n, err, line)
		}
		if e.end > e.start {
			e.seq = len(ents)
			ents = append(ents, e)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a line longer than %d bytes", MaxPerfMapLine)
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &PerfMap{path: path, segs: flatten(ents)}, nil
}

// perfEntry is one line of a map: its range, name and line order.
type perfEntry struct {
	start, end uint64
	name       string
	seq        int
}

func parsePerfMapLine(line string) (perfEntry, error) {
	start, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimLeft(rest, " \t")
	size, name, _ := strings.Cut(rest, " ")
	name = strings.TrimSpace(name)
	s, err1 := parseHex(start)
	z, err2 := parseHex(size)
	switch {
	case err1 != nil:
		return perfEntry{}, fmt.Errorf("bad start address %q", start)
	case err2 != nil:
		return perfEntry{}, fmt.Errorf("bad size %q", size)
	case name == "":
		return perfEntry{}, errors.New("no name")
	case s+z < s:
		return perfEntry{}, fmt.Errorf("range %#x+%#x passes the end of the address space", s, z)
	}
	return perfEntry{start: s, end: s + z, name: name}, nil
}

func parseHex(s string) (uint64, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	return strconv.ParseUint(s, 16, 64)
}

// flatten turns possibly overlapping entries into disjoint segments, each
// named by the latest entry covering it: a sweep over the range
// boundaries with the covering entries in a heap by line order.
func flatten(ents []perfEntry) []perfSeg {
	if segs, ok := disjoint(ents); ok {
		return segs
	}
	var bounds []uint64
	for _, e := range ents {
		bounds = append(bounds, e.start, e.end)
	}
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })
	bounds = compactSorted(bounds)
	byStart := append([]perfEntry(nil), ents...)
	sort.SliceStable(byStart, func(i, j int) bool { return byStart[i].start < byStart[j].start })
	var h latest
	var segs []perfSeg
	next := 0
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		for next < len(byStart) && byStart[next].start <= lo {
			heap.Push(&h, byStart[next])
			next++
		}
		for h.Len() > 0 && h[0].end <= lo {
			heap.Pop(&h)
		}
		if h.Len() == 0 {
			continue
		}
		if n := len(segs); n > 0 && segs[n-1].end == lo && segs[n-1].name == h[0].name {
			segs[n-1].end = hi
			continue
		}
		segs = append(segs, perfSeg{lo, hi, h[0].name})
	}
	return segs
}

// disjoint is flatten's fast path for the usual map, whose ranges do not
// overlap: them sorted, and ok.
func disjoint(ents []perfEntry) (segs []perfSeg, ok bool) {
	sorted := append([]perfEntry(nil), ents...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].start < sorted[j].start })
	segs = make([]perfSeg, len(sorted))
	for i, e := range sorted {
		if i > 0 && e.start < sorted[i-1].end {
			return nil, false
		}
		segs[i] = perfSeg{e.start, e.end, e.name}
	}
	return segs, true
}

// latest is a max-heap of entries by line order. An entry that ended
// stays in it until it is on top: a later entry covering an address
// still wins, and an earlier one is popped when it surfaces.
type latest []perfEntry

func (h latest) Len() int           { return len(h) }
func (h latest) Less(i, j int) bool { return h[i].seq > h[j].seq }
func (h latest) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *latest) Push(x any)        { *h = append(*h, x.(perfEntry)) }
func (h *latest) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func compactSorted(s []uint64) []uint64 {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Path is the map's file.
func (pm *PerfMap) Path() string { return pm.path }

// BuildID is "": a perf map has none.
func (pm *PerfMap) BuildID() string { return "" }

// Len is the number of disjoint named ranges.
func (pm *PerfMap) Len() int { return len(pm.segs) }

// Frames names the absolute address pc: one frame, the name as the map
// wrote it (Name and SystemName alike), no file or line.
func (pm *PerfMap) Frames(_ *pprofile.Mapping, pc uint64) []SymFrame {
	i := sort.Search(len(pm.segs), func(i int) bool { return pm.segs[i].end > pc })
	if i == len(pm.segs) || pm.segs[i].start > pc {
		return nil
	}
	n := pm.segs[i].name
	return []SymFrame{{Name: n, SystemName: n}}
}

// Close does nothing: the map was read whole.
func (pm *PerfMap) Close() error { return nil }
