package perfscript

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// Off-CPU time from scheduler events.
//
// A sched:sched_switch sample is taken in the task that leaves the CPU,
// so its stack is where that thread blocked (or was preempted). The thread
// is back on a CPU at its next switch-in, which perf script prints in one
// of two ways:
//
//   - a `PERF_RECORD_SWITCH IN` (or `PERF_RECORD_SWITCH_CPU_WIDE IN`) line
//     of the thread, from `perf record --switch-events` printed with
//     `perf script --show-switch-events`;
//   - a sched:sched_switch event with `next_pid=TID`, which a system-wide
//     recording (`perf record -a`) holds. A per-task recording (`perf
//     record -- ./prog`) holds only the switch-outs of the program's own
//     threads, so it needs --switch-events: next_pid switch-ins are used
//     only when the text looks complete (see offCPU.complete).
//
// The time from a switch-out to the thread's first switch-in after it
// becomes the switch-out record's off-CPU nanoseconds: sample type
// off-cpu/nanoseconds in place of the event's count. prev_state R or R+
// (preempted, still runnable) is scheduler latency: such records carry the
// LabelBucket label "sched" and are in no bucket; other states (S, D, ...)
// are blocked time and the frames decide the bucket, or, where no frame
// rule claims the stack, the LabelFallback label: io for D, wait for the
// others, never cpu (see offCPULabels). A switch-out's record is one of
// its own, apart from other events' records of the same stack and thread
// and from switch-outs of another state class. A switch-out with
// prev_state X or Z (the thread exits) opens no interval. A thread still
// off the CPU at the end of the text is charged up to the last time stamp
// of the text (with a warning: its real off-CPU time is longer). A file
// without any switch-in keeps the old reading (one count per switch, with
// a warning saying how to record the switch-ins), and its records get the
// same labels by prev_state: a counted switch-out is no cpu either.

// switchRE matches a PERF_RECORD_SWITCH line. Groups: comm, pid or tid,
// tid, cpu, time, direction.
var switchRE = regexp.MustCompile(`^\s*(?:(.*?)\s+)??(\d+)(?:/(\d+))?\s+(?:\[(\d+)\]\s+)?(\d+(?:\.\d+)?):\s+PERF_RECORD_SWITCH(?:_CPU_WIDE)?\s+(IN|OUT)\b`)

// schedSwitch is the tracepoint whose samples become off-CPU time.
const schedSwitch = "sched:sched_switch"

// parseSwitch reads a PERF_RECORD_SWITCH line; ok is false when line is
// not one.
func parseSwitch(line string) (h header, ok bool) {
	if !strings.Contains(line, "PERF_RECORD_SWITCH") {
		return h, false
	}
	m := switchRE.FindStringSubmatch(line)
	if m == nil {
		return h, false
	}
	tid := m[2]
	if m[3] != "" {
		tid = m[3]
	}
	var err error
	if h.tid, err = strconv.ParseInt(tid, 10, 64); err != nil {
		return h, false
	}
	if h.ns, h.hasTime = parseNanos(m[5]); !h.hasTime {
		return h, false
	}
	h.event = "PERF_RECORD_SWITCH " + m[6]
	return h, true
}

// parseNanos reads a perf time stamp, seconds with up to 9 decimals, as
// integer nanoseconds (a float64 of 1e5 seconds keeps only ~10 ns).
func parseNanos(s string) (int64, bool) {
	sec, frac, _ := strings.Cut(s, ".")
	v, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || v > math.MaxInt64/1_000_000_000-1 {
		return 0, false
	}
	ns := v * 1_000_000_000
	if len(frac) > 9 {
		frac = frac[:9]
	}
	if frac != "" {
		f, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil {
			return 0, false
		}
		ns += f
	}
	return ns, true
}

// switchFields are the sched:sched_switch fields the off-CPU reading uses.
type switchFields struct {
	prevPID, nextPID int64
	hasPrev, hasNext bool
	state            string
}

// oldSwitchRE is the sched_switch format of perf before 4.x:
// `prev_comm:prev_pid [prio] STATE ==> next_comm:next_pid [prio]`.
var oldSwitchRE = regexp.MustCompile(`^.*:(-?\d+) \[-?\d+\] (\S+) ==> .*:(-?\d+) \[-?\d+\]$`)

// parseSwitchFields reads `prev_pid=`, `prev_state=` and `next_pid=` from a
// sched:sched_switch header's fields (or the older format's same facts).
func parseSwitchFields(fields string) switchFields {
	var f switchFields
	if m := oldSwitchRE.FindStringSubmatch(fields); m != nil && !strings.Contains(fields, "prev_pid=") {
		var e1, e2 error
		f.prevPID, e1 = strconv.ParseInt(m[1], 10, 64)
		f.nextPID, e2 = strconv.ParseInt(m[3], 10, 64)
		f.hasPrev, f.hasNext, f.state = e1 == nil, e2 == nil, m[2]
		return f
	}
	for _, kv := range strings.Fields(fields) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch k {
		case "prev_pid":
			n, err := strconv.ParseInt(v, 10, 64)
			f.prevPID, f.hasPrev = n, err == nil
		case "next_pid":
			n, err := strconv.ParseInt(v, 10, 64)
			f.nextPID, f.hasNext = n, err == nil
		case "prev_state":
			f.state = v
		}
	}
	return f
}

// pending is a thread off the CPU: the record its switch-out went to.
type pending struct {
	acc   *sampleAcc
	ei    int
	value int64 // the switch-out header's value in acc
	start int64
	waker waker // who woke the thread, when a wake-up names it
	woke  int64 // when (the wake-up's time stamp), with waker
}

// offCPU holds the off-CPU state of a parse.
type offCPU struct {
	open      map[int64]pending
	switches  int   // switch-outs that opened an interval
	closed    int   // intervals closed by a switch-in
	lost      int   // switch-outs followed by another switch-out
	lastNanos int64 // the last time stamp of the text
	hasLast   bool
	// What says the text holds every switch-in (see complete).
	switchLines int
	idleOut     bool
}

// switchState is what a sched_switch's prev_state says about the thread
// that left the CPU.
type switchState byte

const (
	stateRunnable switchState = 'R' // preempted: scheduler latency
	stateDisk     switchState = 'D' // uninterruptible sleep: fallback io
	stateBlocked  switchState = 'S' // any other sleep: fallback wait
	stateDead     switchState = 'X' // exiting (X, Z): no interval
)

// schedState reads a sched_switch's prev_state: R or R+ (the + is a
// pending preemption) is runnable; X or Z is dead; D (TASK_UNINTERRUPTIBLE,
// as the kernel reports every uninterruptible and killable sleep) is
// stateDisk; everything else (S, I, T, t, P, W, K, N, combinations with |)
// is blocked.
func schedState(s string) switchState {
	s = strings.TrimSuffix(s, "+")
	switch {
	case s == "R":
		return stateRunnable
	case strings.ContainsAny(s, "XZ"):
		return stateDead
	case strings.Contains(s, "D"):
		return stateDisk
	}
	return stateBlocked
}

// noteTime keeps the last time stamp, where open intervals end.
func (o *offCPU) noteTime(ns int64) {
	if !o.hasLast || ns > o.lastNanos {
		o.lastNanos, o.hasLast = ns, true
	}
}

// switchOut opens the interval of the thread a sched_switch sample left.
func (b *builder) switchOut(tid int64, h *header, acc *sampleAcc, ei int, value int64) {
	o := &b.off
	if o.open == nil {
		o.open = map[int64]pending{}
	}
	if _, ok := o.open[tid]; ok {
		o.lost++
	}
	o.open[tid] = pending{acc: acc, ei: ei, value: value, start: h.ns}
	o.switches++
}

// switchLine notes a PERF_RECORD_SWITCH line (k kindSwitch; others are
// ignored): a switch-in closes its thread's interval.
func (b *builder) switchLine(k lineKind, h *header) error {
	if k != kindSwitch {
		return nil
	}
	b.off.noteTime(h.ns)
	b.off.switchLines++
	if h.event == "PERF_RECORD_SWITCH IN" {
		return b.switchIn(h.tid, h.ns)
	}
	return nil
}

// switchIn closes the thread's open interval, if any, at ns.
func (b *builder) switchIn(tid, ns int64) error {
	o := &b.off
	p, ok := o.open[tid]
	if !ok && b.tl != nil {
		b.tl.firstIn(tid, ns)
	}
	if !ok || ns < p.start {
		return nil
	}
	delete(o.open, tid)
	o.closed++
	if b.tl != nil {
		b.tl.interval(b, tid, p, ns)
	}
	return b.charge(p, ns-p.start)
}

// charge adds d nanoseconds of off-CPU time to a pending interval's record.
func (b *builder) charge(p pending, d int64) error {
	ev := b.events[p.ei]
	if ev.offTotal > math.MaxInt64-d {
		return fmt.Errorf("the off-CPU time of %s adds up to more nanoseconds than a 64-bit integer holds", ev.name)
	}
	ev.offTotal += d
	ev.offClosed++
	acc := p.acc
	if p.waker.stack != "" {
		acc = b.woken(p)
	}
	for i := range acc.vals {
		if acc.vals[i].ei == p.ei {
			acc.vals[i].off += d
			return nil
		}
	}
	return nil
}

// closeOffCPU ends the intervals still open at the last time stamp and
// says what the off-CPU reading did.
func (b *builder) closeOffCPU() error {
	o := &b.off
	if o.switches == 0 {
		return nil
	}
	_, clash := b.eventIdx[OffCPUType] // an event of that name keeps its type
	if o.closed == 0 || !o.complete() || clash {
		for _, ev := range b.events {
			ev.offClosed, ev.offTotal = 0, 0
		}
		b.warn(fmt.Sprintf("%s: the text does not hold the threads' switch-ins (a per-task recording without switch events), so no off-CPU time: each switch is counted once; record with `perf record -e sched:sched_switch -g --switch-events` and print with `perf script --show-switch-events` (or record system-wide with -a)", schedSwitch))
		return nil
	}
	if len(o.open) > 0 {
		var total int64
		for tid, p := range o.open {
			d := max(o.lastNanos-p.start, 0)
			if b.tl != nil {
				b.tl.interval(b, tid, p, p.start+d)
			}
			total += d
			if err := b.charge(p, d); err != nil {
				return err
			}
		}
		b.warn(fmt.Sprintf("%s: %d thread(s) still off the CPU at the end of the trace: charged up to the last time stamp (%.3f ms in all; their real off-CPU time is longer)", schedSwitch, len(o.open), float64(total)/1e6))
	}
	if o.lost > 0 {
		b.warn(fmt.Sprintf("%s: %d switch-out(s) without a switch-in before the thread's next switch-out: their off-CPU time is unknown and left out", schedSwitch, o.lost))
	}
	return nil
}

// complete reports whether the text holds the threads' switch-ins: it has
// PERF_RECORD_SWITCH lines, or shows the idle task switching out (only a
// system-wide recording holds that), or at most one in 20 of the intervals
// closed by next_pid was lost to a next switch-out of its thread (a
// per-task recording sees a switch-in only where one of the program's
// threads follows another on a CPU, so most of its intervals are lost; a
// system-wide one of a machine never idle loses only what perf dropped).
func (o *offCPU) complete() bool {
	return o.switchLines > 0 || o.idleOut || o.lost*20 <= o.closed
}

// offCPUEvent reports whether an event's values are off-CPU nanoseconds.
func (ev *event) offCPU() bool { return ev.offClosed > 0 }

// offCPULabels labels a sched_switch record, of off-CPU time or of counted
// switches, and reports whether it is scheduler latency. Preempted time gets LabelBucket "sched" (scheduler
// latency, in no bucket) and LabelState "runnable". Blocked time gets
// LabelFallback, the bucket when no frame rule claims the stack (a
// frame-pointer-less libc wait whose stack stops at the futex call, a
// program's own frames): "io" for an uninterruptible sleep (D: the kernel's
// io_schedule waits for the block layer, page and buffer locks, writeback;
// its lock and completion waits are D too, but kernel lock frames have
// rules of their own), "wait" for any other; and LabelState "waiting". So
// off-CPU time is never cpu.
func offCPULabels(acc *sampleAcc) bool {
	l := acc.s.Label
	switch acc.state {
	case stateRunnable:
		l[labels.Bucket] = []string{labels.Sched}
		l[labels.State] = []string{"runnable"}
		return true
	case stateDisk:
		l[labels.Fallback] = []string{"io"}
	default:
		l[labels.Fallback] = []string{"wait"}
	}
	l[labels.State] = []string{"waiting"}
	return false
}
