package render

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/render/sink"
	"github.com/profdiff/profdiff/diff/report"
)

// The folded formats write the stacks of a report's call tree (its
// *report.Flame), one line per stack that ends in a frame with self value,
// root first, the tree's root itself left out:
//
//	Folded:     "a;b;c 42"       one side (the new one, the base with
//	                             Options.FoldedBase; a top listing's only side)
//	DiffFolded: "a;b;c 40 42"    base then new, as difffolded.pl writes them
//
// Values are the side's self values in the profile's unit (nanoseconds
// for CPU time, bytes, counts…), rounded to integers; a stack whose
// values all round to 0 is left out. Lines are sorted by stack, so the
// output never depends on map order.
//
// Frame names are made safe for folded readers (foldedFrame): a ';' would
// split a frame, so it becomes ':'; line breaks and tabs become spaces; a
// frame ending in a space and a number ("retry 3"), which FlameGraph's
// flamegraph.pl would read as a second count, has that space replaced by
// '_' ("retry_3"); an empty name is "[unknown]"; a root frame starting
// with '#', which readers skip as a comment, has it replaced by '_'.
// Samples with no frame at all (the root's own value) are the stack
// "[no stack]", the pseudo-frame under which the engine counts a sample
// its profile recorded without a stack (diff.NoStack).
//
// The folded formats need every stack: a tree whose narrow subtrees were
// merged into "other" frames (diff.Options.TreeMin > 0) is refused. A
// flame that carries its stacks unmerged (report.Flame.Stacks, the
// engine's diff.Options.TreeStacks) is written from them, with no tree:
// records are grouped token by token (eachFolded) and each line written
// from its ids, so memory is a few integers a record, never the output's
// text, and the work is about one read of each frame.

// writeFolded writes the folded and difffolded formats.
func writeFolded(w io.Writer, r *report.Report, f Format, o Options) error {
	fl := reportFlame(r)
	if fl == nil || fl.Tree == nil && fl.Stacks == nil {
		return errors.New("this report has no folded form (no call tree)")
	}
	if f == DiffFolded && fl.Sides < 2 {
		return errors.New("the difffolded format needs two sides (a diff), this report has one")
	}
	chk := stop.New(o.Context)
	stacks := fl.Stacks
	if stacks == nil {
		var err error
		if stacks, err = nodeStacks(fl.Tree, chk); err != nil {
			return err
		}
	}
	side := 1
	if o.FoldedBase || fl.Sides < 2 {
		side = 0
	}
	bw := bufio.NewWriter(w)
	if stacks.Len() == 0 {
		return nil
	}
	var num []byte
	err := eachFolded(stacks, chk, func(line *foldedLine, v [2]float64) error {
		b, n := math.Round(v[0]), math.Round(v[1])
		switch {
		case f == DiffFolded && (b != 0 || n != 0):
			line.write(bw)
			num = append(append(append(append(num[:0], ' '), foldedCount(b)...), ' '), foldedCount(n)...)
		case f == Folded && math.Round(v[side]) != 0:
			line.write(bw)
			num = append(append(num[:0], ' '), foldedCount(v[side])...)
		default:
			return nil
		}
		_, err := bw.Write(append(num, '\n'))
		return err // the writer failed or was stopped: no use formatting the rest
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// foldedCount is a value rounded to an integer, written without exponent.
func foldedCount(v float64) string {
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// reportFlame is the report's flame-graph block, or nil.
func reportFlame(r *report.Report) *report.Flame {
	for _, b := range r.Blocks {
		if f, ok := b.(*report.Flame); ok {
			return f
		}
	}
	return nil
}

// foldedLine is one output line's stack: record i of stacks, whose
// frames names spell (see foldedNames).
type foldedLine struct {
	stacks report.Stacks
	names  *foldedNames
	i      int
}

// write writes the stack, its frames joined by ';'.
func (l *foldedLine) write(w interface {
	io.ByteWriter
	io.StringWriter
}) {
	for k := range max(1, l.stacks.Depth(l.i)) {
		if k > 0 {
			w.WriteByte(';')
		}
		w.WriteString(l.names.at(l.names.frame(l.stacks, l.i, k), k))
	}
}

// foldedNames are the stacks' names made safe (foldedFrame), by id, as a
// stack's root and as any other frame; one more id, the last, spells
// "[no stack]", the one frame of a record that has none. rank orders
// the tokens a line is made of, a frame's name with the ';' that follows
// it unless it ends the line, by root, end and id (index 2*root+end):
// since a safe name holds no ';', lines order as their token sequences
// do, token by token by rank, and two lines are one when their ranks
// are (two ids may spell one name).
type foldedNames struct {
	safe, root []string
	none       int32
	rank       [4][]int32
}

func newFoldedNames(names []string) *foldedNames {
	n := &foldedNames{safe: make([]string, len(names)+1), root: make([]string, len(names)+1), none: int32(len(names))}
	for i, name := range names {
		n.safe[i], n.root[i] = foldedFrame(name, false), foldedFrame(name, true)
	}
	n.safe[n.none], n.root[n.none] = "[no stack]", "[no stack]"
	type token struct {
		text string
		kind int
		id   int32
	}
	tokens := make([]token, 0, 4*len(n.safe))
	for kind := range n.rank {
		n.rank[kind] = make([]int32, len(n.safe))
		for id := range n.safe {
			text := n.at(int32(id), 1-kind>>1)
			if kind&1 == 0 {
				text += ";"
			}
			tokens = append(tokens, token{text, kind, int32(id)})
		}
	}
	slices.SortFunc(tokens, func(a, b token) int { return strings.Compare(a.text, b.text) })
	r := int32(0)
	for i, t := range tokens {
		if i > 0 && t.text != tokens[i-1].text {
			r++
		}
		n.rank[t.kind][t.id] = r
	}
	return n
}

// at is id's name as the k-th frame of a stack.
func (n *foldedNames) at(id int32, k int) string {
	if k == 0 {
		return n.root[id]
	}
	return n.safe[id]
}

// frame is the id of record i's k-th frame: none for the one frame of
// a record without a stack.
func (n *foldedNames) frame(s report.Stacks, i, k int) int32 {
	if s.Depth(i) == 0 {
		return n.none
	}
	return s.Frame(i, k)
}

// token is the rank of record i's k-th token, or -1 past its last; depth
// is its stack's (s.Depth(i)).
func (n *foldedNames) token(s report.Stacks, i, k int, depth int32) int32 {
	d := max(1, int(depth))
	if k >= d {
		return -1
	}
	kind := 0
	if k == 0 {
		kind = 2
	}
	if k == d-1 {
		kind |= 1
	}
	id := n.none
	if depth > 0 {
		id = s.Frame(i, k)
	}
	return n.rank[kind][id]
}

// eachFolded calls line with every distinct stack line of s, in the
// order of the lines' text, and its values summed per side (records
// whose stacks spell one line once their names are made safe are one
// line, summed in record order). Records are grouped token by token,
// the way a tree's levels are, so each frame is read about once and
// nothing holds a line's text: memory is four integers a record. It
// stops with line's error, or the context's cause once chk's context
// has ended.
func eachFolded(s report.Stacks, chk stop.Check, line func(*foldedLine, [2]float64) error) error {
	names := newFoldedNames(s.Names())
	idx := make([]int32, s.Len())
	depth := make([]int32, s.Len())
	for i := range idx {
		idx[i], depth[i] = int32(i), int32(s.Depth(i))
	}
	token := func(i int32, k int) int32 { return names.token(s, int(i), k, depth[i]) }
	packed := make([]uint64, 0, len(idx))
	l := &foldedLine{stacks: s, names: names}
	// Groups to do, last first: records idx[from:to] share their first k
	// tokens.
	type group struct{ from, to, k int }
	todo := []group{{0, len(idx), 0}}
	for len(todo) > 0 {
		if err := chk.Err(); err != nil {
			return err
		}
		g := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		run := idx[g.from:g.to]
		if len(run) == 1 || token(run[0], g.k) < 0 {
			// One record, or every record of the group ends here (tokens
			// mark a line's end, so none goes on): one line.
			var v [2]float64
			for _, i := range run {
				side, value := s.Value(int(i))
				v[side] += value
			}
			l.i = int(run[0])
			if err := line(l, v); err != nil {
				return err
			}
			continue
		}
		// Sort the run by its k-th token (record order within one),
		// then push its groups last first, so the first is done next.
		packed = packed[:0]
		same := true
		first := token(run[0], g.k)
		for _, i := range run {
			t := token(i, g.k)
			same = same && t == first
			packed = append(packed, uint64(uint32(t))<<32|uint64(uint32(i)))
		}
		if same {
			todo = append(todo, group{g.from, g.to, g.k + 1})
			continue
		}
		slices.Sort(packed)
		for j, p := range packed {
			run[j] = int32(uint32(p))
		}
		for to := len(run); to > 0; {
			from := to - 1
			for from > 0 && packed[from-1]>>32 == packed[to-1]>>32 {
				from--
			}
			todo = append(todo, group{g.from + from, g.from + to, g.k + 1})
			to = from
		}
	}
	return nil
}

// nodeStacks are the stacks of a report's tree (its nodes with self
// value, two records each: base and new), for a flame built with no
// Stacks. It fails on an "other" node: folded stacks need every stack.
func nodeStacks(root *report.Node, chk stop.Check) (report.Stacks, error) {
	ns := &treeNodeStacks{}
	index := map[string]int32{}
	var path []int32
	var walk func(n *report.Node) error
	walk = func(n *report.Node) error {
		if err := chk.Err(); err != nil {
			return err
		}
		if n.Other > 0 {
			under := "the root"
			if len(path) > 0 {
				var b strings.Builder
				at := &treeNodeStacks{names: ns.names, frames: path, recs: []nodeStack{{to: int32(len(path))}}}
				(&foldedLine{stacks: at, names: newFoldedNames(ns.names)}).write(&b)
				under = b.String()
			}
			return fmt.Errorf("this call tree merges narrow subtrees into %q frames (%d under %s), so it cannot be written as folded stacks; build it with no minimum width (diff.Options.TreeMin 0)",
				n.Name, n.Other, under)
		}
		if n != root {
			id, ok := index[n.Name]
			if !ok {
				id = int32(len(ns.names))
				index[n.Name] = id
				ns.names = append(ns.names, n.Name)
			}
			path = append(path, id)
		}
		if n.Self[0] != 0 || n.Self[1] != 0 {
			from := int32(len(ns.frames))
			ns.frames = append(ns.frames, path...)
			for side, v := range n.Self {
				ns.recs = append(ns.recs, nodeStack{from: from, to: int32(len(ns.frames)), side: side, value: v})
			}
		}
		for _, c := range n.Children {
			if err := walk(c); err != nil {
				return err
			}
		}
		if n != root {
			path = path[:len(path)-1]
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	return ns, nil
}

// treeNodeStacks are nodeStacks' records.
type treeNodeStacks struct {
	names  []string
	frames []int32
	recs   []nodeStack
}

// nodeStack is a record of treeNodeStacks: frames[from:to] and a value.
type nodeStack struct {
	from, to int32
	side     int
	value    float64
}

func (s *treeNodeStacks) Len() int                   { return len(s.recs) }
func (s *treeNodeStacks) Names() []string            { return s.names }
func (s *treeNodeStacks) Depth(i int) int            { return int(s.recs[i].to - s.recs[i].from) }
func (s *treeNodeStacks) Frame(i, k int) int32       { return s.frames[int(s.recs[i].from)+k] }
func (s *treeNodeStacks) Value(i int) (int, float64) { return s.recs[i].side, s.recs[i].value }

// foldedFrame is a frame name made safe for folded readers (see the rules
// above); first says it is the stack's root frame.
func foldedFrame(name string, first bool) string {
	name = strings.Map(func(r rune) rune {
		switch r {
		case ';':
			return ':'
		case '\n', '\r', '\t', '\v', '\f':
			return ' '
		}
		return r
	}, name)
	name = strings.TrimSpace(sink.Terminal(name))
	if name == "" {
		return "[unknown]"
	}
	if first && name[0] == '#' {
		name = "_" + name[1:]
	}
	if i := strings.LastIndexByte(name, ' '); i >= 0 && i < len(name)-1 && isCount(name[i+1:]) {
		name = strings.TrimRight(name[:i], " ") + "_" + name[i+1:]
	}
	return name
}

// isCount reports whether s reads as a folded count: digits, optionally
// with a decimal part.
func isCount(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" {
		return false
	}
	for _, part := range []string{whole, frac} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}
