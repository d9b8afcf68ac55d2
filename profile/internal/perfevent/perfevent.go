// Package perfevent classifies perf event names. It is shared by the perf
// script reader, which names its sample types after the events, and by
// profile's kind detection, which reads those names back from any profile
// (also one written out as pprof and loaded again).
package perfevent

import "strings"

// OnCPU reports whether samples of a perf event measure on-CPU time or
// work (cpu-clock, task-clock, cycles, instructions and other hardware
// counters), as opposed to software and trace events (page faults, context
// switches, sched:sched_switch, block I/O). Modifiers such as `:u` and
// `:ppp` are ignored.
func OnCPU(event string) bool {
	e := event
	if i := strings.IndexByte(e, ':'); i >= 0 {
		if strings.Trim(e[i+1:], "ukhGHpPSDIWe") != "" {
			return false // a tracepoint such as sched:sched_switch
		}
		e = e[:i]
	}
	e = strings.TrimSuffix(e, "/")
	if i := strings.LastIndexByte(e, '/'); i >= 0 { // cpu/cycles/, cpu_core/instructions/
		e = e[i+1:]
	}
	switch e {
	case "cpu-clock", "task-clock", "cycles", "cpu-cycles", "instructions",
		"ref-cycles", "bus-cycles", "branches", "branch-instructions",
		"branch-misses", "cache-references", "cache-misses",
		"stalled-cycles-frontend", "stalled-cycles-backend", "cpu_clock":
		return true
	}
	return strings.HasPrefix(e, "cycles") || strings.HasPrefix(e, "cpu-clock")
}

// OffCPU reports whether samples of a perf event are taken where a
// thread leaves the CPU (sched:sched_switch and its kin).
func OffCPU(event string) bool {
	switch event {
	case "sched:sched_switch", "sched:sched_stat_sleep", "sched:sched_stat_blocked",
		"sched:sched_stat_iowait", "context-switches", "cs":
		return true
	}
	return false
}
