// Package gotrace turns a Go execution trace (runtime/trace, `go test
// -trace`, /debug/pprof/trace) into a pprof profile of goroutine time. It is
// the only package that imports golang.org/x/exp/trace, which reads every
// trace format from Go 1.11 to Go 1.26.
//
// Every goroutine's time between the first and the last event of the trace
// is cut into intervals at its state transitions, and each interval
// [from, to) is charged to the state, block reason and stack the goroutine
// had when the interval started:
//
//	running   the stack where the goroutine last stopped (where it resumed),
//	          under a synthetic leaf "[running]": the trace records stacks
//	          only at transitions, so where running time went inside is
//	          not known
//	runnable  the same, under "[runnable]": scheduler latency
//	waiting   the stack where it blocked, with the runtime's block reason
//	syscall   the stack where it entered the system call
//
// Each sample carries the label labels.Bucket with the bucket that the state
// and reason decide (not the frame names), labels.State and labels.Reason with
// the raw state and reason, and labels.Profiler on the samples of the
// profiler's own goroutines. Waiting time that ended before the trace did
// carries labels.Waker: the stack (root first, ";"-joined) of the
// goroutine whose event made it runnable (an Unlock, a channel send, a
// Cond.Signal, a WaitGroup.Done), or labels.WakerTimer for a sleep,
// labels.WakerNetwork for a network wait, labels.WakerUnknown for an
// unblock by no goroutine or without a stack. Waiting time is split by
// waker stack; labels.WakerThread is not set, since goroutine ids would
// split every sample by goroutine. A goroutine waiting since before the trace
// started has no recorded reason; its samples have no labels.Bucket, and the
// frame rules decide them.
//
// Numbers never wrap: an event time below the clock's zero (where a corrupt
// frequency or timestamp puts x/exp/trace's conversion), events spanning
// more than 2^63-1 ns, or goroutine time whose total passes 2^63-1 ns fail
// the parse, naming the event. Memory is linear in the trace: x/exp/trace
// bounds batches (64 KiB) and stacks, and Parse interns stacks by content.
package gotrace

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"
	"golang.org/x/exp/trace"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/labels"
	"github.com/profdiff/profdiff/profile/internal/loaderr"
)

// The samples Parse writes carry profdiff's label contract (documented at
// profile.labels.Bucket and the rest): the bucket, state and block reason of
// each goroutine's time. labels.Reason is "unknown" when the goroutine was
// already waiting when the trace started; labels.Profiler marks the
// goroutines Options.ProfilerFrame picks out.

// CommentPrefix starts the comment Parse puts on its profiles.
const CommentPrefix = labels.GoTraceComment

// Synthetic leaf frames.
const (
	FrameRunning  = "[running]"
	FrameRunnable = labels.FrameRunnable
	FrameWaiting  = "[waiting]" // waiting, no stack recorded
	FrameSyscall  = "[syscall]" // in a system call, no stack recorded
)

// Looks reports whether data starts with a Go execution trace header,
// "go 1.N trace" padded with NULs to 16 bytes.
func Looks(data []byte) bool {
	head := data[:min(len(data), 16)]
	if !bytes.HasPrefix(head, []byte("go 1.")) {
		return false
	}
	i := len("go 1.")
	for i < len(head) && head[i] >= '0' && head[i] <= '9' {
		i++
	}
	return i > len("go 1.") && bytes.HasPrefix(head[i:], []byte(" trace\x00"))
}

// Version returns the "1.N" of a trace header, or "".
func Version(data []byte) string {
	if !Looks(data) {
		return ""
	}
	head := data[3:min(len(data), 16)]
	return string(head[:bytes.IndexByte(head, ' ')])
}

// Options control Parse. The zero value is usable.
type Options struct {
	// ProfilerFrame reports whether a function belongs to the profiler's
	// own goroutines (the trace reader, net/http/pprof handlers). Every
	// sample of a goroutine with such a frame in any of its stacks gets
	// labels.Profiler. Nil marks nothing.
	ProfilerFrame func(name string) bool
}

// Parse reads a trace and returns its goroutine-time profile and warnings.
// A trace that cannot be read fails with an error saying why; a trace with
// no goroutine time returns a profile with no samples.
func Parse(data []byte, opts Options) (p *pprofile.Profile, warnings []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, warnings, err = nil, nil, fmt.Errorf("corrupt Go execution trace (reader failed: %v)", r)
		}
	}()
	w := newWalker(opts)
	if err := w.walk(data); err != nil {
		return nil, nil, err
	}
	return w.profile(), w.warnings(), nil
}

// interval is one stretch of one goroutine's time.
type interval struct {
	g          trace.GoID
	state      trace.GoState
	reason     string // block/stop reason; "" unknown
	stack      int32  // index into walker.stacks, -1 none
	from, to   trace.Time
	startEvent bool // from is the time of an event that put g in state (else the trace start)
	startKnown bool // that event was a transition, not a status report of a goroutine's state
	open       bool // still in this state when the trace ended
	// waker and wakerG are who ended a waiting interval (see wakerOf)
	// and its goroutine (trace.NoGoroutine when none).
	waker  int32
	wakerG trace.GoID
}

type gor struct {
	state      trace.GoState
	since      trace.Time
	reason     string
	stack      int32 // stack of the current interval
	resume     int32 // where the goroutine resumes: its last own stack
	startEvent bool
	startKnown bool
	// waker is who ended the current waiting interval, set just before
	// it is closed (see wakerOf), and wakerG its goroutine.
	waker  int32
	wakerG trace.GoID
}

// The waker values of an interval that are not a stack index: no waker
// (not a waiting interval, or one still open at the end), or a wake-up
// by no goroutine (labels.WakerTimer and the rest).
const (
	wakerNone    int32 = -1
	wakerTimer   int32 = -2
	wakerNetwork int32 = -3
	wakerUnknown int32 = -4
)

// wakerOf is the waker of a goroutine (id) that waited for reason and was
// made runnable by an event of goroutine by, whose stack is stk: the
// unblocker's stack; a timer for a sleep, the network poller for a
// network wait (their wake-ups run on whatever goroutine or thread polls
// them, whose stack says nothing of why); unknown for an unblock by no
// goroutine or without a stack.
func wakerOf(reason string, by, id trace.GoID, stk int32) int32 {
	switch {
	case reason == "sleep":
		return wakerTimer
	case reason == "network":
		return wakerNetwork
	case by == trace.NoGoroutine || by == id || stk < 0:
		return wakerUnknown
	}
	return stk
}

type stackInfo struct {
	frames   []trace.StackFrame // leaf first
	profiler bool
}

type accKey struct {
	g      trace.GoID
	state  trace.GoState
	reason string
	stack  int32
	waker  int32
	tag    int32 // index into walker.tags, -1 none
}

type accVal struct {
	n  int64
	ns int64
}

type walker struct {
	opts     Options
	version  string
	gs       map[trace.GoID]*gor
	profG    map[trace.GoID]bool
	first    trace.Time
	last     trace.Time
	seen     bool
	wallNs   int64 // wall clock of `first`, when the trace has clock snapshots
	stacks   []stackInfo
	byStack  map[trace.Stack]int32
	byPCs    map[string]int32
	acc      map[accKey]*accVal
	unknown  map[string]bool // unrecognized reasons
	onInterv func(interval)  // sees every interval: tests, and Blame's timelines
	total    int64           // all goroutine time so far, ns
	err      error           // the first overflow, which stops the walk

	// tagKey is the label of the tags (Blame's), tags its values.
	tagKey string
	tags   []string
}

func newWalker(opts Options) *walker {
	return &walker{
		opts:    opts,
		gs:      map[trace.GoID]*gor{},
		profG:   map[trace.GoID]bool{},
		byStack: map[trace.Stack]int32{},
		byPCs:   map[string]int32{},
		acc:     map[accKey]*accVal{},
		unknown: map[string]bool{},
	}
}

// parserError is the message of x/exp/trace's error err up to its first
// line break: after "failed to advance" the parser dumps its state, with
// goroutines in map order, so the rest of the message differs from run
// to run and holds nothing a reader can act on.
func parserError(err error) string {
	msg, _, cut := strings.Cut(err.Error(), "\n")
	if cut {
		msg = strings.TrimSuffix(msg, ": frontier:")
	}
	return msg
}

// parserFailure is the error of a trace its parser refused, after events
// events (-1: refused when opened). A trace cut short breaks the parser in
// many ways (a stack or string table missing, a batch it leaves out), so
// the cut, where the framing shows one, is named first, then the parser's
// words.
func (w *walker) parserFailure(data []byte, err error, events int) error {
	msg := parserError(err)
	if cut := cutShort(data, w.version, err); cut != "" {
		if events >= 0 {
			return fmt.Errorf("Go execution trace (go %s) cut short: %s (the parser, after %d events: %s)", w.version, cut, events, msg)
		}
		return fmt.Errorf("Go execution trace (go %s) cut short: %s (the parser: %s)", w.version, cut, msg)
	}
	if events >= 0 {
		return fmt.Errorf("corrupt Go execution trace (go %s) after %d events: %s", w.version, events, msg)
	}
	return fmt.Errorf("unreadable Go execution trace (go %s): %s", w.version, msg)
}

func (w *walker) walk(data []byte) error {
	if !Looks(data) {
		return errors.New("not a Go execution trace (no \"go 1.N trace\" header)")
	}
	w.version = Version(data)
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		return w.parserFailure(data, err, -1)
	}
	events := 0
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return w.parserFailure(data, err, events)
		}
		events++
		t := ev.Time()
		if t < -1 {
			// x/exp/trace turns ticks into nanoseconds with a float
			// multiplication that a corrupt frequency or timestamp
			// takes out of range (to -2^63). Go 1.11-1.21 traces, which
			// it converts, start with a Sync event at -1.
			return fmt.Errorf("corrupt Go execution trace (go %s): event %d (%v) at time %d ns, before the clock's zero (a corrupt frequency or timestamp)", w.version, events, ev.Kind(), t)
		}
		if !w.seen || t < w.first {
			w.first = t
		}
		if !w.seen || t > w.last {
			w.last = t
		}
		w.seen = true
		switch ev.Kind() {
		case trace.EventSync:
			if w.wallNs == 0 {
				if cs := ev.Sync().ClockSnapshot; cs != nil && !cs.Wall.IsZero() {
					w.wallNs = cs.Wall.UnixNano() - int64(cs.Trace-w.first)
				}
			}
			continue
		case trace.EventStateTransition:
		default:
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		w.transition(st.Resource.Goroutine(), st, t, ev.Goroutine(), ev.Stack())
		if w.err != nil {
			return fmt.Errorf("corrupt Go execution trace (go %s): event %d: %w", w.version, events, w.err)
		}
	}
	if events == 0 {
		return loaderr.Mark(loaderr.Empty, fmt.Errorf("empty Go execution trace (go %s): no events", w.version))
	}
	if w.first < 0 && w.last > math.MaxInt64+w.first {
		return fmt.Errorf("corrupt Go execution trace (go %s): its events span more than 2^63-1 ns (%d to %d)", w.version, w.first, w.last)
	}
	for _, id := range slices.Sorted(maps.Keys(w.gs)) { // the same error for the same trace
		if w.close(id, w.gs[id], w.last, true); w.err != nil {
			return fmt.Errorf("corrupt Go execution trace (go %s): at its end (time %d ns): %w", w.version, w.last, w.err)
		}
	}
	return nil
}

// transition applies the state transition st of goroutine id at time t,
// an event of goroutine by with stack byStack (the waker and where it
// was, when st makes a waiting goroutine runnable; trace.NoGoroutine for
// the system).
func (w *walker) transition(id trace.GoID, st trace.StateTransition, t trace.Time, by trace.GoID, byStack trace.Stack) {
	from, to := st.Goroutine()
	stk := w.stackIndex(st.Stack)
	if stk >= 0 && w.stacks[stk].profiler {
		w.profG[id] = true
	}
	g := w.gs[id]
	if g == nil {
		g = &gor{state: trace.GoUndetermined, stack: -1, resume: -1}
		if from != trace.GoNotExist && from != trace.GoUndetermined {
			// It existed before its first event, in state from.
			g.state, g.since = from, w.first
		}
		w.gs[id] = g
	}
	if to == g.state {
		// A status event restating what is known (each generation of a
		// Go 1.22+ trace restates the goroutines it touches).
		if g.stack < 0 && stk >= 0 {
			g.stack, g.resume = stk, stk
		}
		return
	}
	g.waker, g.wakerG = wakerNone, trace.NoGoroutine
	if g.state == trace.GoWaiting && (to == trace.GoRunnable || to == trace.GoRunning) {
		g.waker = wakerOf(g.reason, by, id, w.stackIndex(byStack))
		if g.waker >= 0 {
			g.wakerG = by
		}
	}
	w.close(id, g, t, false)
	switch to {
	case trace.GoNotExist, trace.GoUndetermined:
		delete(w.gs, id)
		return
	case trace.GoRunning:
		if stk >= 0 {
			g.resume = stk
		}
		g.stack = g.resume
		g.reason = ""
	case trace.GoRunnable:
		// GoStop (preempted, Gosched) and GoCreate carry the goroutine's
		// own stack; GoUnblock carries the unblocker's, so a goroutine
		// made runnable by another waits at the stack where it blocked.
		if stk >= 0 {
			g.resume = stk
		}
		g.stack = g.resume
		g.reason = st.Reason
	case trace.GoWaiting, trace.GoSyscall:
		g.stack = stk
		if stk >= 0 {
			g.resume = stk
		}
		g.reason = st.Reason
		if to == trace.GoSyscall {
			g.reason = ""
		}
	}
	g.state, g.since = to, t
	g.startEvent = true
	g.startKnown = from != trace.GoUndetermined
}

// close charges g's current interval up to t.
func (w *walker) close(id trace.GoID, g *gor, t trace.Time, open bool) {
	switch g.state {
	case trace.GoRunning, trace.GoRunnable, trace.GoWaiting, trace.GoSyscall:
	default:
		return
	}
	from := max(g.since, w.first)
	to := min(t, w.last)
	if to < from {
		return
	}
	iv := interval{g: id, state: g.state, reason: g.reason, stack: g.stack, from: from, to: to, startEvent: g.startEvent, startKnown: g.startKnown, open: open, waker: wakerNone, wakerG: trace.NoGoroutine}
	if g.state == trace.GoWaiting && !open {
		iv.waker, iv.wakerG = g.waker, g.wakerG
	}
	if w.onInterv != nil {
		w.onInterv(iv)
	}
	if to == from {
		return
	}
	reason := g.reason
	if g.state == trace.GoRunning || g.state == trace.GoSyscall {
		reason = ""
	}
	k := accKey{g: id, state: g.state, reason: reason, stack: g.stack, waker: iv.waker, tag: -1}
	a := w.acc[k]
	if a == nil {
		a = &accVal{}
		w.acc[k] = a
	}
	// Every interval fits (times are not negative), but their sum need
	// not: the total of all goroutines' time must fit, so that no sample
	// and no consumer's sum wraps.
	d := int64(to - from)
	if w.total > math.MaxInt64-d {
		w.err = fmt.Errorf("goroutine %d's %d ns in state %s take the goroutine time past 2^63-1 ns (%d ns so far)", id, d, stateName(g.state), w.total)
		return
	}
	w.total += d
	a.n++
	a.ns += d
}

// stackIndex interns a stack by content (trace.Stack values differ across
// generations for one stack), -1 for none. A frame with neither a PC nor
// a function, which traces hold in the stacks of some system calls and
// scheduling events, says nothing and is left out; a stack of nothing
// else is none, so its time gets the state's synthetic leaf ([syscall],
// [waiting]) as a stack that was not recorded does, not a nameless frame.
func (w *walker) stackIndex(s trace.Stack) int32 {
	if s == trace.NoStack {
		return -1
	}
	if i, ok := w.byStack[s]; ok {
		return i
	}
	var key strings.Builder
	var frames []trace.StackFrame
	for f := range s.Frames() {
		if f.PC == 0 && f.Func == "" {
			continue
		}
		frames = append(frames, f)
		fmt.Fprintf(&key, "%x %s %s %d;", f.PC, f.Func, f.File, f.Line)
	}
	if len(frames) == 0 {
		w.byStack[s] = -1
		return -1
	}
	i, ok := w.byPCs[key.String()]
	if !ok {
		info := stackInfo{frames: frames}
		if w.opts.ProfilerFrame != nil {
			for _, f := range frames {
				if w.opts.ProfilerFrame(f.Func) {
					info.profiler = true
					break
				}
			}
		}
		i = int32(len(w.stacks))
		w.stacks = append(w.stacks, info)
		w.byPCs[key.String()] = i
	}
	w.byStack[s] = i
	return i
}

func (w *walker) warnings() []string {
	var ws []string
	if len(w.unknown) > 0 {
		var rs []string
		for r := range w.unknown {
			rs = append(rs, fmt.Sprintf("%q", r))
		}
		sort.Strings(rs)
		ws = append(ws, fmt.Sprintf("unrecognized block reason(s) %s counted as wait", strings.Join(rs, ", ")))
	}
	return ws
}

// lockFrame matches the frame a goroutine blocked in when a "sync" block
// is a lock: Mutex and RWMutex locks (sync and internal/sync, whose slow
// paths are what remains after the runtime trims its own frames) and the
// fd mutex that serializes reads and writes on one file descriptor.
var lockFrame = regexp.MustCompile(`^(sync\.\(\*(Mutex|RWMutex)\)\.(Lock|RLock|lockSlow|rLockSlow)|internal/sync\.\(\*(Mutex|RWMutex)\)\.(Lock|RLock|lockSlow)|internal/poll\.\(\*fdMutex\)\.(rwlock|lock|readLock|writeLock)|internal/poll\.\(\*FD\)\.(readLock|writeLock|incref))$`)

// semaFrame matches the runtime's semaphore entry points, which may remain
// on top of a "sync" block's stack in some Go versions.
var semaFrame = regexp.MustCompile(`^(runtime\.|internal/sync\.runtime_|sync\.runtime_|internal/poll\.runtime_Semacquire)`)

// Bucket returns the bucket of an interval in state with reason, whose
// stack (leaf first) is frames, and whether the state and reason decide it
// ("" reason on a waiting goroutine: they do not).
func Bucket(state trace.GoState, reason string, frames []string) (string, bool) {
	switch state {
	case trace.GoRunning:
		return "cpu", true
	case trace.GoRunnable:
		return labels.Sched, true
	case trace.GoSyscall:
		return "syscall", true
	case trace.GoWaiting:
	default:
		return "", false
	}
	switch reason {
	case "":
		return "", false
	case "sync":
		for _, f := range frames {
			if semaFrame.MatchString(f) {
				continue
			}
			if lockFrame.MatchString(f) {
				return "lock-contention", true
			}
			break
		}
		return "wait", true
	case "network":
		return "io", true
	case "GC mark assist wait for work", "wait until GC ends", "GC weak to strong wait":
		return "gc", true
	case "preempted":
		// Parked by suspendG, which the collector uses to scan a running
		// goroutine's stack.
		return "gc", true
	case "chan receive", "chan send", "select", "forever", "sync.(*Cond).Wait", "sleep",
		"synctest", "unspecified", "wait for debug call",
		"GC background sweeper wait", "system goroutine wait":
		return "wait", true
	}
	return "wait", true
}

// knownReason reports whether Bucket knows a waiting reason by name.
func knownReason(r string) bool {
	switch r {
	case "", "sync", "network", "GC mark assist wait for work", "wait until GC ends", "GC weak to strong wait",
		"preempted", "chan receive", "chan send", "select", "forever", "sync.(*Cond).Wait", "sleep",
		"synctest", "unspecified", "wait for debug call", "GC background sweeper wait", "system goroutine wait":
		return true
	}
	return false
}

func stateName(s trace.GoState) string {
	switch s {
	case trace.GoRunning:
		return "running"
	case trace.GoRunnable:
		return "runnable"
	case trace.GoWaiting:
		return "waiting"
	case trace.GoSyscall:
		return "syscall"
	}
	return s.String()
}

type sampleKey struct {
	state    trace.GoState
	reason   string
	stack    int32
	waker    int32
	tag      int32
	profiler bool
}

// samples merges the accumulated intervals of all goroutines by stack,
// state, reason and profiler flag, and returns them with their keys in a
// fixed order.
func (w *walker) samples() (map[sampleKey]*accVal, []sampleKey) {
	samples := map[sampleKey]*accVal{}
	for k, v := range w.acc {
		sk := sampleKey{state: k.state, reason: k.reason, stack: k.stack, waker: k.waker, tag: k.tag, profiler: w.profG[k.g]}
		a := samples[sk]
		if a == nil {
			a = &accVal{}
			samples[sk] = a
		}
		a.n += v.n
		a.ns += v.ns
	}
	// Every field takes part, so the order is total and fixed.
	keys := slices.SortedFunc(maps.Keys(samples), func(a, b sampleKey) int {
		return cmp.Or(cmp.Compare(a.stack, b.stack), cmp.Compare(a.state, b.state), cmp.Compare(a.reason, b.reason),
			cmp.Compare(a.waker, b.waker), cmp.Compare(a.tag, b.tag), cmp.Compare(b2i(a.profiler), b2i(b.profiler)))
	})
	return samples, keys
}

// b2i orders false before true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// labels returns the labels of one sample: state, reason, the bucket the
// state and reason decide (frames are its function names, leaf first) and
// the profiler flag. It notes reasons Bucket does not know.
func (w *walker) labels(k sampleKey, frames []string) map[string][]string {
	lb := map[string][]string{labels.State: {stateName(k.state)}}
	reason := k.reason
	if k.state == trace.GoWaiting && reason == "" {
		reason = "unknown"
	}
	if reason != "" {
		lb[labels.Reason] = []string{reason}
	}
	if k.state == trace.GoWaiting && !knownReason(k.reason) {
		w.unknown[k.reason] = true
	}
	if b, ok := Bucket(k.state, k.reason, frames); ok {
		lb[labels.Bucket] = []string{b}
	}
	if k.profiler {
		lb[labels.Profiler] = []string{"true"}
	}
	if wk := w.wakerLabel(k.waker); wk != "" {
		lb[labels.Waker] = []string{wk}
	}
	if k.tag >= 0 {
		lb[w.tagKey] = []string{w.tags[k.tag]}
	}
	return lb
}

// wakerLabel is the labels.Waker value of a waker: its stack root first,
// ";"-joined, or a "[none: …]" value; "" for none.
func (w *walker) wakerLabel(waker int32) string {
	switch waker {
	case wakerNone:
		return ""
	case wakerTimer:
		return labels.WakerTimer
	case wakerNetwork:
		return labels.WakerNetwork
	case wakerUnknown:
		return labels.WakerUnknown
	}
	return w.folded(waker)
}

// folded is a stack's function names root first, ";"-joined.
func (w *walker) folded(stack int32) string {
	frames := w.stacks[stack].frames
	names := make([]string, len(frames))
	for i, f := range frames {
		names[len(frames)-1-i] = f.Func
	}
	return strings.Join(names, ";")
}

// profile aggregates the intervals into samples, one per stack, state,
// reason and profiler flag.
func (w *walker) profile() *pprofile.Profile {
	p := &pprofile.Profile{
		SampleType:        []*pprofile.ValueType{{Type: "intervals", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}},
		DefaultSampleType: "wall",
		PeriodType:        &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            1,
		DurationNanos:     int64(w.last - w.first),
		TimeNanos:         w.wallNs,
		Comments:          []string{fmt.Sprintf("%s (go %s)", CommentPrefix, w.version)},
	}
	samples, keys := w.samples()

	// A function is its name and file; a location is the whole frame.
	b := build.New[[2]string, trace.StackFrame](p)
	loc := func(f trace.StackFrame) *pprofile.Location {
		if l, ok := b.Location(f); ok {
			return l
		}
		fn := b.Function([2]string{f.Func, f.File}, pprofile.Function{Name: f.Func, SystemName: f.Func, Filename: f.File})
		return b.AddLocationAs(f, &pprofile.Location{Address: f.PC, Line: []pprofile.Line{{Function: fn, Line: int64(f.Line)}}})
	}
	synth := func(name string) *pprofile.Location { return loc(trace.StackFrame{Func: name}) }

	var names []string
	for _, k := range keys {
		v := samples[k]
		var stack []*pprofile.Location
		names = names[:0]
		switch k.state {
		case trace.GoRunning:
			stack = append(stack, synth(FrameRunning))
		case trace.GoRunnable:
			stack = append(stack, synth(FrameRunnable))
		case trace.GoWaiting:
			if k.stack < 0 {
				stack = append(stack, synth(FrameWaiting))
			}
		case trace.GoSyscall:
			if k.stack < 0 {
				stack = append(stack, synth(FrameSyscall))
			}
		}
		if k.stack >= 0 {
			for _, f := range w.stacks[k.stack].frames {
				stack = append(stack, loc(f))
				names = append(names, f.Func)
			}
		}
		labels := w.labels(k, names)
		b.AddSample(&pprofile.Sample{Location: stack, Value: []int64{v.n, v.ns}, Label: labels})
	}
	return p
}
