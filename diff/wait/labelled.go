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
)

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
