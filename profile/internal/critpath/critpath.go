// Package critpath walks a critical path back through wake-up edges over a
// generic timeline: each thread's stretches of running, runnable and
// blocked time, a blocked stretch naming the thread that ended it and
// where that thread was when it did. A thread's time is charged to the
// code running on its path: its own stretches while it ran, and, while it
// was blocked, the stretches of its waker up to the wake-up (charged to
// the waker's stack at the wake-up while the waker ran), recursively
// through the waker's own waits, up to a depth.
//
// The perf script reader's critical path uses it (profile/perfscript).
// The Go trace reader's Blame has a walk of its own, with a rule this one
// lacks (a failed lock attempt between two lock waits counts as part of
// the wait).
package critpath

import "sort"

// State is what a thread did during a stretch.
type State uint8

// The States.
const (
	Running State = iota
	Runnable
	Blocked
)

// Stretch is a span of one thread's time, [From, To) in nanoseconds.
type Stretch struct {
	From, To int64
	State    State
	// Stack is the caller's id of what the thread ran (Running) or where
	// it blocked (Blocked).
	Stack int
	// Waker is the thread that ended a Blocked stretch (0: none known)
	// and WakerStack the caller's id of its stack at the wake-up.
	Waker      int64
	WakerStack int
}

// Walk charges time on critical paths. Timeline holds each thread's
// stretches in time order, not overlapping.
type Walk struct {
	Timeline map[int64][]Stretch
	// Depth bounds how many wake-ups a path follows back.
	Depth int
	// Add is called for each piece charged: [from, to) of stretch s, to
	// stack (s.Stack when -1). A blocked stretch is charged to itself
	// where its waker is not followed.
	Add func(s Stretch, from, to int64, stack int)
}

// Path charges thread t's time from its first stretch to its last.
func (w *Walk) Path(t int64) {
	s := w.Timeline[t]
	if len(s) == 0 {
		return
	}
	w.charge(t, s[0].From, s[len(s)-1].To, 0, -1)
}

// follow reports whether a stretch's time goes to its waker's path.
func (w *Walk) follow(t int64, s Stretch, depth int) bool {
	return s.State == Blocked && s.Waker != 0 && s.Waker != t && depth < w.Depth && len(w.Timeline[s.Waker]) > 0
}

// charge charges t's time in [from, to) and returns how much of it t's
// stretches cover. Where t ran, the time goes to stack when it is one (the
// stack where t woke the thread followed), else to t's own; where t was
// blocked, to its waker's path, depth+1, and what the waker's stretches
// do not cover to t's own wait.
func (w *Walk) charge(t int64, from, to int64, depth int, stack int) int64 {
	ss := w.Timeline[t]
	i := sort.Search(len(ss), func(i int) bool { return ss[i].To > from })
	var covered int64
	for ; i < len(ss) && ss[i].From < to; i++ {
		s := ss[i]
		x, y := max(s.From, from), min(s.To, to)
		if y <= x {
			continue
		}
		covered += y - x
		if w.follow(t, s, depth) {
			c := w.charge(s.Waker, x, y, depth+1, s.WakerStack)
			if gap := y - x - c; gap > 0 {
				w.Add(s, x, x+gap, -1)
			}
			continue
		}
		st := -1
		if s.State == Running {
			st = stack
		}
		w.Add(s, x, y, st)
	}
	return covered
}
