package wait

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/units"
)

// minFit is the least fit (the smaller of two delay totals over the
// larger) at which a holder group and a waiter group are paired by their
// delays alone. The mutex and block profiles record the same contentions
// at their two ends, so one lock's totals agree closely (within a few
// percent at full sampling); a half that fits no better than 1:4 is left
// a half rather than guessed.
const minFit = 0.25

// node is a waiter site or a holder site of the mutex+block evidence.
type node struct {
	holder bool
	site   string
}

// group is a set of sites joined into one lock, with how.
type group struct {
	nodes        []node
	waited, held float64 // both sides
	match        []string
	ambiguous    []string
}

// pair joins the mutex+block evidence into locks: sites that both lock
// and unlock (a waiter site that is also a holder site: the same
// function), methods of one receiver type, and then, by delay totals,
// groups whose holders released about the delay others' waiters waited.
func (a *analysis) pair(r *result.Wait) []result.WaitLock {
	if len(a.waiters) == 0 && len(a.holders) == 0 {
		return nil
	}
	var nodes []node
	for _, s := range slices.Sorted(maps.Keys(a.waiters)) {
		nodes = append(nodes, node{false, s})
	}
	for _, s := range slices.Sorted(maps.Keys(a.holders)) {
		nodes = append(nodes, node{true, s})
	}
	uf := newUnion(len(nodes))
	why := map[int][]string{} // by root, after the links
	var links [][3]any
	for i, w := range nodes {
		if w.holder {
			continue
		}
		for j, h := range nodes {
			if !h.holder {
				continue
			}
			switch {
			case w.site == h.site:
				links = append(links, [3]any{i, j, "call site: " + w.site + " locks and unlocks"})
			case receiver(w.site) != "" && receiver(w.site) == receiver(h.site):
				links = append(links, [3]any{i, j, "receiver type: " + w.site + " and " + h.site + " are methods of " + receiver(w.site)})
			}
		}
	}
	for _, l := range links {
		uf.join(l[0].(int), l[1].(int))
	}
	for _, l := range links {
		root := uf.find(l[0].(int))
		why[root] = append(why[root], l[2].(string))
	}
	byRoot := map[int]*group{}
	var groups []*group
	for i, n := range nodes {
		root := uf.find(i)
		g := byRoot[root]
		if g == nil {
			g = &group{match: why[root]}
			byRoot[root] = g
			groups = append(groups, g)
		}
		g.nodes = append(g.nodes, n)
		if n.holder {
			h := a.holders[n.site].value
			g.held += h[0] + h[1]
		} else {
			w := a.waiters[n.site].value
			g.waited += w[0] + w[1]
		}
	}
	groups = mergeByDelay(groups)
	out := make([]result.WaitLock, 0, len(groups))
	for _, g := range groups {
		out = append(out, a.lock(g, r))
	}
	return out
}

// mergeByDelay joins each group whose holders released more delay than
// its own waiters waited (a surplus: holders only, or a function that
// holds the lock long and waits for it little), largest surplus first,
// to the group whose waiters waited the most beyond what its own holders
// released (a deficit) that it fits best. A fit (the smaller over the
// larger) below minFit joins nothing; a second group that fits too makes
// the pairing ambiguous.
func mergeByDelay(groups []*group) []*group {
	surplus := func(g *group) float64 { return g.held - g.waited }
	var movers []*group
	for _, g := range groups {
		if surplus(g) > 0 {
			movers = append(movers, g)
		}
	}
	sort.SliceStable(movers, func(i, j int) bool { return surplus(movers[i]) > surplus(movers[j]) })
	gone := map[*group]bool{}
	for _, m := range movers {
		amount := surplus(m)
		type cand struct {
			g   *group
			fit float64
		}
		var cands []cand
		for _, g := range groups {
			if g == m || gone[g] || surplus(g) >= 0 {
				continue
			}
			gap := -surplus(g)
			if fit := min(gap, amount) / max(gap, amount); fit >= minFit {
				cands = append(cands, cand{g, fit})
			}
		}
		if len(cands) == 0 {
			continue
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].fit > cands[j].fit })
		best := cands[0].g
		best.match = append(best.match, fmt.Sprintf("delay totals: %s released %s beyond what its own waiters waited, the %s that %s waited beyond what its own holders released",
			siteList(m), units.Format(amount, "nanoseconds"), units.Format(-surplus(best), "nanoseconds"), siteList(best)))
		best.match = append(best.match, m.match...)
		for _, c := range cands[1:] {
			best.ambiguous = append(best.ambiguous, fmt.Sprintf("%s's delay also fits %s (%.0f%% against %.0f%%)",
				siteList(m), siteList(c.g), 100*c.fit, 100*cands[0].fit))
		}
		best.nodes = append(best.nodes, m.nodes...)
		best.held += m.held
		best.waited += m.waited
		best.ambiguous = append(best.ambiguous, m.ambiguous...)
		gone[m] = true
	}
	kept := groups[:0]
	for _, g := range groups {
		if !gone[g] {
			kept = append(kept, g)
		}
	}
	return kept
}

// siteList names a group's sites, at most three.
func siteList(g *group) string {
	var names []string
	for _, n := range g.nodes {
		if !contains(names, n.site) {
			names = append(names, n.site)
		}
	}
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// lock makes a group's result row.
func (a *analysis) lock(g *group, r *result.Wait) result.WaitLock {
	l := result.WaitLock{Evidence: EvidenceProfiles, Match: g.match}
	for _, n := range g.nodes {
		if n.holder {
			acc := a.holders[n.site]
			l.Holders = append(l.Holders, acc.site(n.site, a.opts.Stacks))
			l.Held[0] += acc.value[0]
			l.Held[1] += acc.value[1]
		} else {
			acc := a.waiters[n.site]
			l.Waiters = append(l.Waiters, acc.site(n.site, a.opts.Stacks))
			l.Waited[0] += acc.value[0]
			l.Waited[1] += acc.value[1]
		}
	}
	sortSites(l.Waiters)
	sortSites(l.Holders)
	charge(&l)
	if len(g.ambiguous) > 0 {
		l.Ambiguous = strings.Join(g.ambiguous, "; ")
	}
	switch {
	case len(l.Holders) == 0:
		l.Half = "waiters only: no holder in the mutex profiles pairs with them"
		if !hasKind(r, func(s result.WaitSide) int { return s.Mutex }) {
			l.Half = "waiters only: no mutex profile was given"
		}
	case len(l.Waiters) == 0:
		l.Half = "holders only: no lock wait in the block profiles pairs with them"
		if !hasKind(r, func(s result.WaitSide) int { return s.Block }) {
			l.Half = "holders only: no block profile was given"
		}
		if isMachinery(l.Holders[0].Site) {
			l.Half += " (the runtime's own locks are not in block profiles)"
		}
	}
	l.Name = lockName(l)
	return l
}

// charge sets each holder's share of its lock's waiting: its part of the
// delay the lock's holders released, per side.
func charge(l *result.WaitLock) {
	for i := range l.Holders {
		h := &l.Holders[i]
		for s := range 2 {
			if l.Held[s] > 0 {
				h.Charged[s] = h.Value[s] / l.Held[s]
			}
		}
	}
}

func hasKind(r *result.Wait, n func(result.WaitSide) int) bool {
	return n(r.Inputs[0]) > 0 || n(r.Inputs[1]) > 0
}

// lockName is a lock's principal waiter and holder sites.
func lockName(l result.WaitLock) string {
	switch {
	case len(l.Waiters) > 0 && len(l.Holders) > 0:
		return l.Waiters[0].Site + " ← " + l.Holders[0].Site
	case len(l.Waiters) > 0:
		return l.Waiters[0].Site + " ← ?"
	case len(l.Holders) > 0:
		return "? ← " + l.Holders[0].Site
	}
	return "?"
}

func sortSites(ss []result.WaitSite) {
	sort.SliceStable(ss, func(i, j int) bool {
		x, y := ss[i].Value[0]+ss[i].Value[1], ss[j].Value[0]+ss[j].Value[1]
		if x != y {
			return x > y
		}
		return ss[i].Site < ss[j].Site
	})
}

// receiver is the package-qualified receiver type of a Go method name
// ("pkg.(*T)" of "pkg.(*T).M", "pkg.T" of "pkg.T.M"), "" for a function.
func receiver(fn string) string {
	if i := strings.Index(fn, ".(*"); i >= 0 {
		if j := strings.Index(fn[i:], ")."); j >= 0 {
			return fn[:i+j+1]
		}
		return ""
	}
	slash := strings.LastIndexByte(fn, '/')
	rest := fn[slash+1:]
	parts := strings.Split(rest, ".")
	if len(parts) == 3 && parts[1] != "" && !strings.HasPrefix(parts[2], "func") && !strings.HasPrefix(parts[2], "gowrap") {
		return fn[:slash+1] + parts[0] + "." + parts[1]
	}
	return ""
}

// union is a union-find over indexes.
type union []int

func newUnion(n int) union {
	u := make(union, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u union) find(i int) int {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

// join makes the smaller root the root of both, so roots do not depend
// on the order of joins.
func (u union) join(i, j int) {
	a, b := u.find(i), u.find(j)
	if a > b {
		a, b = b, a
	}
	u[b] = a
}
