package jfr

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

// profile assembles the profile from the samples, keeping only the sample
// types some event filled, and the warnings that say what they mean.
func (b *builder) profile() (*pprofile.Profile, []string) {
	var keep []int
	p := &pprofile.Profile{TimeNanos: b.start, DurationNanos: max(0, b.end-b.start)}
	periods, threadTime := b.periods()
	if threadTime {
		p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: ThreadTime, Unit: "nanoseconds"})
	}
	for i, s := range specs {
		if b.present[i] {
			keep = append(keep, i)
			p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: s.sample, Unit: s.unit})
		}
	}
	for _, s := range b.order {
		v := make([]int64, 0, len(keep)+1)
		if threadTime {
			var tt int64
			for i, x := range s.Value {
				tt += x * periods[i]
			}
			v = append(v, tt)
		}
		for _, i := range keep {
			v = append(v, s.Value[i])
		}
		s.Value = v
		p.Sample = append(p.Sample, s)
	}
	for _, l := range b.locs {
		p.Location = append(p.Location, l)
	}
	for _, f := range b.funcs {
		p.Function = append(p.Function, f)
	}
	slices.SortFunc(p.Location, func(x, y *pprofile.Location) int { return int(x.ID) - int(y.ID) })
	slices.SortFunc(p.Function, func(x, y *pprofile.Function) int { return int(x.ID) - int(y.ID) })
	if len(p.SampleType) > 0 {
		p.DefaultSampleType = p.SampleType[0].Type
	}
	return p, b.warnings(threadTime)
}

// ThreadTime is the sample type of the combined view: the nanoseconds of
// every duration event (waits, I/O, GC pauses) plus, for every execution or
// native sample, the sampling period it stands for.
const ThreadTime = "thread-time"

// periods returns, per spec, the nanoseconds one unit of its value adds to
// thread time (1 for durations, the period for samples, 0 for allocation
// bytes), and whether there is thread time: events of a kind whose period
// is unknown make none.
func (b *builder) periods() ([]int64, bool) {
	out := make([]int64, len(specs))
	any := false
	for i, s := range specs {
		switch {
		case !b.present[i] || s.unit == "bytes":
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
func (b *builder) warnings(threadTime bool) []string {
	var w []string
	if threadTime {
		w = append(w, ThreadTime+" adds the sampling period to each execution or native sample and the recorded duration of each wait, I/O and GC pause: the JDK samples only a few threads per period, so it is an estimate")
	}
	for i, s := range specs {
		if !b.present[i] {
			continue
		}
		set := b.settings[s.event]
		switch s.event {
		case "jdk.ExecutionSample":
			w = append(w, fmt.Sprintf("jdk.ExecutionSample: the JDK samples at most 5 threads running Java code per period%s, so execution-samples counts sampled threads, not CPU time", every(set["period"])))
		case "jdk.NativeMethodSample":
			w = append(w, fmt.Sprintf("jdk.NativeMethodSample: the JDK samples 1 thread in native code per period%s (running or blocked)", every(set["period"])))
		}
		if th := set["threshold"]; s.what != "" && th != "" && th != "0 ns" && th != "0 ms" {
			w = append(w, fmt.Sprintf("%s: the recording keeps only %s of at least %s (its threshold); shorter ones are missing from %s", s.event, s.what, th, s.sample))
		}
	}
	if b.truncated > 0 {
		w = append(w, fmt.Sprintf("%d stacks were truncated at the recording's stack depth (raise it with -XX:FlightRecorderOptions:stackdepth=N)", b.truncated))
	}
	return w
}

func every(period string) string {
	if period == "" {
		return ""
	}
	return " (every " + period + ")"
}
