package present

import (
	"strings"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/units"
)

// diffSummary is the head of a diff: in Markdown a heading, the headline
// and a sentence on the data; in the terminal the same facts as lines.
func diffSummary(r *result.Result) []report.Block {
	// Sources by their shortest names (ShortSources), in the terminal
	// with --wide as they were typed.
	src := ShortSources(r.Base.Sources, r.New.Sources)
	baseSrc, newSrc := SourceList(src[0], r.Base.Sources), SourceList(src[1], r.New.Sources)
	head := diffHeadline(r)
	return []report.Block{
		report.Heading{Level: 3, Only: report.Markdown, Line: report.Cat("profdiff: ", baseSrc, " → ", newSrc)},
		report.Para{Only: report.Markdown, Lines: []report.Line{head}},
		report.Para{Only: report.Markdown, Lines: []report.Line{report.Cat("Sample type ", report.Code(r.SampleType), ", ", kindPhrase(r.Kind),
			". Base: ", sideFacts(r.Base), "; new: ", sideFacts(r.New), ". ", attribution(r.Analysis), ".")}},
		report.Para{Only: report.Terminal, Lines: []report.Line{
			report.Cat("base: ", baseSrc, " (", sideFacts(r.Base), ")"),
			report.Cat("new:  ", newSrc, " (", sideFacts(r.New), ")"),
			report.Cat("sample type ", r.SampleType, "; ", kindPhrase(r.Kind)),
			report.Cat(strings.ToLower(attribution(r.Analysis)[:1]), attribution(r.Analysis)[1:]),
			head,
		}},
	}
}

// sideFacts are a side's sample count and, when known, its duration.
func sideFacts(s result.SideSummary) report.Line {
	l := report.Cat(report.Int(s.Samples), " samples")
	if s.DurationNanos > 0 {
		l = append(l, report.Text(" over "), report.Amount(float64(s.DurationNanos), "nanoseconds"))
	}
	return l
}

// attribution says what the method rows are: whom a sample is charged
// to (and when that is the kind's default), self or inclusive, and the
// measure they are sorted and noted by.
func attribution(a result.Analysis) string {
	s := "Methods by " + string(a.By)
	switch {
	case a.ByDefault && (a.Kind == "" || a.Kind == "unknown"):
		s += " (the default when the kind is unknown)"
	case a.ByDefault:
		s += " (the default for " + string(a.Kind) + " profiles)"
	}
	mode := "self"
	if a.Cum {
		mode = "inclusive"
	}
	measure := map[result.Normalize]string{result.NormalizeRate: "rates", result.NormalizeValue: "values"}[a.Normalize]
	if measure == "" {
		measure = "shares"
	}
	if a.Normalize == result.NormalizeRate && meaning(a) == result.MeaningMemory {
		// A snapshot has no duration: its "rate" is the mean per profile.
		measure = "values (mean per profile)"
	}
	return s + ", " + mode + " " + measure
}

// meaning is what a result's buckets measure: as the result says, or for
// results that do not say, as its kind implies.
func meaning(a result.Analysis) result.Meaning {
	if a.Meaning != "" {
		return a.Meaning
	}
	switch a.Kind {
	case "cpu":
		return result.MeaningCPU
	case "mutex", "block":
		return result.MeaningDelay
	case "heap":
		return result.MeaningMemory
	}
	return result.MeaningState
}

// diffHeadline is a diff's first line, in what its buckets mean: the
// share of time in a waiting state (with the number of threads or
// goroutines in it), of CPU in runtime machinery (with cores), or for
// delay and memory profiles, whose shares say little, the total itself.
func diffHeadline(r *result.Result) report.Line {
	m := meaning(r.Analysis)
	if m == result.MeaningDelay || m == result.MeaningMemory {
		l := report.Cat(report.Text(totalTitle(r.Analysis, r.Base.Unit, r.Buckets)+": ").Bold(), report.Amount(r.Base.Total, r.Base.Unit).Bold(),
			report.Text(" → ").Bold(), report.Amount(r.New.Total, r.Base.Unit).Bold(),
			" (", signed(r.New.Total-r.Base.Total, r.Base.Unit), ")")
		if m == result.MeaningMemory && r.Base.Profiles <= 1 && r.New.Profiles <= 1 {
			// A snapshot's rate is its mean per profile: with one
			// profile a side, the total again.
			return l
		}
		return append(l, rateChange(r.Base.TotalRate, r.New.TotalRate, r.RateUnit)...)
	}
	sb, sn := r.SyncShare()
	l := report.Cat(report.Text(syncTitle(m)+": ").Bold(), report.Share(sb).Places(1).Bold(), report.Text(" → ").Bold(), report.Share(sn).Places(1).Bold(),
		" (", delta(sn-sb).WithTone(growth(sn-sb, false)), ")")
	var base, new []*float64
	for _, b := range r.Buckets {
		if b.Bucket != rules.CPU {
			base, new = append(base, b.BaseRate), append(new, b.NewRate)
		}
	}
	return append(l, rateChange(sumRates(base), sumRates(new), r.RateUnit)...)
}

// syncTitle names the share of everything but cpu.
func syncTitle(m result.Meaning) string {
	if m == result.MeaningCPU {
		return "CPU in locking, GC, I/O and syscall machinery"
	}
	return "Total wait/synchronization"
}

// totalTitle names the total of a delay or memory profile, whose values
// are in unit: contention delay when every sample is lock contention,
// off-CPU delay for other delay in time, else the sample type's name
// ("Total inuse_space").
func totalTitle(a result.Analysis, unit string, buckets []result.BucketRow) string {
	if meaning(a) == result.MeaningDelay && units.Seconds(unit) > 0 {
		var used []rules.Bucket
		for _, b := range buckets {
			if b.Base > 0 || b.New > 0 {
				used = append(used, b.Bucket)
			}
		}
		if len(used) == 1 && used[0] == rules.LockContention {
			return "Contention delay"
		}
		return "Off-CPU delay"
	}
	name, _, _ := strings.Cut(a.SampleType, "/")
	return "Total " + name
}

// sumRates is the sum of rates: unknown (nil) when any is, or there are
// none.
func sumRates(rates []*float64) *float64 {
	if len(rates) == 0 {
		return nil
	}
	sum := 0.0
	for _, r := range rates {
		if r == nil {
			return nil
		}
		sum += *r
	}
	return &sum
}

// rateChange is " · base → new (Δ)" in rates, or nothing when a rate is
// unknown.
func rateChange(base, new *float64, unit string) report.Line {
	if base == nil || new == nil || unit == "" {
		return nil
	}
	return report.Cat(" · ", report.Amount(*base, unit), " → ", report.Amount(*new, unit), " (", signed(*new-*base, unit), ")")
}

// signed is a change in unit, coloured by its sign.
func signed(d float64, unit string) report.Cell {
	if unit == "" {
		unit = "count"
	}
	return report.Delta(d, false, "").WithUnit(unit).WithTone(growth(d, false))
}

// apart describes a line of time kept apart from the buckets (see
// diff.Apart): scheduler latency, or native-or-blocked time nothing can
// place.
type apart struct {
	label         string // the line's bold title
	section, name string // its CSV record's section and name
	note          string // the CSV record's note
	of            string // what its share is of: "goroutine time", "thread time"
	why           string // said before "not in the buckets above", or ""
	diff          func(*result.Result) *result.SchedRow
	top           func(*result.TopResult) *result.TopSched
}

func (a apart) title() report.Cell { return report.Text(a.label).Bold() }

// apartRows lists the apart lines in the order they are shown. Their
// shares are of all the time recorded: goroutine time for Go's goroutine
// views, thread time otherwise (perf's scheduler traces, .NET's threads).
func apartRows(an result.Analysis) []apart {
	of := "thread time"
	if an.Kind == "trace" || an.Kind == "goroutine" || an.RateUnit == "goroutines" {
		of = "goroutine time"
	}
	return []apart{
		{label: "Scheduler latency (runnable)", section: "sched", name: "scheduler-latency", note: "runnable", of: of,
			diff: func(r *result.Result) *result.SchedRow { return r.Sched },
			top:  func(t *result.TopResult) *result.TopSched { return t.Sched }},
		{label: "Native or blocked (unknown)", section: "unknown", name: "native-or-blocked", note: "external samples no frame places", of: of,
			why:  "external samples (in native code or blocked in the OS) that no frame above places; ",
			diff: func(r *result.Result) *result.SchedRow { return r.Unknown },
			top:  func(t *result.TopResult) *result.TopSched { return t.Unknown }},
	}
}

// kindPhrase says what a bucket is in a profile of kind k.
func kindPhrase[K ~string](k K) string {
	switch k {
	case "cpu":
		return "CPU profile: buckets are CPU time spent in each kind of machinery"
	case "wall":
		return "wall-clock profile: buckets are time spent in each state"
	case "mutex":
		return "mutex profile: contention delay, recorded at the unlocker"
	case "block":
		return "block profile: off-CPU delay, split into lock contention and wait"
	case "goroutine":
		return "goroutine profile: goroutine counts per state"
	case "heap":
		return "heap profile: memory by allocation site; buckets are not time"
	case "trace":
		return "execution trace: time per state"
	}
	return "kind unknown: frame rules applied as for wall-clock time"
}

// topSummary is the head of a top listing (see diffSummary).
func topSummary(t *result.TopResult) []report.Block {
	short := ShortSources(t.Sources)[0]
	sources := SourceList(short, t.Sources)
	total := report.Amount(t.Total, t.Unit)
	if !units.Scaled(t.Unit) {
		total = report.Num(t.Total).WithUnit(t.Unit) // "10000 count": the unit says what was counted
	}
	facts := report.Cat(report.Int(t.Samples), " samples, total ", total)
	for _, ap := range apartRows(t.Analysis) {
		// Time kept apart from the buckets is not in the total: say how
		// much, so that a total of 2 ms beside 35 s of unknown native
		// time does not read as the whole recording.
		if ts := ap.top(t); ts != nil && ts.Value > 0 {
			facts = append(facts, report.Text(", plus "), report.Amount(ts.Value, t.Unit), report.Text(" "+strings.ToLower(ap.label)))
		}
	}
	if t.DurationNanos > 0 {
		facts = append(facts, report.Text(" over "), report.Amount(float64(t.DurationNanos), "nanoseconds"))
	}
	head := topHeadline(t)
	return []report.Block{
		report.Heading{Level: 3, Only: report.Markdown, Line: report.Cat("profdiff top: ", sources)},
		report.Para{Only: report.Markdown, Lines: []report.Line{head}},
		report.Para{Only: report.Markdown, Lines: []report.Line{report.Cat("Sample type ", report.Code(t.SampleType), ", ", kindPhrase(t.Kind),
			". ", facts, ". ", attribution(t.Analysis), ".")}},
		report.Para{Only: report.Terminal, Lines: []report.Line{
			report.Cat("profile: ", sources, " (", facts, ")"),
			report.Cat("sample type ", t.SampleType, "; ", kindPhrase(t.Kind)),
			report.Cat(strings.ToLower(attribution(t.Analysis)[:1]), attribution(t.Analysis)[1:]),
			head,
		}},
	}
}

// topHeadline is diffHeadline for one side.
func topHeadline(t *result.TopResult) report.Line {
	m := meaning(t.Analysis)
	if m == result.MeaningDelay || m == result.MeaningMemory {
		rows := make([]result.BucketRow, len(t.Buckets))
		for i, b := range t.Buckets {
			rows[i] = result.BucketRow{Bucket: b.Bucket, Base: b.Share}
		}
		l := report.Cat(report.Text(totalTitle(t.Analysis, t.Unit, rows)+": ").Bold(), report.Amount(t.Total, t.Unit).Bold())
		return append(l, rate(t.TotalRate, t.RateUnit)...)
	}
	var rates []*float64
	for _, b := range t.Buckets {
		if b.Bucket != rules.CPU {
			rates = append(rates, b.Rate)
		}
	}
	l := report.Cat(report.Text(syncTitle(m)+": ").Bold(), report.Share(t.SyncShare()).Places(1).Bold())
	return append(l, rate(sumRates(rates), t.RateUnit)...)
}

// rate is " · rate", or nothing when it is unknown.
func rate(r *float64, unit string) report.Line {
	if r == nil || unit == "" {
		return nil
	}
	return report.Cat(" · ", report.Amount(*r, unit))
}
