package chrometrace

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// frame is one function of a stack: its name and where it is.
type frame struct {
	name, file string
	line       int64
}

// tick is one sample before weighting: its thread, time (µs) and stack
// (leaf first).
type tick struct {
	thread string
	ts     float64
	stack  []frame
	count  int64
}

// interval is one duration event on a track.
type interval struct {
	name       string
	start, end float64
	seq        int
}

type reader struct {
	d          *doc
	thread     func(pid, tid id) string
	ticks      []tick
	tracks     map[string][]*interval
	trackOrder []string
	durations  int
	warn       map[string]int
	warnOrder  []string
	b          *build.Builder[frame, frame]
	samples    map[string]*pprofile.Sample
	first      float64 // earliest and latest time stamps, µs
	last       float64
	seen       bool
}

func newReader(d *doc) *reader {
	r := &reader{d: d, tracks: map[string][]*interval{}, warn: map[string]int{}, samples: map[string]*pprofile.Sample{}}
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

// warnf counts a warning, reported once with its count.
func (r *reader) warnf(format string, a ...any) {
	w := fmt.Sprintf(format, a...)
	if r.warn[w] == 0 {
		r.warnOrder = append(r.warnOrder, w)
	}
	r.warn[w]++
}

func (r *reader) warnings() []string {
	var out []string
	for _, w := range r.warnOrder {
		if n := r.warn[w]; n > 1 {
			w += fmt.Sprintf(" (%d times)", n)
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
func (r *reader) v8() bool {
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
		stacks := map[int64][]frame{}
		var stackOf func(n int64, depth int) []frame
		stackOf = func(n int64, depth int) []frame {
			if s, ok := stacks[n]; ok {
				return s
			}
			node := p.nodes[n]
			if node == nil || depth > 100000 {
				return nil
			}
			var s []frame // root first
			if par, ok := p.parent[n]; ok && par != n {
				s = stackOf(par, depth+1)
			}
			if cf := node.CallFrame; cf.FunctionName != "(root)" {
				f := frame{name: cf.FunctionName, file: cf.URL}
				if f.name == "" {
					f.name = "(anonymous)"
				}
				if cf.LineNumber != nil && *cf.LineNumber >= 0 {
					f.line = int64(*cf.LineNumber) + 1 // V8 counts lines from 0
				}
				s = append(s[:len(s):len(s)], f)
			}
			stacks[n] = s
			return s
		}
		for _, h := range p.hits {
			s := stackOf(h.node, 0)
			if p.nodes[h.node] == nil {
				r.warnf("a V8 sample names node %d, which no chunk defines; left out", h.node)
				continue
			}
			r.ticks = append(r.ticks, tick{thread: p.thread, ts: h.ts, stack: s, count: 1})
		}
	}
	return len(r.ticks) > 0
}

// stackSamples collects the samples of a trace's "samples" and
// "stackFrames" (Hermes, catapult).
func (r *reader) stackSamples() error {
	stacks := map[id][]frame{}
	var stackOf func(sf id, depth int) ([]frame, error)
	stackOf = func(sf id, depth int) ([]frame, error) {
		if s, ok := stacks[sf]; ok {
			return s, nil
		}
		f, ok := r.d.stackFrames[sf]
		if !ok {
			return nil, fmt.Errorf("stackFrames has no frame %q", sf)
		}
		if depth > 100000 {
			return nil, fmt.Errorf("stackFrames[%q]: parents form a cycle", sf)
		}
		var s []frame
		if f.Parent != nil {
			var err error
			if s, err = stackOf(*f.Parent, depth+1); err != nil {
				return nil, err
			}
		}
		s = append(s[:len(s):len(s)], frame{name: f.Name})
		stacks[sf] = s
		return s, nil
	}
	for i, sm := range r.d.samples {
		s, err := stackOf(sm.SF, 0)
		if err != nil {
			return fmt.Errorf("samples[%d]: %v", i, err)
		}
		c := int64(sm.Weight)
		if c <= 0 {
			c = 1
		}
		r.ticks = append(r.ticks, tick{thread: r.thread(sm.Pid, sm.Tid), ts: float64(sm.Ts), stack: s, count: c})
	}
	return nil
}

// finishSampled weights each tick by the time to its thread's next one
// (the last one of a thread by the interval before it) and builds the
// profile, whose duration runs to the end of the last sample's time.
func (r *reader) finishSampled(comment string) *pprofile.Profile {
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
			leafFirst := make([]frame, len(t.stack))
			for j, f := range t.stack {
				leafFirst[len(t.stack)-1-j] = f
			}
			r.add(th, leafFirst, []int64{t.count, int64(w*1000 + 0.5)})
		}
	}
	return r.end(p)
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

// add adds values to the sample of a stack (leaf first) on a thread.
func (r *reader) add(thread string, stack []frame, values []int64) {
	var key strings.Builder
	key.WriteString(thread)
	for _, f := range stack {
		fmt.Fprintf(&key, "\x00%s\x01%s\x01%d", f.name, f.file, f.line)
	}
	if s := r.samples[key.String()]; s != nil {
		for i, v := range values {
			s.Value[i] += v
		}
		return
	}
	s := &pprofile.Sample{Value: values, Label: map[string][]string{labels.Thread: {thread}}}
	for _, f := range stack {
		l, ok := r.b.Location(f)
		if !ok {
			fn := r.b.Function(f, pprofile.Function{Name: f.name, SystemName: f.name, Filename: f.file})
			l = r.b.AddLocationAs(f, &pprofile.Location{Line: []pprofile.Line{{Function: fn, Line: f.line}}})
		}
		s.Location = append(s.Location, l)
	}
	if len(stack) > 0 {
		// V8's pseudo-frames say what the thread did: never cpu by accident.
		switch stack[0].name {
		case "(idle)":
			s.Label[labels.Bucket] = []string{"wait"}
		case "(garbage collector)":
			s.Label[labels.Bucket] = []string{"gc"}
		case "(program)":
			s.Label[labels.Fallback] = []string{labels.Unknown}
		}
	}
	r.samples[key.String()] = s
	r.b.AddSample(s)
}
