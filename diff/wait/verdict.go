package wait

import (
	"maps"
	"slices"

	"github.com/profdiff/profdiff/diff/result"
)

// PrincipalShare is the least share of the lock waiting (one side) or of
// its growth (two sides) that one holder must explain for the verdict to
// name it.
const PrincipalShare = 0.5

// evidenceRank orders the evidence the verdict prefers: exact pairings
// (a trace's wake-ups followed back, a recorded owner, a recorded waker)
// before the mutex and block profiles' pairing by site and delay.
var evidenceRank = []string{EvidenceTrace, EvidenceOwner, EvidenceWaker, EvidenceProfiles}

// verdict names the holder that explains most of the lock waiting, or of
// its growth. Each holder is charged its share of its lock's waiting
// (WaitSite.Charged), summed over the locks it holds. Where several kinds of evidence are present (the
// profiles and the trace of one capture), they measure the same waits
// twice: the verdict reads the first of evidenceRank that has lock
// waiting (on both sides of a comparison, where one has).
func verdict(r *result.Wait) result.WaitVerdict {
	totals := map[string]*[2]float64{}
	for _, l := range r.Locks {
		t := totals[l.Evidence]
		if t == nil {
			t = &[2]float64{}
			totals[l.Evidence] = t
		}
		t[0] += l.Waited[0]
		t[1] += l.Waited[1]
	}
	// A comparison reads evidence both sides have, where one does: a
	// trace on one side only would make all its waiting look new.
	evidence := ""
	for _, both := range []bool{r.Sides == 2, false} {
		for _, e := range evidenceRank {
			if t := totals[e]; evidence == "" && t != nil && t[0]+t[1] > 0 && (!both || t[0] > 0 && t[1] > 0) {
				evidence = e
			}
		}
	}
	if evidence == "" {
		return result.WaitVerdict{}
	}
	v := result.WaitVerdict{Waited: *totals[evidence]}
	// Each holder's charge is summed over the locks it holds: a thread
	// holding several monitors at once (JFR's owner) explains the
	// waiting of them all.
	type charged struct {
		holder, lock string // lock: the one charged most
		ns, lockNs   [2]float64
		locks        int
	}
	byHolder := map[string]*charged{}
	for _, l := range r.Locks {
		if l.Evidence != evidence {
			continue
		}
		for _, h := range l.Holders {
			ns := [2]float64{h.Charged[0] * l.Waited[0], h.Charged[1] * l.Waited[1]}
			c := byHolder[h.Site]
			if c == nil {
				c = &charged{holder: h.Site}
				byHolder[h.Site] = c
			}
			c.ns[0] += ns[0]
			c.ns[1] += ns[1]
			c.locks++
			if ns[0]+ns[1] > c.lockNs[0]+c.lockNs[1] || c.lock == "" {
				c.lock, c.lockNs = l.Name, ns
			}
		}
	}
	score := func(c *charged) float64 { return c.ns[0] }
	whole := v.Waited[0]
	if r.Sides == 2 {
		score = func(c *charged) float64 { return c.ns[1] - c.ns[0] }
		whole = v.Waited[1] - v.Waited[0]
	}
	if whole <= 0 || len(byHolder) == 0 {
		return v
	}
	var best *charged
	for _, h := range slices.Sorted(maps.Keys(byHolder)) {
		if c := byHolder[h]; best == nil || score(c) > score(best) {
			best = c
		}
	}
	if share := score(best) / whole; share >= PrincipalShare {
		v.Holder, v.Lock, v.Locks, v.Share = best.holder, best.lock, best.locks, share
	}
	return v
}

// notes say what each side's data cannot tell, once each.
func notes(r *result.Wait) []string {
	var ns []string
	add := func(s string) {
		if !contains(ns, s) {
			ns = append(ns, s)
		}
	}
	for s := range r.Sides {
		in := r.Inputs[s]
		switch {
		case in.Labelled > 0:
		case in.Mutex > 0 && in.Block == 0:
			add("a side has a mutex profile but no block profile: holders are shown without their waiters")
		case in.Block > 0 && in.Mutex == 0:
			add("a side has a block profile but no mutex profile: waiters are shown without their holders")
		case in.Mutex == 0 && in.Block == 0:
			add("a side has no mutex or block profile and no samples that name a waker or lock owner: nothing says who made it wait")
		}
	}
	if r.Inputs[0].Mutex+r.Inputs[1].Mutex > 0 {
		add("mutex and block profiles record no lock identity: their waiters and holders are paired by call site, receiver type and delay totals (see each lock's match)")
	}
	return ns
}
