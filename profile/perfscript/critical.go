package perfscript

import (
	"errors"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/critpath"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// The critical path of a perf sched recording.
//
// With switch-ins, switch-outs and wake-ups (see offcpu.go and waker.go)
// each thread has a timeline: on the CPU from a switch-in to its next
// switch-out, what it ran named by the switch-out's stack (the recording
// has no finer view of it: sched_switch samples are taken where the
// thread left the CPU), then runnable (preempted) or blocked until its
// next switch-in, a blocked stretch with its waker's thread and stack at
// the wake-up. CriticalPaths walks back from each thread of interest
// through those wake-ups (package critpath): while the thread ran its time
// goes to its own stack, while it was blocked to its waker's stack at the
// wake-up as long as the waker ran, and through the waker's own waits to
// their wakers, up to a depth. Blocked time that no thread ended goes to
// the waiting stack with a leaf naming why: the Waker values
// "[none: timer]" and the like, or WakerNotRecorded. A thread's time
// before its first switch-in of the recording and after its last
// switch-in is not on its timeline.

// CriticalPaths' defaults.
const (
	DefaultTop   = 5
	DefaultDepth = 8
)

// WakerNotRecorded is the leaf frame of blocked time whose end no wake-up
// in the recording names (a per-task recording does not see wake-ups by
// other processes).
const WakerNotRecorded = "[none: no wake-up recorded]"

// PathOptions control CriticalPaths. The zero value is usable.
type PathOptions struct {
	// Focus picks the threads whose path is wanted: those with a frame,
	// in any of their switch-out stacks, whose function it matches. Nil:
	// the Top threads with the most blocked time.
	Focus func(name string) bool
	// Top is how many threads have their path without Focus (0:
	// DefaultTop; negative: none).
	Top int
	// Depth bounds how many wake-ups a path follows back (0:
	// DefaultDepth).
	Depth int
}

// timeline is each thread's stretches, built while parsing.
type timeline struct {
	lastIn   map[int64]int64
	threads  map[int64][]critpath.Stretch
	stacks   []string // root first, ";"-joined
	stackIdx map[string]int
}

func (t *timeline) stack(s string) int {
	i, ok := t.stackIdx[s]
	if !ok {
		i = len(t.stacks)
		t.stacks = append(t.stacks, s)
		t.stackIdx[s] = i
	}
	return i
}

// firstIn notes a switch-in of a thread that was not known to be off the
// CPU (its first): its running stretch starts there.
func (t *timeline) firstIn(tid, ns int64) {
	if _, ok := t.lastIn[tid]; !ok {
		t.lastIn[tid] = ns
	}
}

// interval notes that thread tid was off the CPU from p.start to end: the
// stretch it ran before (from its previous switch-in, when known), then
// the off-CPU one.
func (t *timeline) interval(b *builder, tid int64, p pending, end int64) {
	own := t.stack(b.foldStack(p.acc.s.Location))
	if in, ok := t.lastIn[tid]; ok && in < p.start {
		t.threads[tid] = append(t.threads[tid], critpath.Stretch{From: in, To: p.start, State: critpath.Running, Stack: own})
	}
	s := critpath.Stretch{From: p.start, To: end, State: critpath.Blocked, Stack: own, WakerStack: -1}
	if p.acc.state == stateRunnable {
		s.State = critpath.Runnable
	}
	if p.waker.stack != "" {
		s.Waker, s.WakerStack = p.waker.tid, t.stack(p.waker.stack)
	}
	// From its wake-up to its switch-in the thread was runnable: its own
	// scheduler latency, not its waker's work.
	woke := end
	if p.waker.stack != "" && s.State == critpath.Blocked && p.woke > p.start && p.woke < end {
		woke = p.woke
	}
	if woke > p.start {
		s.To = woke
		t.threads[tid] = append(t.threads[tid], s)
	}
	if end > woke {
		t.threads[tid] = append(t.threads[tid], critpath.Stretch{From: woke, To: end, State: critpath.Runnable, Stack: own, WakerStack: -1})
	}
	t.lastIn[tid] = end
}

// HasWakeups reports whether a profile Parse made has wake-ups
// (a sched_waking or sched_wakeup sample type): only then can
// CriticalPaths find a path in its text.
func HasWakeups(p *profile.Profile) bool {
	for _, st := range p.SampleType {
		if wakeEvent(st.Type) {
			return true
		}
	}
	return false
}

// CriticalPaths reads perf script text, as Parse does, and returns the
// critical path of each thread of interest (see PathOptions): a profile
// of wall nanoseconds whose samples carry labels.Path (the thread, named
// by the stack where it was blocked longest) and labels.Bucket (cpu for
// running time, sched for runnable, wait or io for blocked time no waker
// is followed through). It returns a nil profile when the text has no
// wake-ups with switch-ins (no sched_waking, or no switch-ins), and
// Parse's errors.
func CriticalPaths(text string, opts PathOptions) (*profile.Profile, error) {
	if opts.Top == 0 {
		opts.Top = DefaultTop
	}
	if opts.Depth <= 0 {
		opts.Depth = DefaultDepth
	}
	b := newBuilder()
	tl := &timeline{lastIn: map[int64]int64{}, threads: map[int64][]critpath.Stretch{}, stackIdx: map[string]int{}}
	b.tl = tl
	if _, _, err := parse(text, b); err != nil {
		return nil, err
	}
	if len(b.wakerStacks) == 0 || b.off.closed == 0 {
		return nil, nil
	}
	pb := &pathBuilder{tl: tl, acc: map[pathKey]int64{}}
	w := &critpath.Walk{Timeline: tl.threads, Depth: opts.Depth, Add: pb.add}
	for _, tid := range tl.interesting(opts) {
		pb.name = tl.name(tid)
		w.Path(tid)
	}
	if pb.err != nil {
		return nil, pb.err
	}
	return pb.profile(), nil
}

// interesting are the threads whose path is wanted, in thread id order.
func (t *timeline) interesting(opts PathOptions) []int64 {
	if opts.Top < 0 && opts.Focus == nil {
		return nil
	}
	type tw struct {
		tid     int64
		blocked int64
	}
	var ts []tw
	for _, tid := range slices.Sorted(maps.Keys(t.threads)) {
		var blocked int64
		match := opts.Focus == nil
		for _, s := range t.threads[tid] {
			if s.State == critpath.Blocked {
				blocked += s.To - s.From
			}
			if !match {
				for _, f := range strings.Split(t.stacks[s.Stack], ";") {
					if opts.Focus(f) {
						match = true
						break
					}
				}
			}
		}
		if match && blocked > 0 {
			ts = append(ts, tw{tid, blocked})
		}
	}
	if opts.Focus == nil {
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].blocked > ts[j].blocked })
		ts = ts[:min(len(ts), opts.Top)]
	}
	out := make([]int64, len(ts))
	for i, x := range ts {
		out[i] = x.tid
	}
	slices.Sort(out)
	return out
}

// name is a thread's path name: the stack where it was blocked longest.
func (t *timeline) name(tid int64) string {
	by := map[int]int64{}
	for _, s := range t.threads[tid] {
		if s.State == critpath.Blocked {
			by[s.Stack] += s.To - s.From
		}
	}
	best, bt := "", int64(-1)
	for st, d := range by {
		if n := t.stacks[st]; d > bt || d == bt && n < best {
			best, bt = n, d
		}
	}
	return best
}

type pathKey struct {
	name, stack, bucket string
}

// pathBuilder sums what a walk charges, by path, stack and bucket.
type pathBuilder struct {
	tl   *timeline
	name string
	acc  map[pathKey]int64
	err  error
}

func (pb *pathBuilder) add(s critpath.Stretch, from, to int64, stack int) {
	if stack < 0 {
		stack = s.Stack
	}
	st := pb.tl.stacks[stack]
	bucket := "cpu"
	switch s.State {
	case critpath.Runnable:
		st, bucket = join(st, labels.FrameRunnable), labels.Sched
	case critpath.Blocked:
		bucket = "wait"
		switch {
		case s.WakerStack < 0:
			st = join(st, WakerNotRecorded)
		case s.Waker == 0:
			st = join(st, pb.tl.stacks[s.WakerStack])
		}
	}
	k := pathKey{pb.name, st, bucket}
	if pb.acc[k] > math.MaxInt64-(to-from) {
		pb.err = errPathOverflow
		return
	}
	pb.acc[k] += to - from
}

// errPathOverflow is CriticalPaths' error for time stamps so far apart
// that the time charged to one stack passes what an int64 holds.
var errPathOverflow = errors.New("perf script: the time a critical path charges to one stack passes 2^63-1 ns (time stamps too far apart)")

func join(stack, leaf string) string {
	if stack == "" {
		return leaf
	}
	return stack + ";" + leaf
}

// profile is what the walks charged, one sample per path, stack and
// bucket, in that order.
func (pb *pathBuilder) profile() *profile.Profile {
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "wall", Unit: "nanoseconds"}},
		DefaultSampleType: "wall",
	}
	funcs := map[string]*profile.Location{}
	keys := slices.SortedFunc(maps.Keys(pb.acc), func(a, b pathKey) int {
		return strings.Compare(a.name+"\x00"+a.stack+"\x00"+a.bucket, b.name+"\x00"+b.stack+"\x00"+b.bucket)
	})
	for _, k := range keys {
		frames := strings.Split(k.stack, ";")
		s := &profile.Sample{
			Value: []int64{pb.acc[k]},
			Label: map[string][]string{labels.Path: {k.name}, labels.Bucket: {k.bucket}},
		}
		for i := len(frames) - 1; i >= 0; i-- {
			if frames[i] == "" {
				continue
			}
			l := funcs[frames[i]]
			if l == nil {
				f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: frames[i]}
				l = &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
				p.Function = append(p.Function, f)
				p.Location = append(p.Location, l)
				funcs[frames[i]] = l
			}
			s.Location = append(s.Location, l)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}
