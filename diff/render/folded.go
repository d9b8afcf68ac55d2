package render

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
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
// split a frame, so it becomes ':'; line breaks and tabs become spaces;
// other control characters are escaped as in the table (sink.Terminal:
// "\x1b[2J"), since folded stacks are read on a terminal and a folded
// file with an ESC in it is refused as binary; a
// frame ending in a space and a number ("retry 3"), which FlameGraph's
// flamegraph.pl would read as a second count, has that space replaced by
// '_' ("retry_3"); an empty name is "[unknown]"; a root frame starting
// with '#', which readers skip as a comment, has it replaced by '_'.
// Samples with no frame at all (the root's own value) are the stack
// "[no stack]", the pseudo-frame under which the engine counts a sample
// its profile recorded without a stack (diff.NoStack).
//
// The folded formats need every stack: a tree whose narrow subtrees were
// merged into "other" frames (diff.Options.TreeMin > 0) is refused.

// foldedStack is one stack's self values, base and new.
type foldedStack struct {
	stack string
	v     [2]float64
}

// writeFolded writes the folded and difffolded formats.
func writeFolded(w io.Writer, r *report.Report, f Format, o Options) error {
	fl := reportFlame(r)
	if fl == nil || fl.Tree == nil {
		return errors.New("this report has no folded form (no call tree)")
	}
	if f == DiffFolded && fl.Sides < 2 {
		return errors.New("the difffolded format needs two sides (a diff), this report has one")
	}
	stacks, err := foldedStacks(fl.Tree, stop.New(o.Context))
	if err != nil {
		return err
	}
	side := 1
	if o.FoldedBase || fl.Sides < 2 {
		side = 0
	}
	bw := bufio.NewWriter(w)
	for _, s := range stacks {
		b, n := math.Round(s.v[0]), math.Round(s.v[1])
		var err error
		switch {
		case f == DiffFolded && (b != 0 || n != 0):
			_, err = fmt.Fprintf(bw, "%s %s %s\n", s.stack, foldedCount(b), foldedCount(n))
		case f == Folded && math.Round(s.v[side]) != 0:
			_, err = fmt.Fprintf(bw, "%s %s\n", s.stack, foldedCount(s.v[side]))
		}
		if err != nil {
			return err // the writer failed or was stopped: no use formatting the rest
		}
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

// foldedStacks lists the stacks of the tree with self value on either
// side, sorted by stack; two paths that make the same stack once their
// names are made safe are added together. It fails on an "other" node,
// and with the context's cause when chk's context ends.
func foldedStacks(root *report.Node, chk stop.Check) ([]foldedStack, error) {
	byStack := map[string]*foldedStack{}
	var walk func(n *report.Node, prefix string) error
	walk = func(n *report.Node, prefix string) error {
		if err := chk.Err(); err != nil {
			return err
		}
		if n.Other > 0 {
			under := prefix
			if under == "" {
				under = "the root"
			}
			return fmt.Errorf("this call tree merges narrow subtrees into %q frames (%d under %s), so it cannot be written as folded stacks; build it with no minimum width (diff.Options.TreeMin 0)",
				n.Name, n.Other, under)
		}
		stack := prefix
		switch {
		case n == root:
		case prefix == "":
			stack = foldedFrame(n.Name, true)
		default:
			stack = prefix + ";" + foldedFrame(n.Name, false)
		}
		if n.Self[0] != 0 || n.Self[1] != 0 {
			key := stack
			if key == "" {
				key = "[no stack]"
			}
			s := byStack[key]
			if s == nil {
				s = &foldedStack{stack: key}
				byStack[key] = s
			}
			s.v[0] += n.Self[0]
			s.v[1] += n.Self[1]
		}
		for _, c := range n.Children {
			if err := walk(c, stack); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, ""); err != nil {
		return nil, err
	}
	out := make([]foldedStack, 0, len(byStack))
	for _, s := range byStack {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].stack < out[j].stack })
	return out, nil
}

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
