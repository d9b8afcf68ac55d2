package present

import (
	"strings"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// A heap profile's buckets are not time: a bucket holds the memory its
// machinery allocated (cpu: running code that is none of the others). So
// a memory verdict speaks of bytes or objects and of that machinery,
// never of a bucket's share growing: "In-use memory allocated by running
// code (`cpu`) grew from 46.2 MiB to 136 MiB (3x)." The amounts say the
// measure (values, or means per profile), so the ratio needs no word for
// it.

// allocatedIn is how a memory verdict names the machinery of a bucket,
// after "allocated".
var allocatedIn = [rules.NumBuckets]string{
	rules.CPU:            "by running code",
	rules.Wait:           "in wait machinery (channels, conditions, sleep)",
	rules.LockContention: "in lock machinery",
	rules.GC:             "by the garbage collector",
	rules.IO:             "in I/O machinery (network, files)",
	rules.Syscall:        "in system calls",
}

// memoryWhat is what a heap sample type counts, as the subject of a
// memory verdict: "in-use memory" (inuse_space), "in-use objects"
// (inuse_objects, JFR live objects), "memory" (alloc_space, JFR and
// async-profiler allocations, speedscope bytes), "objects"
// (alloc_objects); another unit's type is named as it is.
func memoryWhat(sampleType string) string {
	typ, unit, _ := strings.Cut(sampleType, "/")
	noun := typ
	switch unit {
	case "bytes":
		noun = "memory"
	case "count":
		noun = "objects"
	}
	if strings.HasPrefix(typ, "inuse") || strings.HasPrefix(typ, "live") {
		return "in-use " + noun
	}
	return noun
}

// memoryUnit is the unit a memory amount is shown in: objects for counts.
func memoryUnit(unit string) string {
	if unit == "count" || unit == "" {
		return "objects"
	}
	return unit
}

// memoryAmounts are a change's two sides in the verdict's measure: values,
// or each side's mean per profile (rates of a snapshot) with " per
// profile".
func memoryAmounts(measure result.Normalize, s *result.VerdictSize) (from, to report.Cell, per string) {
	if measure == result.NormalizeRate && s.BaseRate != nil && s.NewRate != nil {
		u := memoryUnit(s.RateUnit)
		return report.Amount(*s.BaseRate, u), report.Amount(*s.NewRate, u), " per profile"
	}
	u := memoryUnit(s.Unit)
	return report.Amount(s.BaseValue, u), report.Amount(s.NewValue, u), ""
}

// memoryPrincipal is the principal change of a heap diff: "In-use memory
// allocated by running code (`cpu`) grew from 46.2 MiB to 136 MiB (3x)."
func memoryPrincipal(v *result.Verdict, sampleType string) report.Line {
	p := v.Principal
	from, to, per := memoryAmounts(v.Measure, &p.VerdictSize)
	what := memoryWhat(sampleType)
	l := report.Cat(strings.ToUpper(what[:1])+what[1:]+" allocated "+allocatedIn[p.Bucket]+" (", report.Code(p.Bucket.String()), ")"+verb(v)+" from ", from, " to ", to, per)
	if p.Note != "" {
		l = append(l, report.Text(" ("+p.Note+")"))
	}
	return append(l, report.Text("."))
}

// memoryAlso is one further change of a heap diff, after "Also grew: ":
// "allocated in lock machinery (`lock-contention`) 0 B → 512 KiB (new)".
func memoryAlso(measure result.Normalize, c *result.VerdictChange) report.Line {
	from, to, per := memoryAmounts(measure, &c.VerdictSize)
	l := report.Cat("allocated "+allocatedIn[c.Bucket]+" (", report.Code(c.Bucket.String()), ") ", from, " → ", to, per)
	if c.Note != "" {
		l = append(l, report.Text(" ("+c.Note+")"))
	}
	return l
}

// inObjects is v with its leaders' counts in objects, so that "Led by
// sync.runtime_SemacquireMutex (+5461 objects)" says what it counts.
func inObjects(v *result.Verdict) *result.Verdict {
	out := *v
	out.Leaders = make([]result.VerdictFrame, len(v.Leaders))
	for i, f := range v.Leaders {
		f.Unit, f.RateUnit = memoryUnit(f.Unit), memoryUnit(f.RateUnit)
		out.Leaders[i] = f
	}
	return &out
}
