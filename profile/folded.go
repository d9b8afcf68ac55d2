package profile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
)

// errZeroCounts is ParseFolded's error for well-formed folded stacks whose
// counts are all zero.
var errZeroCounts = errors.New("no samples: every stack has count 0")

// maxLineWarnings bounds how many malformed lines are named one by one; the
// rest are counted in a final warning so a broken file cannot flood stderr.
const maxLineWarnings = 5

// ParseFolded parses folded stacks (Brendan Gregg's stackcollapse format, also
// written by inferno, async-profiler `collapsed`, speedscope and py-spy):
// one stack per line, frames root first separated by ';', then whitespace and
// a sample count. The count is the last field, so frames may contain spaces.
//
// Input may be UTF-8 (with or without BOM) or UTF-16 with a BOM, with LF or
// CRLF line ends. Blank lines are ignored; comment lines (`#`) and malformed
// lines are skipped and reported as warnings naming the line number. A blank
// frame (`a;;b 3`, or a trailing `;`) is kept under the name [blank]. It is an
// error if no line parses, if most lines are malformed, or if the text is
// recognizably another format (JSON, perf script output, ...).
//
// The result has one sample type, samples/count, and period 1. A frame written
// as `Module!Function` (TraceEvent) keeps its module as the location's mapping.
func ParseFolded(data []byte) (*pprofile.Profile, []string, error) {
	text, err := decodeText(data)
	if err != nil {
		return nil, nil, err
	}
	// JSON and perf script lines can pass for stacks ("samples": 145 is a
	// one-frame stack); formats recognized as something else are not read.
	if what, _ := sniffUnsupportedText(text); what != "" {
		return nil, nil, fmt.Errorf("not folded stacks: %s", what)
	}
	return parseFoldedText(text)
}

// parseFoldedText is ParseFolded on decoded text that the unsupported-format
// sniffers have passed.
func parseFoldedText(text string) (*pprofile.Profile, []string, error) {
	b := newBuilder(strings.Count(text, "\n") + 1)
	var warns []string
	bad, comments, valid := 0, 0, 0
	var shape foldedShape
	var total int64 // of all counts, which bounds every stack's sum
	firstBad := ""  // where the first malformed line is, for the errors
	warn := func(line int, msg string) {
		if bad == 0 {
			firstBad = fmt.Sprintf("; first at line %d: %s", line, msg)
		}
		bad++
		if bad <= maxLineWarnings {
			warns = append(warns, fmt.Sprintf("line %d: %s", line, msg))
		}
	}
	lineNo := 0
	for len(text) > 0 {
		lineNo++
		var line string
		line, text, _ = strings.Cut(text, "\n")
		line = strings.TrimRight(line, "\r \t")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			comments++
			if comments <= maxLineWarnings {
				warns = append(warns, fmt.Sprintf("line %d: skipped comment line", lineNo))
			}
			continue
		}
		stack, count, problem := splitFoldedLine(line)
		shape.add(lineNo, line, stack, problem)
		if problem != "" {
			warn(lineNo, problem)
			continue
		}
		if count == 0 {
			valid++
			continue
		}
		if total > math.MaxInt64-count {
			return nil, warns, mark(ErrCorrupt, fmt.Errorf("line %d: the sample counts sum past the int64 maximum (%d)", lineNo, int64(math.MaxInt64)))
		}
		total += count
		b.addFolded(stack, count)
		valid++
	}
	if comments > maxLineWarnings {
		warns = append(warns, fmt.Sprintf("%d more comment line(s) skipped", comments-maxLineWarnings))
	}
	if bad > maxLineWarnings {
		warns = append(warns, fmt.Sprintf("%d more malformed line(s) skipped", bad-maxLineWarnings))
	}
	if len(b.P.Sample) == 0 {
		switch {
		case valid > bad:
			return nil, warns, errZeroCounts
		case bad > 0:
			return nil, warns, fmt.Errorf("no valid folded-stack line (%d malformed%s)", bad, firstBad)
		}
		return nil, warns, fmt.Errorf("no samples")
	}
	if why := shape.notStacks(); why != "" {
		return nil, warns, fmt.Errorf("not folded stacks: %s", why)
	}
	// A file in another text format may contain a few lines that happen to
	// end in a number; folded stacks are mostly well-formed.
	if bad > valid {
		return nil, warns, fmt.Errorf("not folded stacks: %d of %d lines malformed (%s)", bad, bad+valid, strings.TrimPrefix(firstBad, "; "))
	}
	return b.P, warns, nil
}

// foldedShape collects what tells folded stacks from text that only looks
// like them: a report whose rows end in a number (GHC's .prof, a table of
// figures) parses as one-frame stacks, one per row. Folded stacks start
// with a stack, have some stack of more than one frame, and a frame does not
// end in a column of figures.
type foldedShape struct {
	lines      int    // lines that are neither blank nor comments
	first      string // the first such line's problem, if it is malformed
	firstLine  int
	multi      bool // some valid line has a stack of two or more frames
	valid      int
	tabular    int // valid one-frame lines whose frame ends in a number column
	tabularAt  int
	tabularRow string
}

func (s *foldedShape) add(lineNo int, line, stack, problem string) {
	s.lines++
	if problem != "" {
		if s.lines == 1 && !strings.Contains(line, ";") { // not a stack with a bad count
			s.first, s.firstLine = problem, lineNo
		}
		return
	}
	s.valid++
	if strings.Contains(stack, ";") {
		s.multi = true
		return
	}
	sp := strings.LastIndexAny(stack, " \t")
	if sp > 0 && isDecimal(strings.TrimSuffix(stack[sp+1:], "%")) {
		if s.tabular == 0 {
			s.tabularAt, s.tabularRow = lineNo, truncate(strings.Join(strings.Fields(line), " "), 60)
		}
		s.tabular++
	}
}

// notStacks says why the lines are not folded stacks, or returns "". Only
// text without a single stack of two frames is judged: such a file is
// refused when its first line is not a stack (a report's title or header)
// or when most of its rows end in two or more columns of figures.
func (s *foldedShape) notStacks() string {
	switch {
	case s.multi || s.valid == 0:
		return ""
	case s.first != "":
		return fmt.Sprintf("line %d, the first, is not a stack (%s) and no line holds a stack of two or more frames: a report or table, not `frame;frame;… count` lines", s.firstLine, s.first)
	case 2*s.tabular > s.valid:
		return fmt.Sprintf("%d of %d lines are rows of a table, ending in columns of figures (line %d: %q), and no line holds a stack of two or more frames", s.tabular, s.valid, s.tabularAt, s.tabularRow)
	}
	return ""
}

// splitFoldedLine splits a non-blank, non-comment line into its stack and
// its sample count, or says what is wrong with it.
func splitFoldedLine(line string) (stack string, count int64, problem string) {
	sp := strings.LastIndexAny(line, " \t")
	if sp <= 0 {
		return "", 0, "no sample count after the stack"
	}
	countStr := line[sp+1:]
	count, err := strconv.ParseInt(countStr, 10, 64)
	if err != nil {
		// Some writers emit fractional weights (speedscope exports of
		// wall time); round them rather than drop the stack.
		f, ferr := strconv.ParseFloat(countStr, 64)
		switch {
		case !isDecimal(countStr) || ferr != nil && !errors.Is(ferr, strconv.ErrRange):
			return "", 0, fmt.Sprintf("sample count %q is not a number", truncate(countStr, 40))
		case f < 0:
			return "", 0, fmt.Sprintf("negative sample count %s", truncate(countStr, 40))
		case ferr != nil || f >= math.MaxInt64:
			return "", 0, fmt.Sprintf("sample count %s is too large", truncate(countStr, 40))
		}
		count = int64(f + 0.5)
	}
	if count < 0 {
		return "", 0, fmt.Sprintf("negative sample count %d", count)
	}
	stack = strings.TrimRight(line[:sp], " \t")
	if stack == "" {
		return "", 0, "empty stack"
	}
	return stack, count, ""
}

// isDecimal reports whether s is a plain decimal number such as 12, 3.5 or
// 1e3 (ParseFloat also takes "inf", "nan", hex floats and underscores).
func isDecimal(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if s == "" || s[0] < '0' && s[0] != '.' || s[0] > '9' {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// decodeText returns data as UTF-8 text, honouring UTF-8 and UTF-16 byte
// order marks.
func decodeText(data []byte) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		le := data[0] == 0xFF
		data = data[2:]
		if len(data)%2 != 0 {
			return "", fmt.Errorf("UTF-16 text has an odd number of bytes")
		}
		u := make([]uint16, len(data)/2)
		for i := range u {
			if le {
				u[i] = uint16(data[2*i]) | uint16(data[2*i+1])<<8
			} else {
				u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
			}
		}
		return string(utf16.Decode(u)), nil
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("not UTF-8 text")
	}
	return string(data), nil
}

// decodeOwned is decodeText for data that nothing will modify: UTF-8
// text is read in place, not copied (UTF-16 is converted as ever).
func decodeOwned(data []byte) (string, error) {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || len(data) == 0 {
		return decodeText(data)
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if !utf8.Valid(data) {
		return "", fmt.Errorf("not UTF-8 text")
	}
	return unsafe.String(unsafe.SliceData(data), len(data)), nil
}

// builder assembles a pprof profile from named stacks, interning one
// function and location per distinct frame text so identical frames share
// one Location. The text is walked once and each distinct frame costs one
// map entry and one function, location and line, allocated in slabs (a
// line of millions of distinct frames is millions of them): memory and
// time are linear in the input.
//
// Each distinct stack is a sample. Its Sample, its location list and its
// value are carved out of slabs too, and the table of stacks seen and
// the profile's sample list are sized from the line count up front (a
// folded file is already one line a distinct stack, as a rule), so a
// file of a million distinct stacks grows nothing by copying: about 200
// bytes a stack besides the text.
type builder struct {
	*build.Builder[string, string]                     // locations are keyed by the frame text
	samples                        map[string]int32    // stack text → its index in P.Sample
	funcs                          []pprofile.Function // slabs, see newFrame
	locs                           []pprofile.Location
	lines                          []pprofile.Line
	sampleSlab                     []pprofile.Sample // slabs, see addFolded
	locSlab                        []*pprofile.Location
	valueSlab                      []int64
}

// slab is how many functions, locations and lines are allocated at once;
// stackSlab how many samples, values and location pointers.
const (
	slab      = 256
	stackSlab = 4096
)

// newBuilder returns a builder for text of about lines lines.
func newBuilder(lines int) *builder {
	b := &builder{
		Builder: build.New[string, string](&pprofile.Profile{
			SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}},
			PeriodType: &pprofile.ValueType{Type: "samples", Unit: "count"},
			Period:     1,
		}),
		samples: make(map[string]int32, lines),
	}
	b.P.Sample = make([]*pprofile.Sample, 0, lines)
	return b
}

// blankFrame is the name of a frame that folded stacks leave blank
// (`a;;b 3`, or `…;write0_[j];  3` from stackcollapse-perf.pl for a frame
// perf printed without a symbol): the stack is kept, so totals count it.
const blankFrame = "[blank]"

// addFolded adds one root-first `a;b;c` stack with its count.
func (b *builder) addFolded(stack string, count int64) {
	if i, ok := b.samples[stack]; ok {
		b.P.Sample[i].Value[0] += count // the caller keeps the total in range
		return
	}
	n := strings.Count(stack, ";") + 1
	if cap(b.locSlab)-len(b.locSlab) < n {
		b.locSlab = make([]*pprofile.Location, 0, max(stackSlab*4, n))
	}
	if len(b.sampleSlab) == cap(b.sampleSlab) {
		b.sampleSlab = make([]pprofile.Sample, 0, stackSlab)
		b.valueSlab = make([]int64, 0, stackSlab)
	}
	at := len(b.locSlab)
	b.locSlab = b.locSlab[:at+n]
	locs := b.locSlab[at : at+n : at+n] // capped: appending to it must not reach the next
	rest := stack
	for i := n - 1; i >= 0; i-- { // leaf first
		f, tail, _ := strings.Cut(rest, ";")
		rest = tail
		if f = strings.TrimSpace(f); f == "" {
			f = blankFrame
		}
		locs[i] = b.location(f)
	}
	b.valueSlab = append(b.valueSlab, count)
	v := len(b.valueSlab) - 1
	b.sampleSlab = append(b.sampleSlab, pprofile.Sample{Location: locs, Value: b.valueSlab[v : v+1 : v+1]})
	b.samples[stack] = int32(len(b.P.Sample))
	b.AddSample(&b.sampleSlab[len(b.sampleSlab)-1])
}

// location interns a frame. Its name is copied out of the text, so that
// the profile does not keep the whole file alive.
func (b *builder) location(frame string) *pprofile.Location {
	if l, ok := b.Location(frame); ok {
		return l
	}
	module, name := build.SplitModule(strings.Clone(frame))
	if len(b.funcs) == cap(b.funcs) {
		b.funcs = make([]pprofile.Function, 0, slab)
		b.locs = make([]pprofile.Location, 0, slab)
		b.lines = make([]pprofile.Line, 0, slab)
	}
	b.funcs = append(b.funcs, pprofile.Function{Name: name, SystemName: name})
	fn := b.AddFunction(&b.funcs[len(b.funcs)-1])
	b.lines = append(b.lines, pprofile.Line{Function: fn})
	i := len(b.lines) - 1 // the line's capacity ends with it: appending to it must not reach the next
	b.locs = append(b.locs, pprofile.Location{Line: b.lines[i : i+1 : i+1]})
	loc := &b.locs[len(b.locs)-1]
	if module != "" {
		loc.Mapping = b.Mapping(module)
	}
	return b.AddLocationAs(frame, loc)
}
