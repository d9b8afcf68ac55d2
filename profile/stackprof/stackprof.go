// Package stackprof reads the JSON dumps of Ruby's stackprof
// (https://github.com/tmm1/stackprof): `stackprof --json x.dump`,
// StackProf::Report#print_json, or JSON.generate of StackProf.run's
// result.
//
// StackProf.run(out: "x.dump") writes Ruby's Marshal format, which only
// Ruby reads; `stackprof --json x.dump > x.json` converts it.
//
// # What a file holds
//
// "frames" maps a frame id to its name, file and line (and, per frame, its
// own sample count "samples" and its callees' counts "edges"). With
// StackProf.run(raw: true), "raw" lists every distinct stack as its height,
// its frame ids root first, and how many samples in a row had it; with it
// come "raw_timestamp_deltas", the microseconds before each sample.
// "mode" is cpu, wall or object; "interval" is microseconds between
// samples (cpu, wall) or allocations between samples (object).
//
// # Values
//
//   - cpu: cpu/nanoseconds, interval per sample (the CPU-time timer fires
//     once per interval of CPU the process used); kind cpu.
//   - wall: wall/nanoseconds, each sample weighs the time since the
//     previous one ("raw_timestamp_deltas"; interval when they are missing
//     or do not match the samples); kind wall.
//   - object: alloc_objects/count, the allocations sampled; kind heap.
//
// A samples/count type counts the samples behind each stack. The profile's
// duration is the sum of the timestamp deltas where the file has them.
//
// # Stacks without raw
//
// A dump recorded without raw: true has no stacks, only each frame's own
// samples and its callees' counts. The reader then rebuilds stacks from
// the roots (the frames, or the part of a frame's samples, that no
// caller's edges account for) down the edges, sharing each
// frame's samples among its callers in proportion to the calls: the
// call tree is approximate (a frame called from two places gets its
// samples split by the edge counts, not by where they happened), and a
// warning says so.
//
// # Garbage collection
//
// stackprof records a sample taken during GC as its own stack,
// "(garbage collection)" with "(marking)" or "(sweeping)" below it in
// recent versions, without the Ruby stack that triggered it. The reader
// keeps those stacks as they are; the Ruby rules (diff/rules/ruby.rules)
// place them in gc.
package stackprof

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/jsonerr"
	"github.com/profdiff/profdiff/profile/internal/jsonsniff"
)

// ErrShape is wrapped by errors about a dump's structure (a frame id that
// is no frame, a stack that runs past the end of "raw").
var ErrShape = errors.New("malformed stackprof profile")

// Looks reports whether data is a stackprof JSON dump: a JSON object with
// the keys "mode", "frames" and "gc_samples" (which no other format
// profdiff reads has).
func Looks(data []byte) bool {
	return jsonsniff.ObjectWith(data, `"gc_samples"`, `"frames"`, `"mode"`)
}

type frame struct {
	Name    *string          `json:"name"`
	File    string           `json:"file"`
	Line    *int64           `json:"line"`
	Samples int64            `json:"samples"`
	Edges   map[string]int64 `json:"edges"`
}

type file struct {
	Mode          string           `json:"mode"`
	Interval      float64          `json:"interval"`
	Samples       int64            `json:"samples"`
	MissedSamples int64            `json:"missed_samples"`
	Frames        map[string]frame `json:"frames"`
	Raw           []int64          `json:"raw"`
	Deltas        []float64        `json:"raw_timestamp_deltas"`
}

// Limits that keep memory and arithmetic bounded whatever the file says.
const (
	maxDepth    = 10000 // frames in one stack
	maxInterval = 1e9   // µs (cpu, wall) or allocations (object) between samples
	maxDelta    = 1e12  // µs before one sample (about 11 days)
	maxCount    = 1e12  // samples behind one raw stack
	// maxRebuilt bounds the stacks rebuilt from edges (see rebuild); the
	// weight of deeper or rarer paths stays on the frame where they stop.
	maxRebuilt = 100000
	maxVisits  = 1000000 // frames visited while rebuilding
)

// Parse reads a stackprof JSON dump (see the package doc).
func Parse(data []byte) (*pprofile.Profile, []string, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, jsonerr.Describe(ErrShape, err)
	}
	if !(f.Interval > 0 && f.Interval <= maxInterval) {
		return nil, nil, fmt.Errorf("%w: interval %g is out of range", ErrShape, f.Interval)
	}
	b := &builder{f: &f, bld: build.New[string, int64](nil), byStack: map[string]*pprofile.Sample{}}
	p := b.bld.P
	unit := f.Interval * 1e3 // nanoseconds per sample (cpu, wall)
	switch f.Mode {
	case "cpu":
		p.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}
		p.PeriodType = &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	case "wall":
		p.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}}
		p.PeriodType = &pprofile.ValueType{Type: "wall", Unit: "nanoseconds"}
	case "object":
		p.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "alloc_objects", Unit: "count"}}
		p.PeriodType = &pprofile.ValueType{Type: "alloc_objects", Unit: "count"}
		unit = f.Interval
	default:
		return nil, nil, fmt.Errorf("%w: mode %q (want cpu, wall or object)", ErrShape, f.Mode)
	}
	p.DefaultSampleType = p.SampleType[1].Type
	p.Period = max(int64(math.Round(unit)), 1)
	p.Comments = []string{"stackprof: Ruby stackprof " + f.Mode + " profile"}
	b.unit = unit

	var warns []string
	var deltas []float64 // wall mode: µs before each sample, when they match
	if f.Mode == "wall" && f.Raw != nil {
		if n := sumCounts(f.Raw); n >= 0 && int64(len(f.Deltas)) == n {
			deltas = f.Deltas
		} else {
			warns = append(warns, fmt.Sprintf("raw_timestamp_deltas has %d entries for %d samples: each sample weighs the interval (%g µs)", len(f.Deltas), max(n, 0), f.Interval))
		}
	}
	var err error
	if f.Raw != nil {
		err = b.raw(deltas)
	} else {
		warns = append(warns, "no raw stacks (recorded without raw: true): stacks are rebuilt from each frame's callers, so the call tree is approximate")
		err = b.rebuild()
	}
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(f.Deltas) > 0 && f.Mode != "object":
		var sum float64
		for _, d := range f.Deltas {
			if d > 0 && d <= maxDelta {
				sum += d
			}
		}
		p.DurationNanos = int64(math.Round(sum * 1e3))
	case f.Mode == "wall":
		p.DurationNanos = b.total[0] * p.Period
	}
	if f.MissedSamples > 0 && f.Mode != "object" {
		// A sample is missed when the timer fires before the last one was
		// taken; the timestamp deltas span it, the interval does not.
		where := "their time is in no stack"
		if deltas != nil {
			where = "their time is counted on the next sample's stack"
		}
		warns = append(warns, fmt.Sprintf("stackprof missed %d samples (the timer fired before the previous sample was taken): %s", f.MissedSamples, where))
	}
	return p, warns, nil
}

// sumCounts is the number of samples in raw, or -1 when raw is malformed
// (raw then fails with a precise error).
func sumCounts(raw []int64) int64 {
	var n int64
	for i := 0; i < len(raw); {
		h := raw[i]
		if h < 0 || h > maxDepth || int64(len(raw)-i-2) < h {
			return -1
		}
		c := raw[i+1+int(h)]
		if c < 0 || c > maxCount {
			return -1
		}
		n += c
		i += int(h) + 2
	}
	return n
}

type builder struct {
	f       *file
	bld     *build.Builder[string, int64]
	unit    float64 // value per sample in cpu and object modes
	byStack map[string]*pprofile.Sample
	total   [2]int64 // samples, value: summed to refuse an overflow
}

// location returns the location of frame id, made on first use.
func (b *builder) location(id int64) (*pprofile.Location, error) {
	if l, ok := b.bld.Location(id); ok {
		return l, nil
	}
	fr, ok := b.f.Frames[strconv.FormatInt(id, 10)]
	if !ok {
		return nil, fmt.Errorf("%w: frame %d is not in \"frames\"", ErrShape, id)
	}
	name := "(unknown)" // stackprof writes no name for some C frames, as speedscope shows them
	if fr.Name != nil && *fr.Name != "" {
		name = *fr.Name
	}
	var line int64
	if fr.Line != nil && *fr.Line > 0 {
		line = *fr.Line
	}
	fn := b.bld.Function(name+"\x00"+fr.File, pprofile.Function{Name: name, SystemName: name, Filename: fr.File})
	return b.bld.AddLocationAs(id, &pprofile.Location{Line: []pprofile.Line{{Function: fn, Line: line}}}), nil
}

// add adds n samples of value v to the stack of locs (leaf first).
func (b *builder) add(locs []*pprofile.Location, n, v int64, where string) error {
	if b.total[0] > math.MaxInt64-n || b.total[1] > math.MaxInt64-v {
		return fmt.Errorf("%w: %s: the total overflows", ErrShape, where)
	}
	b.total[0] += n
	b.total[1] += v
	key := make([]byte, 0, 8*len(locs))
	for _, l := range locs {
		key = strconv.AppendUint(key, l.ID, 36)
		key = append(key, ',')
	}
	s := b.byStack[string(key)]
	if s == nil {
		s = &pprofile.Sample{Location: append([]*pprofile.Location(nil), locs...), Value: []int64{0, 0}}
		b.byStack[string(key)] = s
		b.bld.AddSample(s)
	}
	s.Value[0] += n
	s.Value[1] += v
	return nil
}

// raw reads the "raw" stacks; deltas, when not nil, weigh each sample
// (wall mode).
func (b *builder) raw(deltas []float64) error {
	raw := b.f.Raw
	var locs []*pprofile.Location
	next := 0 // the next sample's delta
	for i, k := 0, 0; i < len(raw); k++ {
		h := raw[i]
		if h < 0 || h > maxDepth || int64(len(raw)-i-2) < h {
			return fmt.Errorf("%w: raw stack %d (at raw[%d]): height %d runs past the end (%d entries)", ErrShape, k, i, h, len(raw))
		}
		locs = locs[:0]
		for j := i + int(h); j > i; j-- { // leaf last in the file, first in pprof
			l, err := b.location(raw[j])
			if err != nil {
				return fmt.Errorf("raw stack %d (at raw[%d]): %w", k, i, err)
			}
			locs = append(locs, l)
		}
		n := raw[i+1+int(h)]
		if n < 0 || n > maxCount {
			return fmt.Errorf("%w: raw stack %d (at raw[%d]): sample count %d is out of range", ErrShape, k, i, n)
		}
		i += int(h) + 2
		if n == 0 || len(locs) == 0 {
			continue
		}
		var v float64
		if deltas != nil {
			for _, d := range deltas[next : next+int(n)] {
				if d > 0 && d <= maxDelta {
					v += d * 1e3
				}
			}
			next += int(n)
		} else {
			v = float64(n) * b.unit
		}
		if v >= math.MaxInt64 {
			return fmt.Errorf("%w: raw stack %d: the total overflows", ErrShape, k)
		}
		if err := b.add(locs, n, int64(math.Round(v)), fmt.Sprintf("raw stack %d", k)); err != nil {
			return err
		}
	}
	return nil
}

// rebuild makes stacks from the frames' own samples and edges (see the
// package doc): depth first from each root, a path's samples are split
// among the frame's own samples and its edges in proportion to their
// counts (recursion included); fractions are kept until the end.
func (b *builder) rebuild() error {
	type node struct {
		id    int64
		self  int64
		total int64 // self plus the edges'
		edges []edge
	}
	nodes := make(map[int64]*node, len(b.f.Frames))
	inflow := map[int64]int64{} // the counts of the edges to each frame
	ids := make([]int64, 0, len(b.f.Frames))
	for k, fr := range b.f.Frames {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: frame id %q is not a number", ErrShape, k)
		}
		n := &node{id: id, self: fr.Samples, total: fr.Samples}
		if fr.Samples < 0 || fr.Samples > maxCount {
			return fmt.Errorf("%w: frame %s: samples %d is out of range", ErrShape, k, fr.Samples)
		}
		for ck, c := range fr.Edges {
			cid, err := strconv.ParseInt(ck, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: frame %s: edge to %q, which is not a frame id", ErrShape, k, ck)
			}
			if c < 0 || c > maxCount {
				return fmt.Errorf("%w: frame %s: edge count %d is out of range", ErrShape, k, c)
			}
			if _, ok := b.f.Frames[ck]; !ok {
				return fmt.Errorf("%w: frame %s: edge to frame %s, which is not in \"frames\"", ErrShape, k, ck)
			}
			n.edges = append(n.edges, edge{cid, c})
			if n.total > maxCount*maxDepth || inflow[cid] > maxCount*maxDepth {
				return fmt.Errorf("%w: frame %s: edge counts add up past %d", ErrShape, k, int64(maxCount*maxDepth))
			}
			n.total += c
			inflow[cid] += c
		}
		sort.Slice(n.edges, func(i, j int) bool { return n.edges[i].to < n.edges[j].to })
		nodes[id] = n
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })

	type acc struct {
		locs []*pprofile.Location
		n    float64
	}
	var out []acc
	byKey := map[string]int{}
	var path []int64
	visits := 0
	var walk func(id int64, w float64) error
	walk = func(id int64, w float64) error {
		n := nodes[id]
		visits++
		path = append(path, id)
		defer func() { path = path[:len(path)-1] }()
		self := w * float64(n.self) / float64(n.total)
		for _, e := range n.edges {
			cw := w * float64(e.n) / float64(n.total)
			// A thousandth of a sample, a path too deep, or too many
			// stacks: the weight stays on this frame. Recursion is
			// followed: every pass splits the weight again, so it
			// fades.
			if cw < 1e-3 || len(path) >= maxDepth || len(out) >= maxRebuilt || visits >= maxVisits {
				self += cw
				continue
			}
			if err := walk(e.to, cw); err != nil {
				return err
			}
		}
		if self <= 0 {
			return nil
		}
		key := fmt.Sprint(path)
		i, ok := byKey[key]
		if !ok {
			locs := make([]*pprofile.Location, len(path))
			for j, pid := range path {
				l, err := b.location(pid)
				if err != nil {
					return err
				}
				locs[len(path)-1-j] = l
			}
			i = len(out)
			out = append(out, acc{locs: locs})
			byKey[key] = i
		}
		out[i].n += self
		return nil
	}
	// A root is a frame with more samples than its callers' edges give
	// it: a stack's outermost frame, or stackprof's GC frames, which are
	// roots in some samples and have callers in others.
	for _, id := range ids {
		if n := nodes[id]; n.total > inflow[id] {
			if err := walk(id, float64(n.total-inflow[id])); err != nil {
				return err
			}
		}
	}
	// The value keeps each stack's fraction of samples (to the
	// nanosecond, or the allocation); the sample count is rounded so
	// that the total is the file's: each stack gets the samples by which
	// its running sum passes the next whole number.
	var exact, done float64
	for i, a := range out {
		exact += a.n
		n := int64(math.Round(exact) - done)
		done += float64(n)
		v := math.Round(a.n * b.unit)
		if v == 0 && n == 0 {
			continue
		}
		if v >= math.MaxInt64 {
			return fmt.Errorf("%w: rebuilt stack %d: the total overflows", ErrShape, i)
		}
		if err := b.add(a.locs, n, int64(v), fmt.Sprintf("rebuilt stack %d", i)); err != nil {
			return err
		}
	}
	return nil
}

type edge struct {
	to int64
	n  int64
}
