// Package callgrind reads the profiles Valgrind's callgrind tool writes
// (`valgrind --tool=callgrind ./prog`, callgrind.out.PID), and other
// writers of the same format (KCacheGrind's, Xdebug's).
//
// # Events and values
//
// The `events:` line names the cost columns: Ir (instructions executed)
// alone by default, cache and branch events (I1mr, D1mr, Bc, Bcm...) with
// --cache-sim=yes or --branch-sim=yes. Each event is a sample type, in the
// file's order, the first the default, with unit count; Xdebug's
// Time_(10ns) is read as wall/nanoseconds (times 10) and Memory_(bytes) as
// bytes. The profile is cpu (its period type is instructions), or wall
// for Xdebug's time: callgrind counts what the program executes,
// so a thread blocked in the kernel (a futex, a read, a sleep) costs
// nothing. The spin inside a lock (pthread_mutex_lock, __lll_lock_wait) is
// visible; the time a thread spent blocked is not.
//
// # From a call graph to stacks
//
// A callgrind file is a call graph, not stacks: each function's self cost
// (its cost lines) and, after `calls=`, the inclusive cost of its calls to
// each callee. Many sets of stacks give the same graph, so the reader
// makes the ones speedscope's callgrind importer makes, which users of
// flame graphs of callgrind files know. A function's weight in a stack is
// shared among its callees in the proportions of its own calls (every
// call of f is assumed to spend its time as the average call of f does);
// what the callees do not take is the function's self weight there. A
// function already on the stack (recursion) is not entered again: its
// weight stays with its caller. A subtree lighter than 1/10000 of the
// heaviest function is not expanded (its weight stays with its caller),
// which bounds the stacks a large graph makes, as speedscope does; each
// event is expanded on its own.
//
// One change: a function is a root with the part of its cost (self plus
// calls) that its callers' calls do not account for. speedscope takes
// only the functions nobody calls, which in a real file of a threaded
// program loses the threads: each thread's work is filed under clone,
// which the parent also calls (at the cost of the parent's side only). On
// files whose callers account for all the cost (speedscope's samples)
// both give the same roots. The stacks then hold the file's self costs
// plus what callers' inclusive costs claim beyond a function's own total
// where the file is not consistent (a root keeps only a positive
// remainder): in runs of a threaded C program, Ir within 0.1% of the
// file's totals, cache-miss events up to 3% over.
//
// # Names
//
// Valgrind demangles C++ and Rust names with their parameter lists
// (`shapes::Widget::frob(int) const`); the reader names them as perf
// script's reader does (package perfscript, TidyName), without the list
// (`shapes::Widget::frob`), which is also what a file recorded with
// --demangle=no gives once profdiff demangles it, so the two, and a perf
// recording of the same program, diff as the same functions (a function
// template's name keeps the return type Valgrind's demangler prints,
// `long twice<long>`, as perf's does; --demangle=no gives `twice<long>`).
// The mangled
// or full name stays the function's system name. Callgrind's own names
// in parentheses (`(below main)`) are kept.
//
// # What is read
//
// Headers (`version:`, `creator:`, `cmd:`, `part:`, `positions:`,
// `events:`, `totals:`, `summary:` and others, ignored), the position
// lines (`positions: line`, `instr line` or `instr`: that many position
// columns, decimal or 0x hexadecimal, with subposition compression `+N`,
// `-N` and `*` relative to the previous line), `fl=`, `fi=`, `fe=`, `fn=`,
// `cfi=`/`cfl=`, `cfn=`, `ob=`, `cob=`, `jfi=`, `jfn=` with name compression (`(id) name`
// defines, `(id)` refers; a later `part` may define an id again),
// `calls=` followed by the call's cost line, and `jump=`/`jcnd=` (their
// following line only moves the position). A file of several parts (or
// the parts of several dumps concatenated) is summed. A signed or `*`
// cost column is read relative to the same column of the previous cost
// line, as the samples shipped with speedscope write them (callgrind
// itself never does). When the file states `totals:` or `summary:` and
// the self costs of the first event do not add up to it, a warning says
// so (a truncated file).
package callgrind

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

// ErrSyntax is wrapped by every error about the content of a file.
var ErrSyntax = errors.New("malformed callgrind profile")

// Looks reports whether text is a callgrind profile: it starts with the
// format's comment line, or with a `version:`, `creator:` or `events:`
// header (one whose last word is not a number, which would be a folded
// stack) and holds an `events:` header and an `fn=` line.
func Looks(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	if strings.HasPrefix(t, "# callgrind format") {
		return true
	}
	switch {
	case strings.HasPrefix(t, "version:") || strings.HasPrefix(t, "creator:"):
	case strings.HasPrefix(t, "events:"):
		// Not folded stacks with a frame named "events: x" and a count.
		first, _, _ := strings.Cut(t, "\n")
		f := strings.Fields(first)
		if _, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			return false
		}
	default:
		return false
	}
	head := "\n" + t[:min(len(t), 64<<10)]
	return strings.Contains(head, "\nevents:") && strings.Contains(t, "\nfn=")
}

// maxPositions bounds the position columns, and maxEvents the cost
// columns, of a line.
const (
	maxPositions = 2
	maxEvents    = 64
)

// fnKey names a function: its file and its name.
type fnKey struct{ file, name string }

// graph is the call graph of one event: per function, its total (self
// cost plus the inclusive cost of its calls, speedscope's weight) and its
// calls' inclusive cost per callee.
type graph struct {
	total map[int]float64
	calls map[int]map[int]float64
}

// parser holds the state of the lines read so far.
type parser struct {
	events   []string       // sample type names, in first-seen order
	eventIdx map[string]int // name → index in events
	columns  []int          // the current events: line's columns → events index
	npos     int            // position columns

	funcs   []fnKey
	funcIdx map[fnKey]int
	graphs  []graph // per event

	names       map[string]map[string]string // compressed names per kind (fn, fl, ob)
	redefine    bool                         // a new part began: ids may be defined again
	file, fn    string
	cfile, cfn  string
	haveFn      bool
	prevPos     [maxPositions]int64
	prevCost    []int64
	totals      []int64 // `totals:` per events index, summed over parts
	summary     []int64 // `summary:` the same
	haveTotals  bool
	haveSummary bool
	selfSum     []int64 // self costs per events index
}

// Parse reads a callgrind profile (see the package doc).
func Parse(text string) (*pprofile.Profile, []string, error) {
	p := &parser{
		eventIdx: map[string]int{},
		funcIdx:  map[fnKey]int{},
		names:    map[string]map[string]string{"fn": {}, "fl": {}, "ob": {}},
		npos:     1,
	}
	lines := text
	n := 0
	pendingCall, pendingJump := false, false
	for len(lines) > 0 {
		var line string
		line, lines, _ = strings.Cut(lines, "\n")
		n++
		line = strings.TrimRight(line, "\r")
		if pendingCall || pendingJump {
			call := pendingCall
			pendingCall, pendingJump = false, false
			if err := p.costLine(line, n, call, !call); err != nil {
				return nil, nil, err
			}
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		var err error
		switch c := t[0]; {
		case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*':
			err = p.costLine(t, n, false, false)
		case strings.IndexByte(t, '=') > 0 && isKey(t[:strings.IndexByte(t, '=')]):
			var next string
			next, err = p.assignment(t, n)
			pendingCall, pendingJump = next == "call", next == "jump"
		case strings.IndexByte(t, ':') > 0 && isKey(t[:strings.IndexByte(t, ':')]):
			err = p.header(t, n)
		default:
			err = fmt.Errorf("%w: line %d: unrecognized line %q", ErrSyntax, n, cut(t))
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if pendingCall {
		return nil, nil, fmt.Errorf("%w: line %d: calls= line without the cost line that follows it", ErrSyntax, n)
	}
	if len(p.events) == 0 {
		return nil, nil, fmt.Errorf("%w: no events: line", ErrSyntax)
	}
	return p.profile()
}

// isKey reports whether s is a header or assignment key: letters, digits
// and underscores.
func isKey(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// cut shortens a line quoted in an error.
func cut(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func (p *parser) header(t string, n int) error {
	key, val, _ := strings.Cut(t, ":")
	val = strings.TrimSpace(val)
	switch key {
	case "events":
		fields := strings.Fields(val)
		if len(fields) == 0 || len(fields) > maxEvents {
			return fmt.Errorf("%w: line %d: events: line with %d events (want 1 to %d)", ErrSyntax, n, len(fields), maxEvents)
		}
		p.columns = p.columns[:0]
		for _, f := range fields {
			i, ok := p.eventIdx[f]
			if !ok {
				i = len(p.events)
				p.events = append(p.events, f)
				p.eventIdx[f] = i
				p.graphs = append(p.graphs, graph{total: map[int]float64{}, calls: map[int]map[int]float64{}})
				p.totals = append(p.totals, 0)
				p.summary = append(p.summary, 0)
				p.selfSum = append(p.selfSum, 0)
			}
			p.columns = append(p.columns, i)
		}
		p.prevCost = make([]int64, len(fields))
	case "positions":
		fields := strings.Fields(val)
		if len(fields) == 0 || len(fields) > maxPositions {
			return fmt.Errorf("%w: line %d: positions: %q (want line, instr or instr line)", ErrSyntax, n, val)
		}
		p.npos = len(fields)
	case "part":
		p.redefine = true
	case "totals", "summary":
		if p.columns == nil {
			return fmt.Errorf("%w: line %d: %s: before the events: line", ErrSyntax, n, key)
		}
		// Writers state totals:, summary: or both (the same numbers):
		// the totals: lines are summed over parts, else the summary: ones.
		sum := p.totals
		if key == "summary" {
			sum = p.summary
		}
		for i, f := range strings.Fields(val) {
			if i >= len(p.columns) {
				break
			}
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("%w: line %d: %s: %q is not a count", ErrSyntax, n, key, f)
			}
			sum[p.columns[i]] += v
		}
		if key == "totals" {
			p.haveTotals = true
		} else {
			p.haveSummary = true
		}
	}
	return nil
}

// assignment reads a `key=value` line; it returns "call" after calls=
// and "jump" after jump= or jcnd=, whose next line is theirs.
func (p *parser) assignment(t string, n int) (string, error) {
	key, val, _ := strings.Cut(t, "=")
	var err error
	switch key {
	case "fl":
		p.file, err = p.name("fl", val, n)
		p.cfile = ""
	case "fi", "fe", "jfi":
		// The inlined code's file, or a jump's target file: the
		// function stays, but the line may define a compressed name.
		_, err = p.name("fl", val, n)
	case "jfn":
		_, err = p.name("fn", val, n)
	case "fn":
		p.fn, err = p.name("fn", val, n)
		p.haveFn = true
		p.cfile, p.cfn = "", ""
	case "cfi", "cfl":
		p.cfile, err = p.name("fl", val, n)
	case "cfn":
		p.cfn, err = p.name("fn", val, n)
	case "ob", "cob":
		_, err = p.name("ob", val, n)
	case "calls":
		if !p.haveFn || p.cfn == "" {
			return "", fmt.Errorf("%w: line %d: calls= without fn= and cfn= before it", ErrSyntax, n)
		}
		return "call", nil
	case "jump", "jcnd":
		return "jump", nil
	}
	return "", err
}

// name resolves name compression: "(id) name" defines id, "(id)" refers
// to it, anything else is the name itself.
func (p *parser) name(kind, val string, n int) (string, error) {
	val = strings.TrimSpace(val)
	if !strings.HasPrefix(val, "(") {
		return val, nil
	}
	end := strings.IndexByte(val, ')')
	if end < 0 {
		return val, nil
	}
	id := val[1:end]
	if _, err := strconv.ParseUint(id, 10, 32); err != nil {
		return val, nil // a name that starts with "(": (below main)
	}
	rest := strings.TrimSpace(val[end+1:])
	m := p.names[kind]
	if rest == "" {
		s, ok := m[id]
		if !ok {
			return "", fmt.Errorf("%w: line %d: %s=(%s) refers to a name not defined before it", ErrSyntax, n, kind, id)
		}
		return s, nil
	}
	if old, ok := m[id]; ok && old != rest && !p.redefine {
		return "", fmt.Errorf("%w: line %d: %s=(%s) defined again as %q (it was %q)", ErrSyntax, n, kind, id, cut(rest), cut(old))
	}
	m[id] = rest
	return rest, nil
}

// costLine reads a line of positions and costs: the current function's
// self cost, or after calls= the call's inclusive cost (call), or after
// jump= a position alone (posOnly).
func (p *parser) costLine(t string, n int, call, posOnly bool) error {
	if p.columns == nil && !posOnly {
		return fmt.Errorf("%w: line %d: a cost line before the events: line", ErrSyntax, n)
	}
	fields := strings.Fields(t)
	if len(fields) < p.npos {
		return fmt.Errorf("%w: line %d: %q has no position", ErrSyntax, n, cut(t))
	}
	for i := 0; i < p.npos; i++ {
		v, err := position(fields[i], p.prevPos[i])
		if err != nil {
			return fmt.Errorf("%w: line %d: position %q: %v", ErrSyntax, n, fields[i], err)
		}
		p.prevPos[i] = v
	}
	if posOnly {
		return nil
	}
	costs := fields[p.npos:]
	if len(costs) > len(p.columns) {
		return fmt.Errorf("%w: line %d: %d costs but %d events", ErrSyntax, n, len(costs), len(p.columns))
	}
	if !p.haveFn {
		return fmt.Errorf("%w: line %d: a cost line before any fn= line", ErrSyntax, n)
	}
	f := p.funcID(p.file, p.fn)
	var callee int
	if call {
		file := p.cfile
		if file == "" {
			file = p.file
		}
		callee = p.funcID(file, p.cfn)
		p.cfile, p.cfn = "", "" // a cfn= holds for one call, as KCacheGrind reads it
	}
	for i, s := range costs {
		v, err := cost(s, p.prevCost[i])
		if err != nil {
			return fmt.Errorf("%w: line %d: cost %q: %v", ErrSyntax, n, s, err)
		}
		p.prevCost[i] = v
		e := p.columns[i]
		g := &p.graphs[e]
		g.total[f] += float64(v)
		if call {
			m := g.calls[f]
			if m == nil {
				m = map[int]float64{}
				g.calls[f] = m
			}
			m[callee] += float64(v)
		} else if p.selfSum[e] += v; p.selfSum[e] < 0 {
			return fmt.Errorf("%w: line %d: costs overflow", ErrSyntax, n)
		}
	}
	return nil
}

// position reads a position column: decimal, 0x hexadecimal, or relative
// to the previous one (+N, -N, *).
func position(s string, prev int64) (int64, error) {
	switch {
	case s == "*":
		return prev, nil
	case s[0] == '+' || s[0] == '-':
		d, err := number(s[1:])
		if s[0] == '-' {
			d = -d
		}
		return prev + d, err
	}
	return number(s)
}

// cost reads a cost column: a count, or (speedscope's samples) one
// relative to the previous cost line's.
func cost(s string, prev int64) (int64, error) {
	v, err := position(s, prev)
	if err == nil && v < 0 {
		err = errors.New("negative")
	}
	return v, err
}

func number(s string) (int64, error) {
	var v uint64
	var err error
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		v, err = strconv.ParseUint(h, 16, 63)
	} else {
		v, err = strconv.ParseUint(s, 10, 63)
	}
	if err != nil || v > math.MaxInt64/4 {
		return 0, errors.New("not a number in range")
	}
	return int64(v), nil
}

func (p *parser) funcID(file, name string) int {
	k := fnKey{file, name}
	if i, ok := p.funcIdx[k]; ok {
		return i
	}
	i := len(p.funcs)
	p.funcs = append(p.funcs, k)
	p.funcIdx[k] = i
	return i
}
