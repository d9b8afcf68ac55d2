package profile

import (
	"fmt"

	pprofile "github.com/google/pprof/profile"
)

// BaseLabel is the sample label pprof uses to mark the negated base samples
// of a diff profile (`go tool pprof -diff_base`), so that the diff can be
// read back and opened as one.
const BaseLabel = "pprof::base"

// DiffProfile builds a pprof diff profile the way `go tool pprof -diff_base`
// does: every base profile is reduced to the sample type at baseIdx[i],
// negated and labelled pprof::base=true, then merged with the new profiles
// reduced to newIdx[i]. `go tool pprof -top diff.pb.gz` then shows new minus
// base in raw values. The inputs are not modified.
func DiffProfile(base []*pprofile.Profile, baseIdx []int, new []*pprofile.Profile, newIdx []int) (*pprofile.Profile, error) {
	if len(base) != len(baseIdx) || len(new) != len(newIdx) {
		return nil, fmt.Errorf("building diff profile: %d base and %d new profiles but %d and %d sample-type indexes", len(base), len(new), len(baseIdx), len(newIdx))
	}
	if len(base)+len(new) == 0 {
		return nil, fmt.Errorf("building diff profile: no profiles")
	}
	profiles := append(append([]*pprofile.Profile(nil), base...), new...)
	for i, idx := range append(append([]int(nil), baseIdx...), newIdx...) {
		if n := len(profiles[i].SampleType); idx < 0 || idx >= n {
			return nil, fmt.Errorf("building diff profile: sample type index %d out of range (the profile has %d)", idx, n)
		}
	}
	var all []*pprofile.Profile
	var period *pprofile.ValueType
	var periodN int64
	reduce := func(p *pprofile.Profile, idx int, negate bool) *pprofile.Profile {
		c := p.Copy()
		st := c.SampleType[idx]
		c.SampleType = []*pprofile.ValueType{{Type: st.Type, Unit: st.Unit}}
		c.DefaultSampleType = ""
		for _, s := range c.Sample {
			s.Value = []int64{s.Value[idx]}
			if negate {
				s.Value[0] = -s.Value[0]
				if s.Label == nil {
					s.Label = map[string][]string{}
				}
				s.Label[BaseLabel] = []string{"true"}
			}
		}
		// Merge demands equal period types; profiles of one sample type
		// from different writers may disagree (folded stacks have none).
		if period == nil {
			period, periodN = c.PeriodType, c.Period
		} else {
			c.PeriodType, c.Period = period, periodN
		}
		return c
	}
	for i, p := range base {
		all = append(all, reduce(p, baseIdx[i], true))
	}
	for i, p := range new {
		all = append(all, reduce(p, newIdx[i], false))
	}
	merged, err := pprofile.Merge(all)
	if err != nil {
		return nil, fmt.Errorf("building diff profile: %v", err)
	}
	if err := merged.CheckValid(); err != nil {
		return nil, fmt.Errorf("building diff profile: %v", err)
	}
	return merged, nil
}
