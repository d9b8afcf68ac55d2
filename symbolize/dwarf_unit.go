package symbolize

import (
	"debug/dwarf"
	"math"
	"path"
	"slices"
)

// dwarfUnit is one compilation unit, read on demand: its line rows
// (sorted by address) and its tree of functions and inlined calls.
type dwarfUnit struct {
	off     dwarf.Offset
	parsed  bool
	compDir string   // DW_AT_comp_dir
	files   []string // the line rows' file names
	rows    []lineRow
	nodes   []dwarfNode
	spans   []span    // address ranges of the nodes
	tops    []topSpan // ranges of the subprograms, sorted by lo
}

// lineRow is a line table row: from addr on, file:line, up to the next
// row. An end-of-sequence row has file endFile.
type lineRow struct {
	addr       uint64
	file, line uint32
}

const endFile = math.MaxUint32

// dwarfNode is a subprogram or an inlined call: the name, where its
// caller called it (inlined calls), its ranges (spans[first:end]) and the
// calls inlined directly into it (kids while the unit is read, then the
// kids' ranges sorted, kidSpans).
type dwarfNode struct {
	name       string // as spelled (mangled)
	display    string // demangled
	callFile   string
	callLine   int64
	first, end int32
	kids       []int32
	kidSpans   []topSpan
}

type span struct{ lo, hi uint64 }

// topSpan is an address range and the node (or unit) it belongs to.
type topSpan struct {
	lo, hi uint64
	node   int32
}

// readLines reads the unit's line rows, dropping a row that repeats the
// file:line of the one before it (the lookup takes the last row at or
// before an address, so it finds the same answer), and returns the line
// table's files, which DW_AT_call_file indexes. A relative file name is
// joined to the unit's compilation directory, as addr2line prints it.
func (u *dwarfUnit) readLines(lr *dwarf.LineReader) []*dwarf.LineFile {
	index := map[*dwarf.LineFile]uint32{}
	var le dwarf.LineEntry
	prev := lineRow{file: endFile}
	for lr.Next(&le) == nil {
		row := lineRow{addr: le.Address, file: endFile}
		if !le.EndSequence {
			fi, ok := index[le.File]
			if !ok {
				fi = uint32(len(u.files))
				index[le.File] = fi
				name := ""
				if le.File != nil {
					name = u.fileName(le.File.Name)
				}
				u.files = append(u.files, name)
			}
			row.file, row.line = fi, uint32(max(le.Line, 0))
			if prev.file == row.file && prev.line == row.line {
				continue
			}
		}
		u.rows = append(u.rows, row)
		prev = row
	}
	u.sortRows()
	return lr.Files()
}

// fileName joins a relative file name to the unit's directory.
func (u *dwarfUnit) fileName(name string) string {
	if name != "" && u.compDir != "" && !path.IsAbs(name) {
		return path.Join(u.compDir, name)
	}
	return name
}

// sortRows sorts the rows by address, an end of sequence before a row
// that starts another sequence at the same address.
func (u *dwarfUnit) sortRows() {
	cmp := func(a, b lineRow) int {
		if c := cmpU64(a.addr, b.addr); c != 0 {
			return c
		}
		ae, be := a.file == endFile, b.file == endFile
		switch {
		case ae && !be:
			return -1
		case be && !ae:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(u.rows, cmp) {
		slices.SortStableFunc(u.rows, cmp)
	}
	u.rows = slices.Clip(u.rows)
}

// finish sorts the subprograms' ranges, and each node's kids' ranges.
func (u *dwarfUnit) finish() {
	byLo := func(a, b topSpan) int { return cmpU64(a.lo, b.lo) }
	slices.SortStableFunc(u.tops, byLo)
	for i := range u.nodes {
		n := &u.nodes[i]
		for _, k := range n.kids {
			for _, s := range u.spans[u.nodes[k].first:u.nodes[k].end] {
				n.kidSpans = append(n.kidSpans, topSpan{s.lo, s.hi, k})
			}
		}
		n.kids = nil
		slices.SortStableFunc(n.kidSpans, byLo)
	}
}

// spanAt returns the node of the span in spans (sorted by lo) that holds
// addr, -1 if none.
func spanAt(spans []topSpan, addr uint64) int32 {
	if i := holding(spans, addr); i >= 0 {
		return spans[i].node
	}
	return -1
}

// line returns the file:line of the row at or before addr, false when
// there is none or addr is past the end of its sequence.
func (u *dwarfUnit) line(addr uint64) (string, int64, bool) {
	i := upTo(u.rows, addr)
	if i == 0 || u.rows[i-1].file == endFile {
		return "", 0, false
	}
	r := u.rows[i-1]
	return u.files[r.file], int64(r.line), true
}

// chain appends to chain the nodes holding addr, outermost (the
// subprogram) first, then each inlined call inside the previous one.
func (u *dwarfUnit) chain(chain []int32, addr uint64) []int32 {
	top := spanAt(u.tops, addr)
	if top < 0 {
		return nil
	}
	chain = append(chain, top)
	for n := top; len(chain) <= len(u.nodes); {
		if n = spanAt(u.nodes[n].kidSpans, addr); n < 0 {
			break
		}
		chain = append(chain, n)
	}
	return chain
}
