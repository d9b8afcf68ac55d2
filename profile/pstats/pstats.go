// Package pstats reads the profiles Python's cProfile module writes
// (`python3 -m cProfile -o out.prof script.py`, Profile.dump_stats,
// pstats.Stats.dump_stats): a dict, serialized with Python's marshal,
// from each function (file, line, name) to its primitive and total call
// counts, its own time (tt) and its time with its callees (ct), in
// seconds, and its callers, each with the same four numbers for the calls
// it made. The pure-Python profile module's files are refused: it writes
// a code object into a key (its own start-up frame), which is no name.
//
// # Stacks
//
// cProfile records one level of callers, so the stacks it can prove are
// caller;callee pairs: a function's own time is split by caller (the
// caller's tt, its time in the function when that caller called it) into
// the stacks `caller;function`, and what no caller accounts for (the
// first frame the profiler saw) into `function` alone. Parse warns once
// that the stacks are pairs. The values are wall/nanoseconds (cProfile
// measures wall time: a call that sleeps or waits costs its waiting), the
// default, and calls/count.
//
// cProfile profiles the thread that enabled it: `python3 -m cProfile`
// profiles the main thread only, not the threads it starts. There are no
// thread states: a wait is known only by the function waiting
// (time.sleep, a lock's acquire, select), which the rules name.
//
// # Names
//
// A built-in is named as cProfile prints it (`<built-in method
// time.sleep>`, `<method 'acquire' of '_thread.lock' objects>`). A
// Python function is its name qualified with its module, made from the
// file's path: the dotted path below the standard library's pythonX.Y
// folder or below site-packages/dist-packages (`threading.wait`,
// `concurrent.futures.thread._worker`), else the file's base name
// (`app.main` for /srv/app.py; a package's __init__.py is the package).
// The file and the line of the definition are the function's file and
// start line.
package pstats

import (
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
)

// ErrFormat is wrapped by every error about the content of a file.
var ErrFormat = errors.New("malformed Python pstats file")

// ErrProfileModule is wrapped (with ErrFormat) by the error about a file
// of the pure-Python profile module (see the package doc).
var ErrProfileModule = errors.New("the pure-Python profile module (python3 -m profile) writes code objects into its keys; record with cProfile (python3 -m cProfile)")

// PairsWarning is the warning of every profile read: what its stacks are.
const PairsWarning = "cProfile records one level of callers; stacks are caller;callee pairs"

// Looks reports whether data is a pstats file: a marshalled dict whose
// first key is a (file, line, name) tuple.
func Looks(data []byte) bool {
	if len(data) < 4 || data[0]&^flagRef != typeDict {
		return false
	}
	d := &decoder{data: data[:min(len(data), 4096)], off: 1}
	switch data[1] &^ flagRef {
	case typeTuple, typeSmallTuple:
	default:
		return false
	}
	k, err := d.value(1)
	if err != nil {
		return false
	}
	_, ok := funcKeyOf(k)
	return ok
}

// funcKey is a function as pstats names it.
type funcKey struct {
	file string
	line int64
	name string
}

func funcKeyOf(v any) (funcKey, bool) {
	t, ok := v.([]any)
	if !ok || len(t) != 3 {
		return funcKey{}, false
	}
	file, ok1 := t[0].(string)
	line, ok2 := t[1].(int64)
	name, ok3 := t[2].(string)
	return funcKey{file, line, name}, ok1 && ok2 && ok3
}

// numbers reads a 4-tuple of (calls, calls, seconds, seconds) with a
// fifth element allowed (the callers dict of a stats value).
func numbers(v any) (nc int64, tt float64, rest []any, ok bool) {
	t, isTuple := v.([]any)
	if !isTuple || len(t) < 4 {
		return 0, 0, nil, false
	}
	a, ok1 := t[0].(int64)
	b, ok2 := t[1].(int64)
	tt, ok3 := seconds(t[2])
	_, ok4 := seconds(t[3])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return 0, 0, nil, false
	}
	return max(a, b), tt, t[4:], true
}

// seconds reads a time: a float, or an int where the time was zero.
func seconds(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 && x < 1e9
	case int64:
		return float64(x), x >= 0 && x < 1e9
	}
	return 0, false
}

// entry is one function of the file, with its callers.
type entry struct {
	key     funcKey
	nc      int64
	tt      float64
	callers []caller
}

type caller struct {
	key funcKey
	nc  int64
	tt  float64
}

// Parse reads a pstats file (see the package doc).
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	d := &decoder{data: data}
	v, err := d.value(0)
	if err != nil {
		return nil, nil, err
	}
	if d.off != len(data) {
		return nil, nil, d.fail(d.off, "%d bytes after the stats dict", len(data)-d.off)
	}
	stats, ok := v.(*dict)
	if !ok {
		return nil, nil, d.fail(0, "the file holds a %s, not a dict", typeName(v))
	}
	var entries []entry
	budget := len(data) // caller items read, against tables repeated by reference
	for i, k := range stats.keys {
		key, ok := funcKeyOf(k)
		if !ok {
			return nil, nil, fmt.Errorf("%w: stats key %d is a %s, not a (file, line, name) tuple", ErrFormat, i, typeName(k))
		}
		nc, tt, rest, ok := numbers(stats.vals[i])
		var callers *dict
		if ok && len(rest) == 1 {
			callers, ok = rest[0].(*dict)
		}
		if !ok {
			return nil, nil, fmt.Errorf("%w: the stats of %s is not a (calls, calls, seconds, seconds, callers) tuple", ErrFormat, key)
		}
		e := entry{key: key, nc: nc, tt: tt}
		if budget -= len(callers.keys); budget < 0 {
			return nil, nil, fmt.Errorf("%w: caller tables larger than the file (repeated by reference)", ErrFormat)
		}
		for j, ck := range callers.keys {
			c, ok := funcKeyOf(ck)
			cnc, ctt, _, ok2 := numbers(callers.vals[j])
			if !ok || !ok2 {
				return nil, nil, fmt.Errorf("%w: caller %d of %s is not a (file, line, name) key with (calls, calls, seconds, seconds)", ErrFormat, j, key)
			}
			e.callers = append(e.callers, caller{c, cnc, ctt})
		}
		entries = append(entries, e)
	}
	return build1(entries), []string{PairsWarning}, nil
}

func (k funcKey) String() string { return fmt.Sprintf("%s:%d(%s)", k.file, k.line, k.name) }

func typeName(v any) string {
	switch v.(type) {
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "tuple"
	case *dict:
		return "dict"
	}
	return "value"
}

func less(a, b funcKey) bool {
	if a.file != b.file {
		return a.file < b.file
	}
	if a.line != b.line {
		return a.line < b.line
	}
	return a.name < b.name
}

// build1 makes the profile: per function, a sample per caller and one
// for the rest, in a deterministic order.
func build1(entries []entry) *pprofile.Profile {
	sort.Slice(entries, func(i, j int) bool { return less(entries[i].key, entries[j].key) })
	b := build.New[funcKey, funcKey](nil)
	p := b.P
	p.SampleType = []*pprofile.ValueType{{Type: "wall", Unit: "nanoseconds"}, {Type: "calls", Unit: "count"}}
	p.DefaultSampleType = "wall"
	p.PeriodType = &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"}
	p.Period = 1
	p.Comments = []string{"pstats: Python cProfile, caller;callee pairs"}
	loc := func(k funcKey) *pprofile.Location {
		if l, ok := b.Location(k); ok {
			return l
		}
		name, file := Name(k.file, k.name), k.file
		if file == "~" {
			file = ""
		}
		fn := b.Function(k, pprofile.Function{Name: name, SystemName: k.name, Filename: file, StartLine: k.line})
		return b.AddLocationAs(k, &pprofile.Location{Line: []pprofile.Line{{Function: fn, Line: k.line}}})
	}
	add := func(ns, calls int64, stack ...funcKey) {
		if ns <= 0 && calls <= 0 {
			return
		}
		s := &pprofile.Sample{Value: []int64{max(ns, 0), max(calls, 0)}}
		for _, k := range stack {
			s.Location = append(s.Location, loc(k))
		}
		b.AddSample(s)
	}
	for _, e := range entries {
		sort.Slice(e.callers, func(i, j int) bool { return less(e.callers[i].key, e.callers[j].key) })
		restNs, restCalls := nanos(e.tt), e.nc
		for _, c := range e.callers {
			ns := min(nanos(c.tt), restNs)
			calls := min(c.nc, restCalls)
			add(ns, calls, e.key, c.key)
			restNs -= max(ns, 0)
			restCalls -= max(calls, 0)
		}
		add(restNs, restCalls, e.key)
	}
	return p
}

func nanos(s float64) int64 { return int64(math.Round(s * 1e9)) }

// stdlib finds the folder Python's own modules and installed packages
// live in: lib/python3.11/, site-packages/, dist-packages/.
var stdlib = regexp.MustCompile(`(?:lib/python\d+(?:\.\d+)?|site-packages|dist-packages|Lib)/`)

// Name is the frame name of a function cProfile names (file, name): see
// the package doc.
func Name(file, name string) string {
	if file == "~" || file == "" || strings.HasPrefix(file, "<") {
		return name // a built-in, or code without a file (<string>, <frozen ...>)
	}
	file = strings.ReplaceAll(file, "\\", "/")
	mod := path.Base(file)
	for _, m := range stdlib.FindAllStringIndex(file, -1) {
		if m[0] == 0 || file[m[0]-1] == '/' { // the last such folder wins
			mod = file[m[1]:]
		}
	}
	mod = strings.TrimSuffix(mod, ".py")
	if strings.HasSuffix(mod, "/__init__") || mod == "__init__" {
		mod = strings.TrimSuffix(strings.TrimSuffix(mod, "__init__"), "/")
		if mod == "" {
			mod = path.Base(path.Dir(file))
		}
	}
	mod = strings.ReplaceAll(mod, "/", ".")
	if mod == "" {
		return name
	}
	return mod + "." + name
}
