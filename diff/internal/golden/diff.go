package golden

import (
	"fmt"
	"strings"
)

// context is the number of unchanged lines shown around each change, as
// diff -u.
const context = 3

// maxCells bounds the longest-common-subsequence table (lines of a times
// lines of b); beyond it the whole files are shown as one hunk, which is
// still a valid diff.
const maxCells = 4 << 20

// op is one line of an edit script: ' ' kept, '-' only in a, '+' only in b.
type op struct {
	kind byte
	line string
}

// Unified returns a unified diff that turns a into b, with the file names
// aName and bName in its header, or "" when they are equal. A missing final
// newline is marked as diff -u marks it.
func Unified(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	ops := edits(splitLines(a), splitLines(b))
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	for _, h := range hunks(ops) {
		writeHunk(&sb, ops, h)
	}
	return sb.String()
}

// splitLines splits s after each newline; a last line without one gets the
// "\ No newline at end of file" marker appended, so a lost newline shows.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	}
	return lines
}

// edits is the shortest edit script from a to b, by the longest common
// subsequence of lines (golden files are small).
func edits(a, b []string) []op {
	if len(a)*len(b) > maxCells {
		ops := make([]op, 0, len(a)+len(b))
		for _, l := range a {
			ops = append(ops, op{'-', l})
		}
		for _, l := range b {
			ops = append(ops, op{'+', l})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			// Deletions before insertions, as diff -u prints them.
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	return ops
}

// hunk is a range [start, end) of the edit script.
type hunk struct{ start, end int }

// hunks groups the changes with context lines around them, merging
// changes whose context would overlap.
func hunks(ops []op) []hunk {
	var hs []hunk
	for i, o := range ops {
		if o.kind == ' ' {
			continue
		}
		start, end := max(i-context, 0), min(i+1+context, len(ops))
		if n := len(hs); n > 0 && start <= hs[n-1].end {
			hs[n-1].end = end
			continue
		}
		hs = append(hs, hunk{start, end})
	}
	return hs
}

// writeHunk writes one hunk with its "@@ -a,n +b,m @@" header; line numbers
// count from 1, and an empty range is numbered by the line before it.
func writeHunk(sb *strings.Builder, ops []op, h hunk) {
	aLine, bLine := 1, 1
	for _, o := range ops[:h.start] {
		if o.kind != '+' {
			aLine++
		}
		if o.kind != '-' {
			bLine++
		}
	}
	var aN, bN int
	for _, o := range ops[h.start:h.end] {
		if o.kind != '+' {
			aN++
		}
		if o.kind != '-' {
			bN++
		}
	}
	if aN == 0 {
		aLine--
	}
	if bN == 0 {
		bLine--
	}
	fmt.Fprintf(sb, "@@ -%d,%d +%d,%d @@\n", aLine, aN, bLine, bN)
	for _, o := range ops[h.start:h.end] {
		sb.WriteByte(o.kind)
		sb.WriteString(o.line)
	}
}
