package wait

import (
	"maps"
	"slices"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/gotrace"
)

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
