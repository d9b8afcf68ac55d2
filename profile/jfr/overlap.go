package jfr

import (
	"slices"
	"sort"
)

// overlap finds the execution and native samples that thread-time would
// count twice: a thread blocked in a socket read is in native code, so the
// JDK's native sampler samples it while the read's own jdk.SocketRead
// event records the whole time (likewise a thread in Java code inside a
// jdk.FileRead, or one sampled while it waits for a monitor, parks or
// sleeps). A sample whose time lies within a wait or I/O event of the same
// thread is left out of thread-time; its own sample type keeps it.
type overlap struct {
	spans   map[int64][]span // by thread: the waits and I/O events
	samples []timed          // the execution and native samples
}

// span is one wait's or I/O event's time, in nanoseconds since the epoch.
type span struct{ start, end int64 }

// timed is one execution or native sample: its thread, time and tally.
type timed struct {
	thread, at int64
	rec        *tally
}

// note remembers an event that thread-time may double: a wait or I/O
// event (a duration in thread-time) by its span, an execution or native
// sample (a count in thread-time) by its time.
func (o *overlap) note(c *chunk, v value, s spec, val int64, r *tally) {
	if !s.thread || !s.stack {
		return
	}
	th, ok := c.threadKey(v)
	if !ok {
		return
	}
	at := c.stamp(c.get(v, "startTime").i)
	switch {
	case s.value == "duration" && val > 0:
		o.spans[th] = append(o.spans[th], span{at, at + val})
	case s.unit == "count":
		o.samples = append(o.samples, timed{th, at, r})
	}
}

// cover counts, in each tally, the samples that lie within a span of
// their thread (its start and end included), and lets go of what note
// kept.
func (o *overlap) cover() {
	for th, spans := range o.spans {
		slices.SortFunc(spans, func(x, y span) int {
			switch {
			case x.start < y.start:
				return -1
			case x.start > y.start:
				return 1
			}
			return 0
		})
		o.spans[th] = merge(spans)
	}
	for _, t := range o.samples {
		spans := o.spans[t.thread]
		// The last span that starts at or before the sample.
		i := sort.Search(len(spans), func(i int) bool { return spans[i].start > t.at }) - 1
		if i >= 0 && t.at <= spans[i].end {
			t.rec.covered++
		}
	}
	o.spans, o.samples = nil, nil
}

// merge joins overlapping spans, sorted by start, in place.
func merge(spans []span) []span {
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// threadKey identifies an event's thread (a sample's sampledThread, else
// its eventThread) across the chunks of a recording: the Thread pool's
// key, which is the JVM's id of the thread.
func (c *chunk) threadKey(v value) (int64, bool) {
	for _, name := range []string{"sampledThread", "eventThread"} {
		f := c.field(v, name)
		switch f.kind {
		case vRef:
			return f.i, f.i != 0
		case vStruct:
			return c.get(f, "javaThreadId").i, true
		}
	}
	return 0, false
}

// stamp converts a Timestamp in ticks to nanoseconds since the epoch.
func (c *chunk) stamp(ticks int64) int64 {
	return c.startNanos + c.nanos(ticks-c.startTicks)
}

// field returns the named field of a struct as the event holds it (a
// pool reference not followed), or a null value.
func (c *chunk) field(v value, name string) value {
	v = c.resolve(v)
	if v.kind != vStruct {
		return value{}
	}
	for i, f := range v.typ.fields {
		if f.name == name && i < len(v.fields) {
			return v.fields[i]
		}
	}
	return value{}
}
