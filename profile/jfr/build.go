package jfr

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	pprofile "github.com/google/pprof/profile"
)

// column is how one sample type of specs appears in the profile: its name
// and unit there, and the factor its accumulated values are multiplied by.
type column struct {
	spec   int
	typ    string
	unit   string
	factor int64
	// sum lists the sample types a combined column adds up (see
	// combined; spec is the first of them), nil for any other.
	sum []int
}

// has reports whether the column holds the values of sample type i.
func (c column) has(i int) bool {
	if c.sum != nil {
		return slices.Contains(c.sum, i)
	}
	return c.spec == i
}

// combined are async-profiler's modes that write two event types, and
// the sample type that adds them up, as its own views do: -e lock's
// monitor enters and parks, -e alloc's allocations in new TLABs and
// outside them. An async-profiler recording with either has it, ahead of
// them (its default, unless CPU or wall time comes first).
var combined = []struct {
	typ string
	of  []string
}{
	{"lock", []string{"monitor-enter", "park"}},
	{"alloc", []string{"alloc-in-new-tlab", "alloc-outside-tlab"}},
}

// columns returns the sample types some event filled, as the profile
// shows them: async-profiler's wall samples in nanoseconds when the
// recording names the wall-clock interval (a count otherwise), CPU time
// only when it names the CPU engine's interval.
func (b *builder) columns() []column {
	var out []column
	for i, s := range specs {
		if !b.present[i] {
			continue
		}
		col := column{spec: i, typ: s.sample, unit: s.unit, factor: 1}
		switch s.sample {
		case wallType:
			if ns, ok := b.wallInterval(); ok {
				col.factor = ns
			} else {
				col.typ, col.unit = wallSamplesType, "count"
			}
		case cpuTimeType:
			ns, ok := b.cpuInterval()
			if !ok {
				continue
			}
			col.factor = ns
		}
		out = append(out, col)
	}
	if b.asyncProfiler() {
		out = addCombined(out)
	}
	return out
}

// addCombined adds the combined columns of the sample types cols has,
// each before the first of them.
func addCombined(cols []column) []column {
	for _, c := range combined {
		at := -1
		var sum []int
		for i, col := range cols {
			if slices.Contains(c.of, col.typ) {
				if at < 0 {
					at = i
				}
				sum = append(sum, col.spec)
			}
		}
		if at >= 0 {
			first := cols[at]
			cols = slices.Insert(cols, at, column{spec: first.spec, typ: c.typ, unit: first.unit, factor: 1, sum: sum})
		}
	}
	return cols
}

// SamplesType is the count of events behind each sample, whatever its
// type: one per execution or native sample, per wait, I/O event, GC pause
// or allocation sample. It is the count profdiff judges noise by and
// reports as the number of samples of every other type (diff.CountColumn
// pairs a "samples" count with each).
const SamplesType = "samples"

// profile assembles the profile from the samples and the warnings that
// say what they mean. It takes the samples over: call it once.
func (b *builder) profile() (*pprofile.Profile, []string) {
	p := &pprofile.Profile{TimeNanos: b.start, DurationNanos: max(0, b.end-b.start)}
	cols := b.columns()
	periods, threadTime := b.periods()
	if threadTime {
		p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: ThreadTime, Unit: "nanoseconds"})
		b.overlap.cover()
	} else {
		periods = nil // emit makes no thread-time column
	}
	for _, col := range cols {
		p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: col.typ, Unit: col.unit})
	}
	p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: SamplesType, Unit: "count"})
	// A tally's samples inside a wait of their thread are a sample of
	// their own, of no thread-time (covered is 0 without thread-time).
	none := make([]int64, len(specs))
	for _, r := range b.order {
		b.emit(p, r, r.value-r.covered, r.events-r.covered, periods, cols)
		if r.covered > 0 {
			b.emit(p, r, r.covered, r.covered, none, cols)
		}
	}
	b.finish(p)
	if len(p.SampleType) > 0 {
		p.DefaultSampleType = p.SampleType[0].Type
	}
	if b.asyncProfiler() && b.settings["jdk.ActiveRecording"]["event"] != "wall" && slices.ContainsFunc(cols, func(c column) bool { return c.typ == cpuTimeType }) {
		// -e cpu with --wall beside it: its main event is CPU time.
		p.DefaultSampleType = cpuTimeType
	}
	return p, b.warnings(threadTime, cols)
}

// emit adds a sample of the tally's stack and labels with this value and
// count of events, and the thread time periods give it (nil: no
// thread-time column), unless every value is 0.
func (b *builder) emit(p *pprofile.Profile, r *tally, val, events int64, periods []int64, cols []column) {
	v := make([]int64, 0, len(cols)+2)
	var any bool
	if periods != nil {
		x := val * periods[r.spec]
		any = x != 0
		v = append(v, x)
	}
	for _, col := range cols {
		var x int64
		if col.has(r.spec) {
			x = val * col.factor
		}
		any = any || x != 0
		v = append(v, x)
	}
	if any {
		p.Sample = append(p.Sample, &pprofile.Sample{Value: append(v, events), Location: r.locs, Label: r.labels})
	}
}

// finish adds the locations, functions and mappings, in their ID order.
func (b *builder) finish(p *pprofile.Profile) {
	for _, l := range b.locs {
		p.Location = append(p.Location, l)
	}
	for _, f := range b.funcs {
		p.Function = append(p.Function, f)
	}
	for _, m := range b.maps {
		p.Mapping = append(p.Mapping, m)
	}
	slices.SortFunc(p.Location, func(x, y *pprofile.Location) int { return int(x.ID) - int(y.ID) })
	slices.SortFunc(p.Function, func(x, y *pprofile.Function) int { return int(x.ID) - int(y.ID) })
	slices.SortFunc(p.Mapping, func(x, y *pprofile.Mapping) int { return int(x.ID) - int(y.ID) })
}

// ThreadTime is the sample type of the combined view of a JDK recording:
// the nanoseconds of every wait, I/O event and GC pause plus, for every
// execution or native sample not taken inside a wait or I/O event of its
// thread (see overlap), the sampling period it stands for. GC phases,
// safepoints and async-profiler's events are left out: they overlap it.
const ThreadTime = "thread-time"

// periods returns, per spec, the nanoseconds one unit of its value adds to
// thread time (1 for durations, the period for samples, 0 for sample types
// not part of it), and whether there is thread time: samples whose period
// the recording does not name make none.
//
// async-profiler's recordings have none: their samples are CPU or wall
// time of their own, and its lock events sum in their own sample types.
func (b *builder) periods() ([]int64, bool) {
	if b.asyncProfiler() {
		return nil, false
	}
	out := make([]int64, len(specs))
	any := false
	for i, s := range specs {
		switch {
		case !b.present[i] || !s.thread:
		case s.unit == "nanoseconds":
			out[i], any = 1, true
		default:
			ns, ok := parseSpan(b.settings[s.event]["period"])
			if !ok {
				return nil, false
			}
			out[i], any = ns, true
		}
	}
	return out, any
}

// Defaults of async-profiler (src/arguments.h, src/wallClock.cpp) for an
// interval setting of 0: 10 ms for CPU engines, 50 ms for wall clock.
const (
	defaultCPUInterval  = 10_000_000
	defaultWallInterval = 50_000_000
)

// asyncProfiler reports whether async-profiler wrote the recording: it
// states its version as a setting of jdk.ActiveRecording (2.x and 4.x
// alike), which the JDK's recordings have no setting of.
func (b *builder) asyncProfiler() bool {
	return b.settings["jdk.ActiveRecording"]["version"] != ""
}

// executionType returns the sample type (an index in specs) of an
// execution sample in this thread state. The JDK's are
// execution-samples. async-profiler's are its main event's: wall in wall
// mode (-e wall; 2.x writes its wall samples so, 4.x too with --nobatch),
// and those not taken by the CPU engine (any state but STATE_DEFAULT)
// when --wall runs beside it; cpu-time when a CPU engine took them;
// execution-samples (a count) for other events (cycles, a method).
func (b *builder) executionType(state string) int {
	if !b.asyncProfiler() {
		return executionSpec
	}
	_, wall := b.settings["jdk.ExecutionSample"]["wall"]
	if b.settings["jdk.ActiveRecording"]["event"] == "wall" || wall && state != "STATE_DEFAULT" {
		return wallSpec
	}
	if _, ok := b.cpuInterval(); ok {
		return cpuTimeSpec
	}
	return executionSpec
}

// The indexes in specs of the sample types an execution sample may join.
var (
	executionSpec = specOf("execution-samples")
	wallSpec      = specOf(wallType)
	cpuTimeSpec   = specOf(cpuTimeType)
)

// specOf returns the index in specs of a sample type.
func specOf(sample string) int {
	return slices.IndexFunc(specs, func(s spec) bool { return s.sample == sample })
}

// wallInterval returns the nanoseconds one async-profiler wall-clock
// sample stands for: the jdk.ExecutionSample "wall" setting (--wall N),
// or with -e wall its "interval" setting; 0 means the default.
func (b *builder) wallInterval() (int64, bool) {
	ex := b.settings["jdk.ExecutionSample"]
	if w, ok := ex["wall"]; ok {
		return intervalOr(w, defaultWallInterval)
	}
	if b.settings["jdk.ActiveRecording"]["event"] == "wall" {
		return intervalOr(ex["interval"], defaultWallInterval)
	}
	return 0, false
}

// cpuEngine returns the async-profiler engine that sampled CPU time, or
// "": 4.x names it (engine perf_events with event cpu or cpu-clock,
// itimer, ctimer); 2.x names only the event (cpu, which is perf_events or
// its itimer fallback, cpu-clock, itimer, ctimer).
func (b *builder) cpuEngine() string {
	rec := b.settings["jdk.ActiveRecording"]
	switch engine, event := rec["engine"], rec["event"]; {
	case engine == "itimer" || engine == "ctimer":
		return engine
	case event != "cpu" && event != "cpu-clock" && event != "itimer" && event != "ctimer":
		return ""
	case engine != "":
		return engine
	default:
		return event
	}
}

// cpuInterval returns the CPU nanoseconds one async-profiler CPU sample
// stands for, when its engine samples CPU time (cpuEngine): the
// jdk.ExecutionSample "interval" setting.
func (b *builder) cpuInterval() (int64, bool) {
	if b.cpuEngine() == "" {
		return 0, false
	}
	return intervalOr(b.settings["jdk.ExecutionSample"]["interval"], defaultCPUInterval)
}

// intervalOr reads async-profiler's interval setting, nanoseconds as a
// plain number; 0 means def.
func intervalOr(s string, def int64) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	switch {
	case err != nil || n < 0:
		return 0, false
	case n == 0:
		return def, true
	}
	return n, true
}

// parseSpan reads a JFR setting's time span such as "10 ms" or "1 s".
func parseSpan(s string) (int64, bool) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), " ")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 {
		return 0, false
	}
	mult := map[string]int64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}[unit]
	if mult == 0 || n > math.MaxInt64/mult {
		return 0, false
	}
	return n * mult, true
}

// warnings says what the sampled counts mean and which shorter events the
// recording's thresholds left out.
func (b *builder) warnings(threadTime bool, cols []column) []string {
	var w []string
	if threadTime {
		w = append(w, ThreadTime+" adds the sampling period to each execution or native sample (but those inside a wait or I/O event of their thread, which it has) and the recorded duration of each wait, I/O and GC pause: the JDK samples only a few threads per period, so it is an estimate")
	}
	for _, col := range cols {
		if col.sum != nil {
			continue // its sample types' own columns say it
		}
		s := specs[col.spec]
		set := b.settings[s.event]
		if m := b.sampleWarning(col); m != "" {
			w = append(w, m)
		}
		if th := set["threshold"]; s.what != "" && th != "" && th != "0 ns" && th != "0 ms" {
			w = append(w, fmt.Sprintf("%s: the recording keeps only %s of at least %s (its threshold); shorter ones are missing from %s", s.event, s.what, th, s.sample))
		}
	}
	if m := b.lockWarning(cols); m != "" {
		w = append(w, m)
	}
	if b.truncated > 0 {
		how := "-XX:FlightRecorderOptions:stackdepth=N"
		if b.asyncProfiler() {
			how = "async-profiler's jstackdepth=N"
		}
		w = append(w, fmt.Sprintf("%d stacks were truncated at the recording's stack depth (raise it with %s)", b.truncated, how))
	}
	return w
}

// lockWarning says which lock waits async-profiler's lock setting (on
// jdk.JavaMonitorEnter, in nanoseconds) kept, when the profile has its
// monitor-enter or park: 2.x keeps the waits of at least that long; 4.x
// records a wait each time the waits add up to it (src/lockTracer.cpp),
// every longer one and a sample of the shorter.
func (b *builder) lockWarning(cols []column) string {
	lock, ok := intervalOr(b.settings["jdk.JavaMonitorEnter"]["lock"], 0)
	if !b.asyncProfiler() || !ok || lock == 0 || !slices.ContainsFunc(cols, func(c column) bool {
		return c.typ == "monitor-enter" || c.typ == "park"
	}) {
		return ""
	}
	d := time.Duration(lock)
	if strings.HasPrefix(b.settings["jdk.ActiveRecording"]["version"], "2.") {
		return fmt.Sprintf("async-profiler's lock events: the recording keeps only lock waits of at least %s (its lock threshold); shorter ones are missing from lock, monitor-enter and park", d)
	}
	return fmt.Sprintf("async-profiler's lock events: the recording has a lock wait each time the waits add up to %s (its lock interval), every longer wait and a sample of the shorter ones; lock, monitor-enter and park sum the waits it has", d)
}

// sampleWarning says what a sampled column stands for, or "".
func (b *builder) sampleWarning(col column) string {
	s := specs[col.spec]
	period := every(b.settings[s.event]["period"])
	rec := b.settings["jdk.ActiveRecording"]
	switch {
	case col.typ == wallSamplesType:
		return "profiler.WallClockSample: the recording names no wall-clock interval (async-profiler's wall setting), so " + wallSamplesType + " counts samples, not time"
	case col.typ == wallType:
		return fmt.Sprintf("async-profiler's wall-clock samples: wall is each sample's count times the %s wall-clock interval; every thread is sampled, running or not", time.Duration(col.factor))
	case col.typ == cpuTimeType:
		return fmt.Sprintf("jdk.ExecutionSample: cpu-time is each CPU sample times the %s interval of async-profiler's %s engine", time.Duration(col.factor), b.cpuEngine())
	case s.sample == "execution-samples" && b.asyncProfiler():
		return fmt.Sprintf("jdk.ExecutionSample: async-profiler's %s samples (interval %s), counted: execution-samples is no time", rec["event"], b.settings["jdk.ExecutionSample"]["interval"])
	case s.sample == "execution-samples":
		return fmt.Sprintf("jdk.ExecutionSample: the JDK samples at most 5 threads running Java code per period%s, so execution-samples counts sampled threads, not CPU time", period)
	case s.sample == "native-samples":
		return fmt.Sprintf("jdk.NativeMethodSample: the JDK samples 1 thread in native code per period%s (running or blocked)", period)
	}
	return ""
}

func every(period string) string {
	if period == "" {
		return ""
	}
	return " (every " + period + ")"
}
