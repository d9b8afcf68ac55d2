// Package v8 reads V8 CPU profiles (.cpuprofile): what `node --cpu-prof`
// writes, what Chrome DevTools' "Save profile" and the Inspector's
// Profiler.stop return.
//
// # Shapes
//
// Two shapes are read. The current one is a flat "nodes" array (each node
// an id, a callFrame and its children's ids, or its parent's id), with
// "samples" (the leaf node of each sample) and "timeDeltas" (microseconds
// since the previous sample; the first since "startTime"). The older one,
// of V8's earlier inspector and the tools built on it (the corpus holds
// speedscope's Node 10 example of it), nests the call tree under
// "head" (each node its own functionName, url and lineNumber and its
// children as objects), with "samples" and absolute "timestamps" in
// microseconds (some writers put the start time first, one more than the
// samples), and "startTime" and "endTime" in seconds.
//
// # What a sample weighs
//
// V8 samples the JavaScript thread every interval (1 ms by default for
// --cpu-prof, --cpu-prof-interval changes it), but the file does not
// record the interval, and a sample is late when the thread is in code
// that cannot be interrupted. So, as speedscope and DevTools do, a sample
// weighs the time from it to the next sample; the last one weighs the time
// to "endTime", or the median interval when that is not after it. The
// profile's period is that median interval: the interval V8 achieved,
// steady from one recording to the next where a mean is not (a late
// sample stretches it). Values are
// time (wall/nanoseconds, with samples/count beside it), and the profile
// is thread time of one thread: V8 samples it whatever it does, waiting
// included.
//
// # Pseudo-frames
//
// V8 puts a sample it cannot attribute to JavaScript under a pseudo-node
// of the root. The reader keeps the node as the sample's frame and says
// what it means in the label contract (package profile/internal/labels),
// so that none of them is cpu by accident:
//
//   - (idle): the event loop waiting for work (libuv's epoll): wait.
//   - (garbage collector): the collector: gc.
//   - (program): native or VM code the sampler could not attribute, which
//     may be running or blocked: kept apart as native-or-blocked time
//     (labels.Unknown), as .NET's external samples are.
//   - (root) alone: nothing known either, kept apart the same way.
//
// # Names
//
// A frame is its function's name ("(anonymous)" when V8 gives none),
// with the script's URL as its file and lineNumber+1 as its line. Node's
// built-in modules ("node:internal/timers", or "internal/timers.js" in
// Node before 16) are named "node:internal/timers.listOnTimeout", so that
// rules and the caller view can tell Node's own code from the program's
// and the same function keeps its name across Node versions.
package v8

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/jsonerr"
	"github.com/profdiff/profdiff/profile/internal/jsonsniff"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// Looks reports whether data is a V8 CPU profile: a JSON object whose
// first key is "nodes" or "head" and that has sample times ("timeDeltas"
// or "timestamps"), which a V8 heap profile (also "head" and "samples")
// does not. Without them it is one where its first node says so: a
// "callFrame" under a first key "nodes" (a heap snapshot starts with
// "snapshot", and its nodes are numbers), a "hitCount" under "head" (a
// heap profile's nodes have a "selfSize"). That is a profile cut short
// before its samples, which Parse then refuses saying where.
func Looks(data []byte) bool {
	t, ok := jsonsniff.Object(data)
	if !ok {
		return false
	}
	t = bytes.TrimLeft(t[1:], " \t\r\n")
	first := t[:min(len(t), firstNodeBytes)]
	switch {
	case bytes.HasPrefix(t, []byte(`"nodes"`)) && bytes.Contains(first, []byte(`"callFrame"`)),
		bytes.HasPrefix(t, []byte(`"head"`)) && bytes.Contains(first, []byte(`"hitCount"`)):
		return true
	case !bytes.HasPrefix(t, []byte(`"nodes"`)) && !bytes.HasPrefix(t, []byte(`"head"`)):
		return false
	}
	return bytes.Contains(data, []byte(`"samples"`)) &&
		(bytes.Contains(data, []byte(`"timeDeltas"`)) || bytes.Contains(data, []byte(`"timestamps"`)))
}

// firstNodeBytes is how far Looks seeks the first node's "callFrame" or
// "hitCount": V8 writes the one second and the other after the node's
// call frame (under 200 bytes but for a long URL).
const firstNodeBytes = 512

// ErrShape is wrapped by errors about a profile's structure (an unknown
// node, a cycle, sample and time lists of different lengths).
var ErrShape = errors.New("malformed V8 CPU profile")

type callFrame struct {
	FunctionName string `json:"functionName"`
	URL          string `json:"url"`
	LineNumber   int64  `json:"lineNumber"`
}

// node is one node of the flat shape: its callFrame and its children's
// ids, or its parent's id. flatten makes them of the nested shape's too.
type node struct {
	ID        int64      `json:"id"`
	CallFrame *callFrame `json:"callFrame"`
	Parent    *int64     `json:"parent"`
	Children  []int64    `json:"children"`
}

// headNode is one node of the nested shape: its own call frame fields and
// its children as objects.
type headNode struct {
	ID int64 `json:"id"`
	callFrame
	Children []headNode `json:"children"`
}

type file struct {
	Nodes      []node    `json:"nodes"`
	Head       *headNode `json:"head"`
	StartTime  float64   `json:"startTime"`
	EndTime    float64   `json:"endTime"`
	Samples    []int64   `json:"samples"`
	TimeDeltas []float64 `json:"timeDeltas"`
	Timestamps []float64 `json:"timestamps"`
}

// maxDepth bounds the nesting of the older shape's tree that flatten
// follows; encoding/json refuses a document nested deeper first, and this
// keeps the recursion bounded whatever decoder feeds it.
const maxDepth = 10000

// Parse reads a V8 CPU profile into thread time (see the package doc).
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, jsonerr.Describe(ErrShape, err)
	}
	var times []float64 // microseconds, one per sample
	end := f.EndTime
	switch {
	case f.Head != nil:
		if err := f.flatten(f.Head, nil, 0); err != nil {
			return nil, nil, err
		}
		if len(f.Timestamps) == len(f.Samples)+1 {
			f.Timestamps = f.Timestamps[1:] // some writers put the start first
		}
		if len(f.Timestamps) != len(f.Samples) {
			return nil, nil, fmt.Errorf("%w: %d samples but %d timestamps", ErrShape, len(f.Samples), len(f.Timestamps))
		}
		times = f.Timestamps
		end *= 1e6 // seconds in this shape
	case f.Nodes != nil:
		if len(f.TimeDeltas) != len(f.Samples) {
			return nil, nil, fmt.Errorf("%w: %d samples but %d timeDeltas", ErrShape, len(f.Samples), len(f.TimeDeltas))
		}
		times = make([]float64, len(f.Samples))
		t := f.StartTime
		for i, d := range f.TimeDeltas {
			t += d
			times[i] = t
		}
	default:
		return nil, nil, fmt.Errorf("%w: neither \"nodes\" nor \"head\"", ErrShape)
	}
	for i, t := range times {
		if !(math.Abs(t) <= maxTime) {
			return nil, nil, fmt.Errorf("%w: sample %d's time %g µs is out of range", ErrShape, i, t)
		}
	}
	if !(math.Abs(end) <= maxTime) {
		end = 0 // unknown: the last sample weighs the interval
	}
	return f.build(times, end)
}

// maxTime bounds sample times, in microseconds (about 31 years), so that
// weights and their sums in nanoseconds fit an int64.
const maxTime = 1e15

// flatten appends the nested shape's tree below n to f.Nodes, with parent
// ids, in depth-first order.
func (f *file) flatten(n *headNode, parent *int64, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: call tree deeper than %d nodes", ErrShape, maxDepth)
	}
	cf := n.callFrame
	f.Nodes = append(f.Nodes, node{ID: n.ID, CallFrame: &cf, Parent: parent})
	id := n.ID
	for i := range n.Children {
		if err := f.flatten(&n.Children[i], &id, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// build turns the flat nodes and the samples, each at times[i]
// microseconds, into the profile; end is the profile's end in
// microseconds (0 when unknown).
func (f *file) build(times []float64, end float64) (*pprofile.Profile, []string, error) {
	index := make(map[int64]int, len(f.Nodes))
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.CallFrame == nil {
			n.CallFrame = &callFrame{}
		}
		if _, dup := index[n.ID]; dup {
			return nil, nil, fmt.Errorf("%w: node id %d appears twice", ErrShape, n.ID)
		}
		index[n.ID] = i
	}
	parent := make([]int, len(f.Nodes))
	for i := range parent {
		parent[i] = -1
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.Parent != nil {
			p, ok := index[*n.Parent]
			if !ok {
				return nil, nil, fmt.Errorf("%w: node %d names parent %d, which is no node", ErrShape, n.ID, *n.Parent)
			}
			parent[i] = p
		}
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		for _, k := range n.Children {
			c, ok := index[k]
			if !ok {
				return nil, nil, fmt.Errorf("%w: node %d names child %d, which is no node", ErrShape, n.ID, k)
			}
			parent[c] = i
		}
	}

	// Samples in time order (V8 can write a delta below zero), each
	// weighing the time to the next.
	order := make([]int, len(f.Samples))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return times[order[a]] < times[order[b]] })
	interval := medianInterval(times, order)

	b := build.New[string, string](nil)
	p := b.P
	p.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}}
	p.DefaultSampleType = "wall"
	p.PeriodType = &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"}
	p.Period = max(int64(math.Round(interval*1e3)), 1)
	p.Comments = []string{"v8: V8 CPU profile (.cpuprofile), JavaScript thread time"}
	start := f.StartTime
	if f.Head != nil {
		start *= 1e6 // seconds in this shape
	}
	if span := end - start; span > 0 && span*1e3 < math.MaxInt64 {
		p.DurationNanos = int64(math.Round(span * 1e3))
	}

	locs := make([]*pprofile.Location, len(f.Nodes)) // by node index, made on first use
	bySample := make([]*pprofile.Sample, len(f.Nodes))
	for k, i := range order {
		ni, ok := index[f.Samples[i]]
		if !ok {
			return nil, nil, fmt.Errorf("%w: sample %d names node %d, which is no node", ErrShape, i, f.Samples[i])
		}
		w := interval
		if k+1 < len(order) {
			w = times[order[k+1]] - times[i]
		} else if end > times[i] {
			w = end - times[i]
		}
		s := bySample[ni]
		if s == nil {
			var err error
			if s, err = f.sample(b, locs, parent, ni); err != nil {
				return nil, nil, err
			}
			bySample[ni] = s
		}
		s.Value[0]++
		s.Value[1] += int64(math.Round(w * 1e3))
	}
	if p.DurationNanos == 0 && len(order) > 0 {
		p.DurationNanos = int64(math.Round((times[order[len(order)-1]] - times[order[0]] + interval) * 1e3))
	}
	return p, nil, nil
}

// medianInterval is the median time between consecutive samples (in
// order): the interval V8 sampled at, which a mean would stretch by the
// few samples that came late.
func medianInterval(times []float64, order []int) float64 {
	if len(order) < 2 {
		return 0
	}
	d := make([]float64, len(order)-1)
	for k := range d {
		d[k] = times[order[k+1]] - times[order[k]]
	}
	sort.Float64s(d)
	return d[len(d)/2]
}

// sample returns a new sample (added to the profile) for node ni's stack:
// its frames from ni up to, not including, the root, and the labels its
// pseudo-node implies.
func (f *file) sample(b *build.Builder[string, string], locs []*pprofile.Location, parent []int, ni int) (*pprofile.Sample, error) {
	s := &pprofile.Sample{Value: []int64{0, 0}}
	for i, depth := ni, 0; i >= 0; i, depth = parent[i], depth+1 {
		if depth > len(f.Nodes) {
			return nil, fmt.Errorf("%w: node %d is its own ancestor", ErrShape, f.Nodes[ni].ID)
		}
		cf := f.Nodes[i].CallFrame
		if parent[i] < 0 && cf.FunctionName == "(root)" && cf.URL == "" {
			break
		}
		if locs[i] == nil {
			locs[i] = location(b, cf)
		}
		s.Location = append(s.Location, locs[i])
	}
	leaf := f.Nodes[ni].CallFrame
	if leaf.URL == "" && len(s.Location) <= 1 {
		switch leaf.FunctionName {
		case "(idle)":
			s.Label = map[string][]string{labels.Bucket: {"wait"}}
		case "(garbage collector)":
			s.Label = map[string][]string{labels.Bucket: {"gc"}}
		case "(program)", "(root)":
			s.Label = map[string][]string{labels.Fallback: {labels.Unknown}}
		}
	}
	if len(s.Location) == 0 { // a sample of the root itself
		s.Location = append(s.Location, location(b, leaf))
	}
	b.AddSample(s)
	return s, nil
}

// location returns the location of a call frame: one per name, file and
// line (V8 makes a node per call path).
func location(b *build.Builder[string, string], cf *callFrame) *pprofile.Location {
	name := Name(cf.FunctionName, cf.URL)
	line := max(cf.LineNumber+1, 0)
	key := fmt.Sprintf("%s\x00%s\x00%d", name, cf.URL, line)
	if l, ok := b.Location(key); ok {
		return l
	}
	fn := b.Function(name+"\x00"+cf.URL, pprofile.Function{Name: name, SystemName: name, Filename: cf.URL})
	return b.AddLocationAs(key, &pprofile.Location{Line: []pprofile.Line{{Function: fn, Line: line}}})
}

// Name is the frame name of a function of a script (see the package doc).
func Name(function, url string) string {
	if function == "" {
		function = "(anonymous)"
	}
	if mod, ok := builtinModule(url); ok {
		return "node:" + mod + "." + function
	}
	return function
}

// builtinModule returns the module of a Node built-in script URL:
// "node:internal/timers" and Node 10's "internal/timers.js" both give
// "internal/timers". A program's scripts have absolute paths or file://,
// http:// or similar URLs; V8's own builtins have no URL.
func builtinModule(url string) (string, bool) {
	if m, ok := strings.CutPrefix(url, "node:"); ok {
		return m, m != ""
	}
	if url == "" || strings.HasPrefix(url, "/") || strings.Contains(url, ":") || strings.HasPrefix(url, ".") ||
		!strings.HasSuffix(url, ".js") || strings.Contains(url, "\\") {
		return "", false
	}
	return strings.TrimSuffix(url, ".js"), true
}
