package perfscript

import (
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// Who woke a thread, from sched:sched_waking (or sched:sched_wakeup).
//
// A sched_waking sample is taken in the context of the task that wakes
// another: its stack is the waker's (the unlocker's pthread_mutex_unlock,
// a write to a pipe, a condition signal) and its `pid=` field names the
// woken thread. The first waking of a thread after its switch-out and
// before its next switch-in names the waker of that off-CPU interval: the
// switch-out's record is split by waker, each part labelled with the
// waker's stack (labels.Waker, root first, ";"-joined, the frame names
// the reader gives, without the kernel's wake-up path: see foldStack) and
// thread (labels.WakerThread). A wake-up that ran
// in an interrupt or softirq, or in the idle task, was made by no thread:
// its stack is the kernel's interrupt path on top of whatever thread the
// interrupt stopped, so it is labelled by what the kernel frames say
// (wakeCause) and names no thread. An interval without a waking in the
// text (a per-task recording does not see wake-ups from other processes
// or from interrupts taken while another task ran) gets no waker label.

// wakeEvent reports whether an event's samples are wake-ups that name the
// woken thread.
func wakeEvent(name string) bool {
	return name == "sched:sched_waking" || name == "sched:sched_wakeup"
}

// wakeTarget reads the woken thread from a sched_waking or sched_wakeup
// header's fields: `comm=NAME pid=TID prio=P target_cpu=C`. The comm may
// hold spaces, so the last pid= field is the one.
func wakeTarget(fields string) (int64, bool) {
	f := strings.Fields(fields)
	for i := len(f) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(f[i], "pid="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// waker is who woke an off-CPU interval: the Waker label's value and the
// waker's thread (0 when it was no thread).
type waker struct {
	stack string
	tid   int64
}

// waking notes a wake-up sample (h, its stack locs leaf first): the woken
// thread's open interval, when it has none named yet, gets its waker.
func (b *builder) waking(h *header, locs []*profile.Location) {
	tid, ok := wakeTarget(h.fields)
	if !ok || tid == 0 {
		return
	}
	o := &b.off
	p, ok := o.open[tid]
	if !ok || p.waker.stack != "" || h.ns < p.start {
		return
	}
	p.waker, p.woke = waker{stack: wakeCause(locs)}, h.ns
	if p.waker.stack == "" {
		p.waker.tid = h.tid
		if h.tid == 0 { // the idle task: an interrupt the frames do not name
			p.waker.stack = labels.WakerUnknown
		} else {
			p.waker.stack = b.foldStack(locs)
		}
	}
	o.open[tid] = p
}

// wakeCause returns the Waker value of a wake-up made in an interrupt or
// softirq, read from its kernel frames (locs leaf first): a timer
// (hrtimer_wakeup: nanosleep, a futex or epoll timeout), a timeout
// (process_timeout: schedule_timeout's timer), the network (net_rx_action,
// the receive softirq), or unknown for any other interrupt. It returns ""
// for a wake-up made by a thread (no interrupt entry among the frames).
func wakeCause(locs []*profile.Location) string {
	irq := false
	for _, l := range locs {
		if !kernelLocation(l) {
			continue
		}
		for _, ln := range l.Line {
			switch name := ln.Function.Name; {
			case name == "hrtimer_wakeup":
				return labels.WakerTimer
			case name == "process_timeout":
				return labels.WakerTimeout
			case name == "net_rx_action":
				return labels.WakerNetwork
			case interruptEntry(name):
				irq = true
			}
		}
	}
	if irq {
		return labels.WakerUnknown
	}
	return ""
}

// interruptEntry reports whether a kernel function is where an interrupt
// or softirq begins: asm_sysvec_apic_timer_interrupt, asm_common_interrupt
// (x86 5.8+), apic_timer_interrupt, do_IRQ (older x86), el1_interrupt
// (arm64), __do_softirq, handle_softirqs, irq_exit_rcu.
func interruptEntry(name string) bool {
	return strings.HasSuffix(name, "_interrupt") || strings.Contains(name, "softirq") ||
		strings.HasPrefix(name, "asm_sysvec_") || name == "do_IRQ" || strings.HasPrefix(name, "irq_exit")
}

// foldStack joins a waker's frame names (locs leaf first, inlined frames
// in each) root first with ";", as folded stacks print them. The kernel's
// frames are left out when the stack has others: they are the wake-up path
// (the syscall down to try_to_wake_up), the same for every waker of a
// kind, and would hide the waker's own code from anything that looks for
// it at the leaf. A kernel thread's stack, all kernel, is kept whole.
func (b *builder) foldStack(locs []*profile.Location) string {
	user := false
	for _, l := range locs {
		if !kernelLocation(l) && l.Mapping != nil {
			user = true
			break
		}
	}
	var sb strings.Builder
	for i := len(locs) - 1; i >= 0; i-- {
		if user && kernelLocation(locs[i]) {
			continue
		}
		lines := locs[i].Line
		for j := len(lines) - 1; j >= 0; j-- {
			if sb.Len() > 0 {
				sb.WriteByte(';')
			}
			sb.WriteString(lines[j].Function.Name)
		}
	}
	return b.intern(sb.String())
}

// kernelLocation reports whether a frame is the kernel's.
func kernelLocation(l *profile.Location) bool {
	return l.Mapping != nil && IsKernelDSO(l.Mapping.File)
}

// intern returns one copy of each waker stack, which many intervals share.
func (b *builder) intern(s string) string {
	if v, ok := b.wakerStacks[s]; ok {
		return v
	}
	if b.wakerStacks == nil {
		b.wakerStacks = map[string]string{}
	}
	b.wakerStacks[s] = s
	return s
}

// wokenKey is a switch-out record and a waker: the record of its
// intervals that waker ended.
type wokenKey struct {
	acc *sampleAcc
	waker
}

// woken returns the record of p's switch-out record whose intervals p's
// waker ended, adding it when new, and moves p's switch-out (its value
// and count) to it.
func (b *builder) woken(p pending) *sampleAcc {
	k := wokenKey{p.acc, p.waker}
	c, ok := b.wokenAcc[k]
	if !ok {
		s := &profile.Sample{
			Location: p.acc.s.Location,
			Label:    map[string][]string{labels.Waker: {p.waker.stack}},
			NumLabel: map[string][]int64{},
		}
		for k, v := range p.acc.s.Label {
			s.Label[k] = v
		}
		for k, v := range p.acc.s.NumLabel {
			s.NumLabel[k] = v
		}
		if p.waker.tid != 0 {
			s.Label[labels.WakerThread] = []string{strconv.FormatInt(p.waker.tid, 10)}
		}
		c = &sampleAcc{s: s, state: p.acc.state}
		if b.wokenAcc == nil {
			b.wokenAcc = map[wokenKey]*sampleAcc{}
		}
		b.wokenAcc[k] = c
		b.order = append(b.order, c)
	}
	for i := range p.acc.vals {
		if ev := &p.acc.vals[i]; ev.ei == p.ei {
			ev.v -= p.value
			ev.n--
			c.add(p.ei, p.value)
			break
		}
	}
	return c
}
