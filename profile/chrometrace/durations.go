package chrometrace

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	pprofile "github.com/google/pprof/profile"
)

// nest turns the duration events into intervals per track: X events as
// they are, B/E and async b/e pairs matched by name (an E without a name
// closes the innermost open event). Events are taken in time order, ties
// in file order.
func (r *reader) nest() {
	type open struct {
		name  string
		start float64
		seq   int
		zero  bool // begun at the time stamp of an unmatched end of its name
	}
	stacks := map[string][]open{}
	order := make([]int, 0, len(r.d.events))
	for i, e := range r.d.events {
		switch e.Ph {
		case "X", "B", "E", "b", "e":
			order = append(order, i)
		}
	}
	ev := r.d.events
	sort.SliceStable(order, func(a, b int) bool { return ev[order[a]].Ts < ev[order[b]].Ts })
	addTrack := func(track string, iv *interval) {
		if r.tracks[track] == nil {
			r.trackOrder = append(r.trackOrder, track)
		}
		r.tracks[track] = append(r.tracks[track], iv)
	}
	lastTs := map[string]float64{}
	// An end event that matches no open event may have been written before
	// its begin at the same time stamp: the two are a zero-length event
	// (speedscope reads them so). It waits for a begin of its name on its
	// track at its time stamp; one that none comes for is left out, with a
	// warning, once the time stamp has passed. The begin still opens its
	// event, marked zero: if its own end comes, the event lasts to it; if
	// it is only closed with an event it is inside, or never, it is that
	// zero-length event.
	type lateEnd struct {
		track, name string
		ts          float64
	}
	// pending counts the unmatched ends of the current time stamp (a map,
	// so that a begin finds its end at once however many there are);
	// pendingOrder keeps them in order for the warnings.
	pending := map[lateEnd]int{}
	var pendingOrder []lateEnd
	flush := func() {
		for _, p := range pendingOrder {
			if pending[p] > 0 {
				pending[p]--
				r.warnf("an end event (%q at %v µs) matches no open event; left out", p.name, p.ts)
			}
		}
		clear(pending)
		pendingOrder = pendingOrder[:0]
	}
	for _, i := range order {
		e := ev[i]
		track := r.thread(e.Pid, e.Tid)
		if e.Ph == "b" || e.Ph == "e" {
			track = fmt.Sprintf("%s async %s %s", track, e.Cat, e.ID)
		}
		ts := float64(e.Ts)
		if len(pendingOrder) > 0 && ts > pendingOrder[0].ts {
			flush()
		}
		r.stamp(ts)
		lastTs[track] = ts
		switch e.Ph {
		case "X":
			dur := e.Dur
			if dur == nil && e.Tdur != nil {
				dur = e.Tdur
				r.warnf("an X event (%q at %v µs) has no dur; it lasts its tdur, thread time", e.Name, ts)
			}
			end := ts
			if dur != nil {
				end += max(float64(*dur), 0)
			}
			r.stamp(end)
			lastTs[track] = max(lastTs[track], end)
			addTrack(track, &interval{name: e.Name, start: ts, end: end, seq: i})
		case "B", "b":
			zero := false
			if k := (lateEnd{track, e.Name, ts}); pending[k] > 0 {
				pending[k]--
				zero = true
			}
			stacks[track] = append(stacks[track], open{e.Name, ts, i, zero})
		case "E", "e":
			st := stacks[track]
			k := len(st) - 1
			if e.Name != "" {
				for k >= 0 && st[k].name != e.Name {
					k--
				}
			}
			if k < 0 {
				pending[lateEnd{track, e.Name, ts}]++
				pendingOrder = append(pendingOrder, lateEnd{track, e.Name, ts})
				continue
			}
			if st[k].zero {
				// Its own end came: the end at its begin's time stamp was not its.
				r.warnf("an end event (%q at %v µs) matches no open event; left out", e.Name, st[k].start)
			}
			if slices.ContainsFunc(st[k+1:], func(o open) bool { return !o.zero }) {
				r.warnf("an end event closes %q, which is not the innermost open event; the events opened inside it end with it", e.Name)
			}
			for j := len(st) - 1; j >= k; j-- {
				if j > k && st[j].zero {
					continue // a zero-length event
				}
				addTrack(track, &interval{name: st[j].name, start: st[j].start, end: ts, seq: st[j].seq})
			}
			stacks[track] = st[:k]
		}
	}
	flush()
	for _, track := range slices.Sorted(maps.Keys(stacks)) {
		for _, o := range stacks[track] {
			if o.zero {
				continue // a zero-length event
			}
			r.warnf("a begin event (%q) never ends; it ends at the track's last time stamp", o.name)
			addTrack(track, &interval{name: o.name, start: o.start, end: lastTs[track], seq: o.seq})
		}
	}
}

// finishDurations nests each track's intervals (by start, the longer
// first) and gives each one's stack the time inside it that none of its
// children takes. An interval that ends after the one it starts in is not
// nested in it, with a warning: it keeps its whole length and nests in the
// innermost open interval that holds it (or none), and the intervals it
// overlaps take no more children. Chrome's trace viewer reads such
// events so (catapult's SliceGroup.createSubSlicesImpl_ files a slice
// under the nearest ancestor that bounds it), and Perfetto keeps them
// whole too (SliceTracker::MaybeCloseStack reports the overlap and its
// JSON parser spills the event to an overflow track of the thread).
// Neither the event nor its parent loses time, so the overlap counts in
// both stacks.
func (r *reader) finishDurations() (*pprofile.Profile, error) {
	p := r.start(CommentDurations, false)
	type open struct {
		iv   *interval
		node int32
		self float64
	}
	for _, track := range r.trackOrder {
		ivs := r.tracks[track]
		sort.SliceStable(ivs, func(a, b int) bool {
			x, y := ivs[a], ivs[b]
			if x.start != y.start {
				return x.start < y.start
			}
			if x.end != y.end {
				return x.end > y.end
			}
			return x.seq < y.seq
		})
		var st []open
		pop := func() error {
			o := st[len(st)-1]
			st = st[:len(st)-1]
			if v := nanos(o.self); v > 0 {
				return r.add(track, o.node, []int64{v})
			}
			return nil
		}
		for _, iv := range ivs {
			for len(st) > 0 && st[len(st)-1].iv.end <= iv.start {
				if err := pop(); err != nil {
					return nil, err
				}
			}
			if len(st) > 0 && iv.end > st[len(st)-1].iv.end {
				r.warnf("an event (%q at %v µs) ends after the event it starts in (%q); not nested in it, both keep their time", iv.name, iv.start, st[len(st)-1].iv.name)
				for len(st) > 0 && st[len(st)-1].iv.end < iv.end {
					if err := pop(); err != nil {
						return nil, err
					}
				}
			}
			parent := int32(0)
			if len(st) > 0 {
				top := &st[len(st)-1]
				top.self -= iv.end - iv.start
				parent = top.node
			}
			node, err := r.child(parent, frame{name: named(iv.name)})
			if err != nil {
				return nil, fmt.Errorf("event %q on %s at %v µs: %v", iv.name, track, iv.start, err)
			}
			st = append(st, open{iv, node, iv.end - iv.start})
		}
		for len(st) > 0 {
			if err := pop(); err != nil {
				return nil, err
			}
		}
	}
	return r.end(p), nil
}
