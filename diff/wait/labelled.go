package wait

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/gotrace"
)

// The second kind of evidence of the package comment, which pairs
// exactly: samples that name their waker or their lock's owner, and a Go
// trace's blamed lock waits; and the critical paths of traces and perf
// recordings.

// labKey is one lock of the labelled evidence: its identity where the
// format records one (profile.LabelLock), else its waiters' site.
type labKey struct {
	evidence string
	lock     string // "" unknown
	waiter   string // the waiter site, when lock is ""
}

type labGroup struct {
	waiters, holders map[string]*siteAcc
}

type edgeKey struct{ waiter, waker, bucket string }

type edgeAcc struct {
	value [2]float64
	// stacks counts the waker's stacks by their time, for the commonest.
	stacks map[string]float64
}

// labelled adds a sample that names its waker or its lock's owner: a
// wake-up edge, and, for a lock wait, its lock's waiter and holder.
func (a *analysis) labelled(side int, k profile.Kind, s *pprofile.Sample, frames []string, v float64) {
	bucket := a.bucket(s, frames, k)
	waiter := a.sampleSite(s, frames)
	holder, evidence := "", EvidenceOwner
	var holderStack []string
	if w := first(s, profile.LabelWaker); w != "" {
		evidence = EvidenceWaker
		holderStack, holder = wakerSite(w)
		ek := edgeKey{waiter, holder, bucket}
		e := a.edges[ek]
		if e == nil {
			e = &edgeAcc{stacks: map[string]float64{}}
			a.edges[ek] = e
		}
		e.value[side] += v
		e.stacks[w] += v
	}
	if bucket != "lock-contention" || a.blamed {
		return
	}
	if o := first(s, profile.LabelOwner); o != "" && holder == "" {
		holder, holderStack = o, []string{o}
	}
	lk := labKey{evidence: evidence, lock: first(s, profile.LabelLock)}
	if lk.lock == "" {
		lk.waiter = waiter
	}
	g := a.labLock[lk]
	if g == nil {
		g = &labGroup{waiters: map[string]*siteAcc{}, holders: map[string]*siteAcc{}}
		a.labLock[lk] = g
	}
	accAt(g.waiters, waiter).add(side, rootFirst(frames), v)
	accAt(g.holders, holder).add(side, holderStack, v)
}

func first(s *pprofile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// wakerSite splits a profile.LabelWaker value (root first, ";"-joined, or
// a "[none: …]" value) into its frames and its site.
func wakerSite(w string) ([]string, string) {
	if strings.HasPrefix(w, "[none:") {
		return []string{w}, w
	}
	frames := strings.Split(w, ";")
	return frames, Site(rootFirst(frames)) // rootFirst reverses: leaf first
}

// labelledLocks makes the locks of the labelled evidence, whose holders
// were recorded: each holder is charged the waiting it ended.
func (a *analysis) labelledLocks() []result.WaitLock {
	keys := slices.SortedFunc(maps.Keys(a.labLock), func(x, y labKey) int {
		return cmp.Or(cmp.Compare(x.evidence, y.evidence), cmp.Compare(x.lock, y.lock), cmp.Compare(x.waiter, y.waiter))
	})
	var out []result.WaitLock
	for _, k := range keys {
		g := a.labLock[k]
		l := result.WaitLock{Evidence: k.evidence}
		for _, s := range slices.Sorted(maps.Keys(g.waiters)) {
			acc := g.waiters[s]
			l.Waiters = append(l.Waiters, acc.site(s, a.opts.Stacks))
			l.Waited[0] += acc.value[0]
			l.Waited[1] += acc.value[1]
		}
		for _, s := range slices.Sorted(maps.Keys(g.holders)) {
			l.Holders = append(l.Holders, g.holders[s].site(s, a.opts.Stacks))
		}
		l.Held = l.Waited
		sortSites(l.Waiters)
		sortSites(l.Holders)
		charge(&l)
		switch k.evidence {
		case EvidenceWaker:
			l.Match = []string{"waker recorded: each wait names the goroutine or thread that woke it"}
		case EvidenceTrace:
			l.Match = []string{"critical path: each lock wait is charged to the goroutine that woke it, at the stack where it woke it (its Unlock), while it ran, and followed back through its own waits"}
		default:
			l.Match = []string{"owner recorded: each wait names the thread that held the lock"}
		}
		l.Name = lockName(l)
		if k.lock != "" {
			l.Name = k.lock
		}
		out = append(out, l)
	}
	return out
}

// wakeups are the wake-up edges, the largest first.
func (a *analysis) wakeups() []result.WakeEdge {
	out := make([]result.WakeEdge, 0, len(a.edges))
	for k, e := range a.edges {
		we := result.WakeEdge{Waiter: k.waiter, Waker: k.waker, Bucket: k.bucket, Value: e.value}
		best, bv := "", -1.0
		for st, v := range e.stacks {
			if v > bv || v == bv && st < best {
				best, bv = st, v
			}
		}
		we.WakerStack, _ = wakerSite(best)
		out = append(out, we)
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if a, b := x.Value[0]+x.Value[1], y.Value[0]+y.Value[1]; a != b {
			return a > b
		}
		if x.Waiter != y.Waiter {
			return x.Waiter < y.Waiter
		}
		if x.Waker != y.Waker {
			return x.Waker < y.Waker
		}
		return x.Bucket < y.Bucket
	})
	return out
}

// SchedFunction is the WaitPath function row of time a goroutine on the
// path was runnable, waiting for a CPU: scheduler latency, apart from the
// functions that ran.
const SchedFunction = "[runnable]"

// pathAcc is the critical path of the goroutines named by one stack.
type pathAcc struct {
	stack     []string // root first
	elapsed   [2]float64
	buckets   map[string]*[2]float64
	functions map[string]*[2]float64
	charged   *siteAcc
}

// readBlamed adds a trace's blamed lock waits, as locks of the trace
// evidence whose holders are the sites their time was charged to, and
// its critical paths.
func (a *analysis) readBlamed(side int, b *gotrace.Blamed) {
	var frames []string
	for _, s := range b.Locks.Sample {
		v := float64(s.Value[valueIndex(b.Locks)])
		waiterStack := strings.Split(first(s, gotrace.LabelWaiter), ";")
		if v <= 0 || len(waiterStack) == 0 {
			continue
		}
		frames = leafFirst(frames[:0], s)
		waiter := Site(rootFirst(waiterStack))
		lk := labKey{evidence: EvidenceTrace, waiter: waiter}
		g := a.labLock[lk]
		if g == nil {
			g = &labGroup{waiters: map[string]*siteAcc{}, holders: map[string]*siteAcc{}}
			a.labLock[lk] = g
		}
		accAt(g.waiters, waiter).add(side, waiterStack, v)
		accAt(g.holders, Site(frames)).add(side, rootFirst(frames), v)
	}
	a.readPaths(side, b.Paths)
}

// readPaths adds a profile of critical paths (gotrace.Blamed.Paths,
// perfscript.CriticalPaths): samples labelled with their path, their
// bucket, charged to the stack that ran.
func (a *analysis) readPaths(side int, paths *pprofile.Profile) {
	var frames []string
	for _, s := range paths.Sample {
		v := float64(s.Value[valueIndex(paths)])
		name := first(s, gotrace.LabelPath)
		if v <= 0 || name == "" {
			continue
		}
		p := a.paths[name]
		if p == nil {
			p = &pathAcc{stack: strings.Split(name, ";"), buckets: map[string]*[2]float64{}, functions: map[string]*[2]float64{}, charged: &siteAcc{}}
			a.paths[name] = p
		}
		frames = leafFirst(frames[:0], s)
		p.elapsed[side] += v
		bucket := first(s, profile.LabelBucket)
		if bucket == "" {
			bucket = "unknown"
		}
		addTo(p.buckets, bucket, side, v)
		fn := Site(frames)
		switch {
		case len(frames) == 0:
		case frames[0] == gotrace.FrameRunnable:
			fn = SchedFunction // waiting for a CPU: nobody's work
		case strings.HasPrefix(frames[0], "[none: "):
			fn = frames[0] // a wait no thread ended: "[none: timer]"
		}
		addTo(p.functions, fn, side, v)
		p.charged.add(side, rootFirst(frames), v)
	}
}

func addTo(m map[string]*[2]float64, k string, side int, v float64) {
	x := m[k]
	if x == nil {
		x = &[2]float64{}
		m[k] = x
	}
	x[side] += v
}

// pathResults are the critical paths, the longest first.
func (a *analysis) pathResults() []result.WaitPath {
	var out []result.WaitPath
	for _, name := range slices.Sorted(maps.Keys(a.paths)) {
		p := a.paths[name]
		wp := result.WaitPath{
			Site: Site(rootFirst(p.stack)), Stack: p.stack, Elapsed: p.elapsed,
			Buckets: parts(p.buckets), Functions: parts(p.functions),
		}
		for _, st := range p.charged.stacks {
			wp.Stacks = append(wp.Stacks, *st)
		}
		sort.Slice(wp.Stacks, func(i, j int) bool {
			return strings.Join(wp.Stacks[i].Frames, ";") < strings.Join(wp.Stacks[j].Frames, ";")
		})
		out = append(out, wp)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return max(out[i].Elapsed[0], out[i].Elapsed[1]) > max(out[j].Elapsed[0], out[j].Elapsed[1])
	})
	return out
}

// parts are a map's entries, the largest first.
func parts(m map[string]*[2]float64) []result.WaitPart {
	out := make([]result.WaitPart, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, result.WaitPart{Name: k, Value: *m[k]})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Value[0]+out[i].Value[1] > out[j].Value[0]+out[j].Value[1]
	})
	return out
}
