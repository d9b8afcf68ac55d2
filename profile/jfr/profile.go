package jfr

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// builder accumulates the samples of every chunk into one profile,
// interning functions and locations by name and line, and samples by
// stack and labels.
type builder struct {
	index     map[string]int // event name → sample-type index in specs
	present   []bool
	funcs     map[string]*pprofile.Function
	locs      map[frame]*pprofile.Location
	samples   map[string]*pprofile.Sample
	order     []*pprofile.Sample
	settings  map[string]map[string]string // event → setting name → value, last seen
	truncated int
	start     int64
	end       int64
}

func newBuilder() *builder {
	b := &builder{index: map[string]int{}, present: make([]bool, len(specs)),
		funcs: map[string]*pprofile.Function{}, locs: map[frame]*pprofile.Location{},
		samples: map[string]*pprofile.Sample{}, settings: map[string]map[string]string{}}
	for i, s := range specs {
		b.index[s.event] = i
	}
	return b
}

// addChunk turns the chunk's events into samples.
func (b *builder) addChunk(c *chunk, raw []byte) error {
	start := c.startNanos
	end := start + int64(binary.BigEndian.Uint64(raw[40:]))
	if b.start == 0 || start < b.start {
		b.start = start
	}
	b.end = max(b.end, end)
	for _, e := range c.events {
		i, ok := b.index[e.typ.name]
		if !ok && e.typ.name != "jdk.ActiveSetting" {
			continue
		}
		c.d.pos = e.pos
		v := c.readValue(e.typ, 0)
		if c.d.err != nil {
			return fmt.Errorf("%s event: %w", e.typ.name, c.d.err)
		}
		if !ok {
			b.setting(c, v)
			continue
		}
		b.add(c, i, v)
	}
	return nil
}

// setting records one jdk.ActiveSetting event: id (the event type), name
// and value.
func (b *builder) setting(c *chunk, v value) {
	t := c.classes[c.get(v, "id").i]
	if t == nil {
		return
	}
	m := b.settings[t.name]
	if m == nil {
		m = map[string]string{}
		b.settings[t.name] = m
	}
	m[c.str(c.get(v, "name"))] = c.str(c.get(v, "value"))
}

// add turns one event into a sample of sample type i.
func (b *builder) add(c *chunk, i int, v value) {
	s := specs[i]
	var val int64
	bucket := s.bucket
	lb := map[string][]string{}
	var frames []frame
	switch s.unit {
	case "count":
		val = 1
	case "bytes":
		val = c.get(v, "weight").i
	default:
		val = b.duration(c, v, s)
	}
	var class string
	switch s.event {
	case "jdk.JavaMonitorEnter", "jdk.JavaMonitorWait":
		class = c.className(c.get(v, "monitorClass"))
	case "jdk.ThreadPark":
		class = c.className(c.get(v, "parkedClass"))
		bucket = parkBucket(class)
	case "jdk.ObjectAllocationSample":
		class = c.className(c.get(v, "objectClass"))
	case "jdk.GarbageCollection":
		frames = []frame{{fn: "[GC " + c.str(c.get(v, "name")) + "]"}}
	}
	if class != "" {
		lb[LabelClass] = []string{class}
	}
	if bucket != "" {
		lb[labels.Bucket] = []string{bucket}
	}
	th := c.get(v, "sampledThread")
	if th.kind == vNone {
		th = c.get(v, "eventThread")
	}
	if name := c.threadName(th); name != "" {
		lb[labels.Thread] = []string{name}
	}
	if s.stack {
		var trunc bool
		frames, trunc = c.stack(c.get(v, "stackTrace"))
		if trunc {
			b.truncated++
		}
		if len(frames) == 0 {
			frames = []frame{{fn: "[no stack: " + s.event + "]"}}
		}
	}
	b.present[i] = true
	b.sample(i, val, frames, lb)
}

// duration returns an event's time in nanoseconds: a GC's sum of pauses,
// otherwise its duration.
func (b *builder) duration(c *chunk, v value, s spec) int64 {
	name := "duration"
	if s.event == "jdk.GarbageCollection" {
		name = "sumOfPauses"
	}
	st := c.resolve(v)
	for j, f := range st.typ.fields {
		if f.name == name && j < len(st.fields) {
			return max(0, c.spanNanos(f, st.fields[j].i))
		}
	}
	return 0
}

// sample adds val to the sample of type i with these frames and labels.
func (b *builder) sample(i int, val int64, frames []frame, lb map[string][]string) {
	var key strings.Builder
	key.WriteString(strconv.Itoa(i))
	for _, f := range frames {
		fmt.Fprintf(&key, "|%s:%d", f.fn, f.line)
	}
	for _, k := range mapsKeys(lb) {
		fmt.Fprintf(&key, "|%s=%s", k, lb[k][0])
	}
	if s := b.samples[key.String()]; s != nil {
		s.Value[i] += val
		return
	}
	s := &pprofile.Sample{Value: make([]int64, len(specs)), Label: lb}
	s.Value[i] = val
	for _, f := range frames {
		s.Location = append(s.Location, b.location(f))
	}
	b.samples[key.String()] = s
	b.order = append(b.order, s)
}

func mapsKeys(m map[string][]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (b *builder) location(f frame) *pprofile.Location {
	if l := b.locs[f]; l != nil {
		return l
	}
	fn := b.funcs[f.fn]
	if fn == nil {
		fn = &pprofile.Function{ID: uint64(len(b.funcs) + 1), Name: f.fn, SystemName: f.fn}
		b.funcs[f.fn] = fn
	}
	l := &pprofile.Location{ID: uint64(len(b.locs) + 1), Line: []pprofile.Line{{Function: fn, Line: f.line}}}
	b.locs[f] = l
	return l
}
