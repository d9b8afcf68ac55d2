package chrometrace

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// frame is one function of a stack: its name and where it is.
type frame struct {
	name, file string
	line       int64
}

// named is the frame name of an event or stack frame: its name, or
// "(unnamed)" when it has none (as speedscope shows it), never a blank
// frame that pprof's tools would show as an address.
func named(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return name
}

// stackNode is one node of the reader's stack trie: a frame under its
// caller's node. Node 0 is the empty stack.
type stackNode struct {
	parent int32
	depth  int32
	f      frame
}

type childKey struct {
	parent int32
	f      frame
}

// tick is one sample before weighting: its thread, time (µs), stack
// node and count.
type tick struct {
	thread string
	ts     float64
	node   int32
	count  int64
}

// interval is one duration event on a track.
type interval struct {
	name       string
	start, end float64
	seq        int
}

type sampleKey struct {
	thread string
	node   int32
}

type reader struct {
	d          *doc
	thread     func(pid, tid id) string
	ticks      []tick
	tracks     map[string][]*interval
	trackOrder []string
	durations  int
	warn       map[string]int
	warnOrder  []string // formats, in the order first met
	warnText   []string // the first warning of each
	nodes      []stackNode
	children   map[childKey]int32
	refs       int // frame references of the samples so far
	maxRefs    int
	b          *build.Builder[frame, frame]
	samples    map[sampleKey]*pprofile.Sample
	first      float64 // earliest and latest time stamps, µs
	last       float64
	seen       bool
}

// child returns the node of f called from parent, adding it when new.
func (r *reader) child(parent int32, f frame) (int32, error) {
	k := childKey{parent, f}
	if c, ok := r.children[k]; ok {
		return c, nil
	}
	d := r.nodes[parent].depth + 1
	if d > MaxDepth {
		return 0, fmt.Errorf("stack deeper than %d frames", MaxDepth)
	}
	r.nodes = append(r.nodes, stackNode{parent: parent, depth: d, f: f})
	c := int32(len(r.nodes) - 1)
	r.children[k] = c
	return c, nil
}

// chain interns the stack of a node of a parent-linked tree (V8's
// profile nodes, a trace's stackFrames) and its callers' stacks, memoized
// in memo. up gives a node's parent; at gives its frame, or ok false for
// a frame that is left out (V8's "(root)"). It walks iteratively, so a
// deep tree costs no Go stack, and refuses a cycle or a stack deeper than
// MaxDepth.
func chain[K comparable](r *reader, memo map[K]int32, n K, up func(K) (K, bool), at func(K) (frame, bool)) (int32, error) {
	var path []K
	for {
		if _, ok := memo[n]; ok {
			break
		}
		if len(path) > MaxDepth {
			return 0, fmt.Errorf("stack deeper than %d frames, or its parents form a cycle", MaxDepth)
		}
		path = append(path, n)
		p, ok := up(n)
		if !ok {
			break
		}
		n = p
	}
	node := int32(0) // the empty stack, above a root
	if v, ok := memo[n]; ok {
		node = v
	}
	for i := len(path) - 1; i >= 0; i-- {
		if f, ok := at(path[i]); ok {
			var err error
			if node, err = r.child(node, f); err != nil {
				return 0, err
			}
		}
		memo[path[i]] = node
	}
	return node, nil
}

func newReader(d *doc, size int) *reader {
	r := &reader{d: d, tracks: map[string][]*interval{}, warn: map[string]int{}, samples: map[sampleKey]*pprofile.Sample{},
		nodes: []stackNode{{}}, children: map[childKey]int32{}, maxRefs: min(max(4*size, 1<<16), MaxFrameRefs)}
	procs := map[id]string{}
	names := map[[2]id]string{}
	for _, e := range d.events {
		switch e.Ph {
		case "M":
			var a struct {
				Name string `json:"name"`
			}
			json.Unmarshal(e.Args, &a) // metadata without a name names nothing
			switch e.Name {
			case "process_name":
				procs[e.Pid] = a.Name
			case "thread_name":
				names[[2]id{e.Pid, e.Tid}] = a.Name
			}
		case "X", "B", "E", "b", "e":
			r.durations++
		}
	}
	r.thread = func(pid, tid id) string {
		t := fmt.Sprintf("pid %s tid %s", pid, tid)
		if n := names[[2]id{pid, tid}]; n != "" {
			t = n + " (" + t + ")"
		}
		if p := procs[pid]; p != "" {
			t = p + ": " + t
		}
		return t
	}
	return r
}

// warnf records a warning. Warnings of one format are reported once: the
// first one's text, with how many more there were.
func (r *reader) warnf(format string, a ...any) {
	if r.warn[format] == 0 {
		r.warnOrder = append(r.warnOrder, format)
		r.warnText = append(r.warnText, fmt.Sprintf(format, a...))
	}
	r.warn[format]++
}

func (r *reader) warnings() []string {
	var out []string
	for i, f := range r.warnOrder {
		w := r.warnText[i]
		if n := r.warn[f]; n > 1 {
			w += fmt.Sprintf(" (and %d more like it)", n-1)
		}
		out = append(out, w)
	}
	return out
}

func (r *reader) stamp(ts float64) {
	if !r.seen || ts < r.first {
		r.first = ts
	}
	if !r.seen || ts > r.last {
		r.last = ts
	}
	r.seen = true
}

// v8 collects the samples of V8's CPU profiles: Profile events open one
// (by pid and id), ProfileChunk events add nodes, samples and time
// deltas to it; an older CpuProfile event holds a whole profile. Stacks
// are resolved once every chunk is read (a chunk's samples may name
// nodes of a later chunk). It reports whether there were any samples.
func (r *reader) v8() (bool, error) {
	type hit struct {
		node int64
		ts   float64
	}
	type prof struct {
		thread string
		t      float64 // time of the last sample, µs
		nodes  map[int64]*cpuNode
		parent map[int64]int64
		hits   []hit
	}
	profs := map[[2]id]*prof{}
	var order []*prof
	get := func(e event, key id) *prof {
		k := [2]id{e.Pid, key}
		p := profs[k]
		if p == nil {
			p = &prof{thread: r.thread(e.Pid, e.Tid), t: float64(e.Ts), nodes: map[int64]*cpuNode{}, parent: map[int64]int64{}}
			profs[k] = p
			order = append(order, p)
		}
		return p
	}
	add := func(p *prof, cp *cpuProfile, deltas []num) {
		for i := range cp.Nodes {
			n := &cp.Nodes[i]
			p.nodes[n.ID] = n
			if n.Parent != nil {
				p.parent[n.ID] = *n.Parent
			}
			for _, c := range n.Children {
				p.parent[c] = n.ID
			}
		}
		if len(deltas) < len(cp.Samples) {
			r.warnf("a V8 profile chunk has fewer timeDeltas than samples; the samples without one are left out")
		}
		for i, n := range cp.Samples {
			if i >= len(deltas) {
				break
			}
			p.t += float64(deltas[i])
			p.hits = append(p.hits, hit{n, p.t})
		}
	}
	for i, e := range r.d.events {
		if e.Name != "Profile" && e.Name != "ProfileChunk" && e.Name != "CpuProfile" {
			continue
		}
		var a profileArgs
		if err := json.Unmarshal(e.Args, &a); err != nil {
			r.warnf("traceEvents[%d] (%s): unreadable args, left out: %v", i, e.Name, err)
			continue
		}
		switch e.Name {
		case "Profile":
			p := get(e, e.ID)
			if a.Data.StartTime != nil {
				p.t = float64(*a.Data.StartTime)
			}
		case "ProfileChunk":
			if a.Data.CPUProfile == nil {
				continue
			}
			deltas := a.Data.TimeDeltas
			if deltas == nil {
				deltas = a.Data.CPUProfile.TimeDeltas
			}
			add(get(e, e.ID), a.Data.CPUProfile, deltas)
		case "CpuProfile":
			cp := a.Data.CPUProfile
			if cp == nil {
				continue
			}
			p := get(e, id(fmt.Sprintf("CpuProfile %d", i)))
			if cp.StartTime != nil {
				p.t = float64(*cp.StartTime)
			}
			add(p, cp, cp.TimeDeltas)
		}
	}
	for _, p := range order {
		memo := map[int64]int32{}
		up := func(n int64) (int64, bool) {
			par, ok := p.parent[n]
			return par, ok && p.nodes[par] != nil
		}
		at := func(n int64) (frame, bool) {
			cf := p.nodes[n].CallFrame
			if cf.FunctionName == "(root)" {
				return frame{}, false
			}
			f := frame{name: cf.FunctionName, file: cf.URL}
			if f.name == "" {
				f.name = "(anonymous)"
			}
			if cf.LineNumber != nil && *cf.LineNumber >= 0 && *cf.LineNumber < 1<<31 {
				f.line = int64(*cf.LineNumber) + 1 // V8 counts lines from 0
			}
			return f, true
		}
		for _, h := range p.hits {
			if p.nodes[h.node] == nil {
				r.warnf("a V8 sample names node %d, which no chunk defines; left out", h.node)
				continue
			}
			node, err := chain(r, memo, h.node, up, at)
			if err != nil {
				return false, fmt.Errorf("V8 profile on %s: node %d: %v", p.thread, h.node, err)
			}
			r.ticks = append(r.ticks, tick{thread: p.thread, ts: h.ts, node: node, count: 1})
		}
	}
	return len(r.ticks) > 0, nil
}

// stackSamples collects the samples of a trace's "samples" and
// "stackFrames" (Hermes, catapult).
func (r *reader) stackSamples() error {
	memo := map[id]int32{}
	up := func(sf id) (id, bool) {
		f := r.d.stackFrames[sf]
		if f.Parent == nil {
			return "", false
		}
		_, ok := r.d.stackFrames[*f.Parent]
		return *f.Parent, ok
	}
	at := func(sf id) (frame, bool) { return frame{name: named(r.d.stackFrames[sf].Name)}, true }
	for i, sm := range r.d.samples {
		if _, ok := r.d.stackFrames[sm.SF]; !ok {
			return fmt.Errorf("samples[%d]: stackFrames has no frame %q", i, sm.SF)
		}
		node, err := chain(r, memo, sm.SF, up, at)
		if err != nil {
			return fmt.Errorf("samples[%d]: %v", i, err)
		}
		c := int64(sm.Weight)
		if !(sm.Weight >= 1) || sm.Weight > 1<<40 {
			c = 1
		}
		r.ticks = append(r.ticks, tick{thread: r.thread(sm.Pid, sm.Tid), ts: float64(sm.Ts), node: node, count: c})
	}
	return nil
}

// finishSampled weights each tick by the time to its thread's next one
// (the last one of a thread by the interval before it) and builds the
// profile, whose duration runs to the end of the last sample's time.
func (r *reader) finishSampled(comment string) (*pprofile.Profile, error) {
	p := r.start(comment, true)
	byThread := map[string][]int{}
	var threads []string
	for i, t := range r.ticks {
		if byThread[t.thread] == nil {
			threads = append(threads, t.thread)
		}
		byThread[t.thread] = append(byThread[t.thread], i)
		r.stamp(t.ts)
	}
	for _, th := range threads {
		idx := byThread[th]
		sort.SliceStable(idx, func(a, b int) bool { return r.ticks[idx[a]].ts < r.ticks[idx[b]].ts })
		prev := 0.0
		for k, i := range idx {
			w := prev
			if k+1 < len(idx) {
				w = r.ticks[idx[k+1]].ts - r.ticks[i].ts
			}
			prev = w
			t := r.ticks[i]
			r.stamp(t.ts + w) // the span ends where the last sample's time does
			if err := r.add(th, t.node, []int64{t.count, nanos(w)}); err != nil {
				return nil, err
			}
		}
	}
	return r.end(p), nil
}

// start makes the profile and its builder.
func (r *reader) start(comment string, sampled bool) *pprofile.Profile {
	p := &pprofile.Profile{PeriodType: &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"}, Comments: []string{comment}}
	if sampled {
		p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: "samples", Unit: "count"})
	}
	p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"})
	r.b = build.New[frame, frame](p)
	return p
}

func (r *reader) end(p *pprofile.Profile) *pprofile.Profile {
	if r.seen {
		p.DurationNanos = int64((r.last - r.first) * 1000)
	}
	return p
}

// nanos converts microseconds to whole nanoseconds.
func nanos(us float64) int64 { return int64(math.Round(us * 1000)) }

// add adds values to the sample of a stack node on a thread. A new
// sample's locations count against the bound on frame references.
func (r *reader) add(thread string, node int32, values []int64) error {
	k := sampleKey{thread, node}
	if s := r.samples[k]; s != nil {
		for i, v := range values {
			if s.Value[i] += v; s.Value[i] < 0 {
				return fmt.Errorf("the values of a stack on %s overflow", thread)
			}
		}
		return nil
	}
	if r.refs += int(r.nodes[node].depth); r.refs > r.maxRefs {
		return fmt.Errorf("profile too large: its stacks need more than %d frame references (the bound is 4 per byte of input, at most %d)", r.maxRefs, MaxFrameRefs)
	}
	s := &pprofile.Sample{Value: values, Label: map[string][]string{labels.Thread: {thread}}}
	for n := node; n != 0; n = r.nodes[n].parent {
		f := r.nodes[n].f
		l, ok := r.b.Location(f)
		if !ok {
			fn := r.b.Function(f, pprofile.Function{Name: f.name, SystemName: f.name, Filename: f.file})
			l = r.b.AddLocationAs(f, &pprofile.Location{Line: []pprofile.Line{{Function: fn, Line: f.line}}})
		}
		s.Location = append(s.Location, l)
	}
	if node != 0 {
		// V8's pseudo-frames say what the thread did: never cpu by accident.
		switch r.nodes[node].f.name {
		case "(idle)":
			s.Label[labels.Bucket] = []string{"wait"}
		case "(garbage collector)":
			s.Label[labels.Bucket] = []string{"gc"}
		case "(program)":
			s.Label[labels.Fallback] = []string{labels.Unknown}
		}
	}
	r.samples[k] = s
	r.b.AddSample(s)
	return nil
}
