package profile

import (
	"errors"
	"fmt"
	"math"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

// errDiffProfile is the error for a diff profile given as a profile.
var errDiffProfile = errors.New("this is a diff written by pprof or profdiff (its base samples are labelled " + BaseLabel + "); pass the two original profiles")

// checkValues is the check every loaded profile passes, whatever its
// format, so that no share, total or sample count computed from it can
// come out negative or wrap:
//   - a diff profile (samples labelled pprof::base, as `go tool pprof
//     -diff_base -proto` and DiffProfile write) is refused with what to
//     pass instead (ErrUnsupported);
//   - a negative value is an error naming the sample and its type
//     (ErrCorrupt), except in the inuse_* types of a delta heap profile
//     (Go's /debug/pprof/heap?seconds=N subtracts two heap profiles, and
//     memory in use may shrink): those types are removed, with a warning,
//     and the alloc_* types are read;
//   - a sample type whose values sum past the int64 maximum is an error
//     (ErrCorrupt), so every sum of any subset of a profile's values fits
//     in an int64.
//
// sums are the totals of the sample types kept, by index (checkTiming
// reads them).
func checkValues(p *pprofile.Profile) (sums []int64, warnings []string, err error) {
	for _, s := range p.Sample {
		if len(s.Label[BaseLabel]) > 0 {
			return nil, nil, mark(ErrUnsupported, errDiffProfile)
		}
	}
	type column struct {
		sum      int64
		negative int // samples with a negative value
		first    int // the first of them (index)
	}
	cols := make([]column, len(p.SampleType))
	for i, s := range p.Sample {
		for t, v := range s.Value[:min(len(s.Value), len(cols))] { // CheckValid refuses longer ones
			c := &cols[t]
			switch {
			case v < 0:
				if c.negative == 0 {
					c.first = i
				}
				c.negative++
			case c.sum > math.MaxInt64-v:
				return nil, nil, mark(ErrCorrupt, fmt.Errorf("sample %d of %d: the %s values sum past the int64 maximum (%d)", i+1, len(p.Sample), typeName(p.SampleType[t]), int64(math.MaxInt64)))
			default:
				c.sum += v
			}
		}
	}
	var drop []int // the inuse_* types of a delta heap profile
	clean := 0     // types with no negative value
	for t, c := range cols {
		switch {
		case c.negative == 0:
			clean++
		case strings.HasPrefix(p.SampleType[t].Type, "inuse_"):
			drop = append(drop, t)
		default:
			return nil, nil, negativeError(p, t, c.first)
		}
	}
	for _, c := range cols {
		sums = append(sums, c.sum)
	}
	if len(drop) == 0 {
		return sums, nil, nil
	}
	if clean == 0 {
		return nil, nil, negativeError(p, drop[0], cols[drop[0]].first)
	}
	var names []string
	for _, t := range drop {
		names = append(names, p.SampleType[t].Type)
	}
	removeSampleTypes(p, drop)
	gone := map[int]bool{}
	for _, t := range drop {
		gone[t] = true
	}
	sums = filterIndexed(sums, func(t int) bool { return !gone[t] })
	return sums, []string{fmt.Sprintf("a delta heap profile (/debug/pprof/heap?seconds=N): %s hold differences, some negative, and are left out", strings.Join(names, " and "))}, nil
}

func negativeError(p *pprofile.Profile, t, sample int) error {
	return mark(ErrCorrupt, fmt.Errorf("sample %d of %d has a negative %s value (%d); only a diff profile has negative values", sample+1, len(p.Sample), typeName(p.SampleType[t]), p.Sample[sample].Value[t]))
}

// removeSampleTypes removes the sample types at the indexes drop (in
// increasing order) and their values.
func removeSampleTypes(p *pprofile.Profile, drop []int) {
	gone := make([]bool, len(p.SampleType))
	for _, t := range drop {
		gone[t] = true
		if p.SampleType[t].Type == p.DefaultSampleType {
			p.DefaultSampleType = ""
		}
	}
	keep := func(t int) bool { return !gone[t] }
	p.SampleType = filterIndexed(p.SampleType, keep)
	for _, s := range p.Sample {
		s.Value = filterIndexed(s.Value, keep)
	}
}

// filterIndexed keeps in place the elements of s whose index passes keep.
func filterIndexed[T any](s []T, keep func(int) bool) []T {
	out := s[:0]
	for i, v := range s {
		if keep(i) {
			out = append(out, v)
		}
	}
	return out
}

// typeName writes a sample type the way pprof does: type/unit.
func typeName(vt *pprofile.ValueType) string {
	if vt == nil {
		return "?"
	}
	return vt.Type + "/" + vt.Unit
}
