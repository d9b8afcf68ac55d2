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
	index     map[string][]int // event name → its sample types' indexes in specs
	present   []bool
	funcs     map[string]*pprofile.Function
	locs      map[frame]*pprofile.Location
	maps      map[string]*pprofile.Mapping // native libraries by name
	samples   map[string]*tally
	order     []*tally
	overlap   overlap                      // execution and native samples inside a thread's waits
	settings  map[string]map[string]string // event → setting name → value, last seen
	truncated int
	key       []byte // reused by sample
	// readWarnings say what of the file was left out (an incomplete last
	// chunk).
	readWarnings []string
	start        int64
	end          int64
}

func newBuilder() *builder {
	b := &builder{index: map[string][]int{}, present: make([]bool, len(specs)),
		funcs: map[string]*pprofile.Function{}, locs: map[frame]*pprofile.Location{},
		maps: map[string]*pprofile.Mapping{}, samples: map[string]*tally{},
		settings: map[string]map[string]string{}, overlap: overlap{spans: map[int64][]span{}}}
	for i, s := range specs {
		b.index[s.event] = append(b.index[s.event], i)
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
	// The settings first: what an async-profiler execution sample is
	// (CPU or wall time) depends on its recording's mode.
	for _, settings := range []bool{true, false} {
		for _, e := range c.events {
			idx, ok := b.index[e.typ.name]
			if settings != (e.typ.name == "jdk.ActiveSetting") || !settings && !ok {
				continue
			}
			c.d.pos = e.pos
			v := c.readValue(e.typ, 0)
			if c.d.err != nil {
				return fmt.Errorf("%s event: %w", e.typ.name, c.d.err)
			}
			if settings {
				b.setting(c, v)
			} else {
				b.add(c, idx, v)
			}
		}
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

// add turns one event into a sample of each sample type in idx, or, for
// an execution sample, of the one sample type it is (executionType).
func (b *builder) add(c *chunk, idx []int, v value) {
	s := specs[idx[len(idx)-1]]
	frames, lb := b.where(c, s, v)
	if s.event == "jdk.ExecutionSample" {
		idx = []int{b.executionType(c.str(c.get(v, "state")))}
	}
	for _, i := range idx {
		b.present[i] = true
		val := int64(1) // an execution sample, whatever type it joins
		if specs[i].event == s.event {
			val = b.value(c, v, specs[i])
		}
		r := b.sample(i, val, frames, lb)
		b.overlap.note(c, v, specs[i], val, r)
	}
}

// where returns an event's frames (a pseudo-frame for events without a
// stack) and labels: thread, class, bucket.
func (b *builder) where(c *chunk, s spec, v value) ([]frame, map[string][]string) {
	lb := map[string][]string{}
	bucket := s.bucket
	var class string
	switch s.event {
	case "jdk.JavaMonitorEnter", "jdk.JavaMonitorWait":
		class = c.className(c.get(v, "monitorClass"))
		whoWaited(c, v, s.event, class, lb)
	case "jdk.ThreadPark":
		class = c.className(c.get(v, "parkedClass"))
		bucket = parkBucket(class)
		whoWaited(c, v, s.event, class, lb)
	case "jdk.ExecutionSample", "profiler.WallClockSample":
		bucket = stateBucket(lb, c.str(c.get(v, "state")))
	case "jdk.NativeMethodSample":
		// A thread in native code, running it or blocked in the OS: the
		// JDK does not say which. Where no rule names its frames (a socket
		// read is io), it is native or blocked, unknown: not cpu.
		lb[labels.Fallback] = []string{labels.Unknown}
	default:
		class = c.className(c.get(v, "objectClass"))
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
	if !s.stack {
		name := strings.TrimSpace(s.frame + c.str(c.get(v, "name")))
		return []frame{{fn: "[" + name + "]"}}, lb
	}
	frames, trunc := c.stack(c.field(v, "stackTrace")) // unresolved: stack caches by reference
	if trunc {
		b.truncated++
	}
	if lb[labels.Fallback] != nil && enteringMonitor(frames) {
		delete(lb, labels.Fallback)
		lb[labels.Bucket] = []string{"lock-contention"}
	}
	if len(frames) == 0 {
		frames = []frame{{fn: "[no stack: " + s.event + "]"}}
	}
	return frames, lb
}

// whoWaited adds the who-waited labels of a monitor enter, monitor wait
// or park whose monitor or parked-on class is class:
//
//   - labels.Lock, the lock: "Class@0xADDR" (the class and the address
//     the event records), the class alone without an address;
//   - labels.Owner on a monitor enter: the name of the thread that held
//     the monitor (previousOwner; async-profiler declares the field but
//     writes it empty);
//   - labels.Waker and labels.WakerThread on a monitor wait, where the
//     recording has the notifier field (JDK 17 has): the notifier's thread
//     name (the recording names no stack of it: the value is that one
//     name, ';' turned into ':' as in a folded frame) and its Java thread
//     id, or labels.WakerTimeout when the wait timed out.
//
// A park records no owner: nothing says who held what it parked on.
func whoWaited(c *chunk, v value, event, class string, lb map[string][]string) {
	if class != "" {
		lock := class
		if a := c.get(v, "address"); a.kind == vInt && a.i != 0 {
			lock += "@0x" + strconv.FormatUint(uint64(a.i), 16)
		}
		lb[labels.Lock] = []string{lock}
	}
	switch event {
	case "jdk.JavaMonitorEnter":
		if owner := c.threadName(c.get(v, "previousOwner")); owner != "" {
			lb[labels.Owner] = []string{owner}
		}
	case "jdk.JavaMonitorWait":
		if c.field(v, "notifier").kind == vNone {
			return // no such field: the JDK that wrote it does not record one
		}
		if t := c.get(v, "timedOut"); t.kind == vInt && t.i != 0 {
			lb[labels.Waker] = []string{labels.WakerTimeout}
			return
		}
		n := c.get(v, "notifier")
		if name := c.threadName(n); name != "" {
			lb[labels.Waker] = []string{strings.ReplaceAll(name, ";", ":")}
			if id := c.get(n, "javaThreadId"); id.kind == vInt && id.i > 0 {
				lb[labels.WakerThread] = []string{strconv.FormatInt(id.i, 10)}
			}
		}
	}
}

// stateBucket says what a sample in this thread state is: cpu when the
// thread ran (STATE_RUNNABLE; STATE_DEFAULT, async-profiler's CPU engine;
// no state); otherwise (async-profiler's STATE_SLEEPING, any other state)
// the frames decide, and where none does, the sample is a wait, not the
// classifier's default cpu (labels.Fallback).
func stateBucket(lb map[string][]string, state string) string {
	switch state {
	case "", "STATE_DEFAULT", "STATE_RUNNABLE", "STATE_RUNNING":
		return "cpu"
	}
	lb[labels.Fallback] = []string{"wait"}
	return ""
}

// enteringMonitor reports whether a stack of a thread that was not running
// (async-profiler's wall clock, STATE_SLEEPING) shows it blocked entering a
// contended synchronized block: its first Java frame is a method not
// declared native, which calls into native code only through the VM, and
// it calls a futex wait directly. async-profiler 2.x (and 4.x without
// cstack=vm) leaves out the VM's own frames, ObjectMonitor::enter among
// them; a JDK method that waits (Object.wait, Unsafe.park, Thread.sleep, a
// socket read) is declared native, and its wait stays to the frames and
// the fallback. The VM also blocks a thread this way at a safepoint, which
// the stack cannot tell apart.
func enteringMonitor(frames []frame) bool {
	for i, f := range frames {
		if f.java {
			return i > 0 && !f.native && strings.Contains(frames[i-1].fn, "futex")
		}
	}
	return false
}

// value returns what one event adds to the sample type: 1 for a counted
// event, a count or size field as it is, a time span in nanoseconds.
func (b *builder) value(c *chunk, v value, s spec) int64 {
	if s.value == "" {
		return 1
	}
	st := c.resolve(v)
	if st.kind != vStruct {
		return 0
	}
	for j, f := range st.typ.fields {
		if f.name != s.value || j >= len(st.fields) {
			continue
		}
		x := c.resolve(st.fields[j]).i
		if s.unit == "nanoseconds" && f.timespan != "" {
			x = c.spanNanos(f, x)
		}
		return max(0, x)
	}
	return 0
}

// tally is what the events of one sample type with the same stack and
// labels add up to.
type tally struct {
	spec   int   // its sample type, an index in specs
	value  int64 // the sum of the events' values
	events int64 // how many events
	// covered counts the execution or native samples among them that lie
	// inside a wait or I/O event of their thread, which thread-time has.
	covered int64
	locs    []*pprofile.Location
	labels  map[string][]string
}

// sample adds val to the tally of type i with these frames and labels.
func (b *builder) sample(i int, val int64, frames []frame, lb map[string][]string) *tally {
	// The key: i, then |fn:line:lib a frame and |k=v a label, in a
	// buffer reused from one sample to the next.
	key := strconv.AppendInt(b.key[:0], int64(i), 10)
	for _, f := range frames {
		key = append(key, '|')
		key = append(key, f.fn...)
		key = append(key, ':')
		key = strconv.AppendInt(key, f.line, 10)
		key = append(key, ':')
		key = append(key, f.lib...)
	}
	for _, k := range mapsKeys(lb) {
		key = append(key, '|')
		key = append(key, k...)
		key = append(key, '=')
		key = append(key, lb[k][0]...)
	}
	b.key = key
	r := b.samples[string(key)]
	if r == nil {
		r = &tally{spec: i, labels: lb}
		for _, f := range frames {
			r.locs = append(r.locs, b.location(f))
		}
		b.samples[string(key)] = r
		b.order = append(b.order, r)
	}
	r.value += val
	if val != 0 {
		r.events++ // an event of no value (a 0 ns wait) is in no sample type
	}
	return r
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
	l := &pprofile.Location{ID: uint64(len(b.locs) + 1), Line: []pprofile.Line{{Function: fn, Line: f.line}}, Mapping: b.mapping(f.lib)}
	b.locs[f] = l
	return l
}

// mapping returns the mapping of a native library, nil for Java frames.
func (b *builder) mapping(lib string) *pprofile.Mapping {
	if lib == "" {
		return nil
	}
	m := b.maps[lib]
	if m == nil {
		m = &pprofile.Mapping{ID: uint64(len(b.maps) + 1), File: lib}
		b.maps[lib] = m
	}
	return m
}
