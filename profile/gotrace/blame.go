package gotrace

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	pprofile "github.com/google/pprof/profile"
	"golang.org/x/exp/trace"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// The labels of Blame's profiles.
const (
	// LabelWaiter is, on a sample of Blamed.Locks, the stack where a
	// goroutine waited for a lock, root first, ";"-joined.
	LabelWaiter = "profdiff.waiter"
	// LabelPath is, on a sample of Blamed.Paths, the goroutine whose
	// critical path it is, named by the stack where it waited longest,
	// root first, ";"-joined (goroutines that wait at the same stack
	// share a path).
	LabelPath = labels.Path
)

// BlameOptions control Blame. The zero value is usable.
type BlameOptions struct {
	// ProfilerFrame is Options.ProfilerFrame: the profiler's goroutines
	// have no path of their own.
	ProfilerFrame func(name string) bool
	// Focus picks the goroutines whose critical path is wanted: those
	// with a frame, in any of their stacks, whose function it matches.
	// Nil: the Top goroutines with the most waiting time.
	Focus func(name string) bool
	// Top is how many goroutines have their path without Focus
	// (0: DefaultTop; negative: none).
	Top int
	// Depth bounds how many wake-ups a path follows back from one
	// goroutine (0: DefaultDepth).
	Depth int
}

// Defaults of BlameOptions.
const (
	DefaultTop   = 5
	DefaultDepth = 8
)

// Blamed is what Blame charges waiting time to.
type Blamed struct {
	// Locks charges every lock wait (waiting time that Bucket calls
	// lock-contention) to the code on its critical path: the goroutine
	// that woke it, while it ran, at the stack where it woke it (its
	// Unlock: the end of its critical section); while that goroutine
	// itself waited, the goroutine that woke it, and so on. Each sample
	// carries LabelWaiter and the bucket of the charged time.
	Locks *pprofile.Profile
	// Paths is the critical path of each goroutine of interest: its time
	// from its first to its last event charged to its own stacks while it
	// ran, and, while it waited, to the path of the goroutine that woke
	// it, as Locks does. Each sample carries LabelPath.
	Paths *pprofile.Profile
}

// Blame reads a trace and follows its wake-up edges back (see Blamed).
// Waiting that no goroutine ended (a timer, the network, the trace's
// end), or past BlameOptions.Depth wake-ups, stays charged to the
// waiting goroutine's own stack and reason. Memory is linear in the
// trace: every goroutine's intervals are kept.
func Blame(data []byte, opts BlameOptions) (b *Blamed, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("corrupt Go execution trace (reader failed: %v)", r)
		}
	}()
	if opts.Top == 0 {
		opts.Top = DefaultTop
	}
	if opts.Depth <= 0 {
		opts.Depth = DefaultDepth
	}
	w := newWalker(Options{ProfilerFrame: opts.ProfilerFrame})
	bl := &blamer{w: w, depth: opts.Depth, tl: map[trace.GoID][]interval{}, tagIdx: map[string]int32{}}
	w.onInterv = func(iv interval) {
		if iv.to > iv.from {
			bl.tl[iv.g] = append(bl.tl[iv.g], iv)
		}
	}
	if err := w.walk(data); err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Keys(bl.tl))
	b = &Blamed{}
	if b.Locks, err = bl.profile(LabelWaiter, func() {
		for _, g := range ids {
			for _, iv := range bl.tl[g] {
				if iv.state != trace.GoWaiting || !bl.lockWait(iv) {
					continue
				}
				tag := bl.tag(w.folded(iv.stack))
				if !bl.follow(iv, 0) {
					bl.add(iv, iv.from, iv.to, -1, tag)
					continue
				}
				covered := bl.charge(iv.wakerG, iv.from, iv.to, 1, iv.waker, tag)
				if gap := iv.to - iv.from - covered; gap > 0 {
					bl.add(iv, iv.from, iv.from+gap, -1, tag)
				}
			}
		}
	}); err != nil {
		return nil, err
	}
	if b.Paths, err = bl.profile(LabelPath, func() {
		for _, g := range bl.interesting(ids, opts) {
			ivs := bl.tl[g]
			bl.charge(g, ivs[0].from, ivs[len(ivs)-1].to, 0, -1, bl.tag(bl.name(g)))
		}
	}); err != nil {
		return nil, err
	}
	return b, nil
}

type blamer struct {
	w      *walker
	depth  int
	tl     map[trace.GoID][]interval // each goroutine's intervals, in time order
	tagIdx map[string]int32
	err    error
}

// profile runs fill, which charges time, and returns the profile of what
// it charged, each sample labelled key.
func (b *blamer) profile(key string, fill func()) (*pprofile.Profile, error) {
	b.w.acc, b.w.tags, b.w.tagKey = map[accKey]*accVal{}, nil, key
	clear(b.tagIdx)
	fill()
	if b.err != nil {
		return nil, b.err
	}
	return b.w.profile(), nil
}

func (b *blamer) tag(s string) int32 {
	i, ok := b.tagIdx[s]
	if !ok {
		i = int32(len(b.w.tags))
		b.w.tags = append(b.w.tags, s)
		b.tagIdx[s] = i
	}
	return i
}

// lockWait reports whether a waiting interval is a lock wait.
func (b *blamer) lockWait(iv interval) bool {
	var names []string
	if iv.stack >= 0 {
		for _, f := range b.w.stacks[iv.stack].frames {
			names = append(names, f.Func)
		}
	}
	bucket, ok := Bucket(iv.state, iv.reason, names)
	return ok && bucket == "lock-contention"
}

// follow reports whether a waiting interval's time goes to its waker: a
// goroutine woke it, whose intervals are known, within the depth.
func (b *blamer) follow(iv interval, depth int) bool {
	return iv.state == trace.GoWaiting && iv.wakerG != trace.NoGoroutine && iv.wakerG != iv.g &&
		depth < b.depth && len(b.tl[iv.wakerG]) > 0
}

// charge charges g's time in [from, to) to its path and returns how much
// of it g's intervals cover. Where g ran, the time goes to stack when it
// is a stack (the one where g woke the goroutine being followed), else to
// g's own; where g waited, to its waker's path, depth+1.
func (b *blamer) charge(g trace.GoID, from, to trace.Time, depth int, stack int32, tag int32) trace.Time {
	ivs := b.tl[g]
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].to > from })
	var covered trace.Time
	for ; i < len(ivs) && ivs[i].from < to && b.err == nil; i++ {
		iv := ivs[i]
		x, y := max(iv.from, from), min(iv.to, to)
		if y <= x {
			continue
		}
		covered += y - x
		next, retry := b.retry(ivs, i)
		if retry && b.follow(next, depth) {
			iv = next // a failed lock attempt: part of the wait that follows it
		}
		if b.follow(iv, depth) {
			c := b.charge(iv.wakerG, x, y, depth+1, iv.waker, tag)
			if gap := y - x - c; gap > 0 {
				b.add(iv, x, x+gap, -1, tag)
			}
			continue
		}
		st := int32(-1)
		if iv.state != trace.GoWaiting {
			st = stack
		}
		b.add(iv, x, y, st, tag)
	}
	return covered
}

// retryRun is the longest run between two lock waits that counts as a
// failed attempt at the lock: a woken waiter that finds the lock taken
// again (a goroutine that barged in while it waited for a CPU) spins for
// a few microseconds and parks again.
const retryRun = 100 * time.Microsecond

// retry reports whether ivs[i] is a runnable or running stretch between
// two lock waits of one goroutine, running at most retryRun: a failed
// attempt at the lock, whose time the lock's holder then made it wait as
// much as in the waits around it. It returns the lock wait that follows.
func (b *blamer) retry(ivs []interval, i int) (interval, bool) {
	j := i
	switch ivs[i].state {
	case trace.GoRunnable:
		if i+1 < len(ivs) && ivs[i+1].state == trace.GoRunning {
			j = i + 1
		}
	case trace.GoRunning:
		if i > 0 && ivs[i-1].state == trace.GoRunnable {
			i--
		}
	default:
		return interval{}, false
	}
	if ivs[j].state == trace.GoRunning && ivs[j].to-ivs[j].from > trace.Time(retryRun) {
		return interval{}, false
	}
	if i == 0 || j+1 >= len(ivs) {
		return interval{}, false
	}
	prev, next := ivs[i-1], ivs[j+1]
	if prev.state != trace.GoWaiting || next.state != trace.GoWaiting || !b.lockWait(prev) || !b.lockWait(next) {
		return interval{}, false
	}
	return next, true
}

// add charges [from, to) of iv to its state and reason at stack (iv's own
// when -1).
func (b *blamer) add(iv interval, from, to trace.Time, stack, tag int32) {
	if stack < 0 {
		stack = iv.stack
	}
	reason := iv.reason
	if iv.state == trace.GoRunning || iv.state == trace.GoSyscall {
		reason = ""
	}
	k := accKey{state: iv.state, reason: reason, stack: stack, waker: wakerNone, tag: tag}
	a := b.w.acc[k]
	if a == nil {
		a = &accVal{}
		b.w.acc[k] = a
	}
	d := int64(to - from)
	if a.ns > math.MaxInt64-d {
		b.err = fmt.Errorf("corrupt Go execution trace (go %s): the time charged to one stack passes 2^63-1 ns", b.w.version)
		return
	}
	a.n++
	a.ns += d
}

// interesting are the goroutines whose path is wanted: those with a
// frame Focus matches, or the Top with the most waiting time; never the
// profiler's, nor the runtime's own (whose every frame is runtime.*).
func (b *blamer) interesting(ids []trace.GoID, opts BlameOptions) []trace.GoID {
	if opts.Top < 0 && opts.Focus == nil {
		return nil
	}
	type gw struct {
		g    trace.GoID
		wait trace.Time
	}
	var gs []gw
	for _, g := range ids {
		if b.w.profG[g] {
			continue
		}
		var wait trace.Time
		match := opts.Focus == nil
		user := false
		for _, iv := range b.tl[g] {
			if iv.state == trace.GoWaiting {
				wait += iv.to - iv.from
			}
			if !user && iv.stack >= 0 {
				for _, f := range b.w.stacks[iv.stack].frames {
					if f.Func != "" && !strings.HasPrefix(f.Func, "runtime.") {
						user = true
						break
					}
				}
			}
			if !match && iv.stack >= 0 {
				for _, f := range b.w.stacks[iv.stack].frames {
					if opts.Focus(f.Func) {
						match = true
						break
					}
				}
			}
		}
		if match && user && wait > 0 {
			gs = append(gs, gw{g, wait})
		}
	}
	if opts.Focus == nil {
		sort.SliceStable(gs, func(i, j int) bool { return gs[i].wait > gs[j].wait })
		gs = gs[:min(len(gs), opts.Top)]
	}
	out := make([]trace.GoID, len(gs))
	for i, x := range gs {
		out[i] = x.g
	}
	return out
}

// name is a goroutine's path name: the stack where it waited longest.
func (b *blamer) name(g trace.GoID) string {
	by := map[int32]trace.Time{}
	for _, iv := range b.tl[g] {
		if iv.state == trace.GoWaiting && iv.stack >= 0 {
			by[iv.stack] += iv.to - iv.from
		}
	}
	best, bt := int32(-1), trace.Time(-1)
	for _, st := range slices.Sorted(maps.Keys(by)) {
		if by[st] > bt {
			best, bt = st, by[st]
		}
	}
	if best < 0 {
		return fmt.Sprintf("goroutine %d", g)
	}
	return b.w.folded(best)
}
