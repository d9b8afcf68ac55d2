package jfr

import (
	"fmt"
	"slices"

	pprofile "github.com/google/pprof/profile"
)

// profile assembles the profile from the samples, keeping only the sample
// types some event filled, and the warnings that say what they mean.
func (b *builder) profile() (*pprofile.Profile, []string) {
	var keep []int
	p := &pprofile.Profile{TimeNanos: b.start, DurationNanos: max(0, b.end-b.start)}
	for i, s := range specs {
		if b.present[i] {
			keep = append(keep, i)
			p.SampleType = append(p.SampleType, &pprofile.ValueType{Type: s.sample, Unit: s.unit})
		}
	}
	for _, s := range b.order {
		v := make([]int64, len(keep))
		for j, i := range keep {
			v[j] = s.Value[i]
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
	if len(keep) > 0 {
		p.DefaultSampleType = specs[keep[0]].sample
	}
	return p, b.warnings()
}

// warnings says what the sampled counts mean and which shorter events the
// recording's thresholds left out.
func (b *builder) warnings() []string {
	var w []string
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
