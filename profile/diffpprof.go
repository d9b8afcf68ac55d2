package profile

import (
	"fmt"
	"maps"

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
// base in raw values. The inputs are not modified. It is a DiffBuilder fed
// the base profiles, then the new ones.
func DiffProfile(base []*pprofile.Profile, baseIdx []int, new []*pprofile.Profile, newIdx []int) (*pprofile.Profile, error) {
	if len(base) != len(baseIdx) || len(new) != len(newIdx) {
		return nil, fmt.Errorf("building diff profile: %d base and %d new profiles but %d and %d sample-type indexes", len(base), len(new), len(baseIdx), len(newIdx))
	}
	var b DiffBuilder
	for i, p := range base {
		if err := b.Add(p, baseIdx[i], true); err != nil {
			return nil, err
		}
	}
	for i, p := range new {
		if err := b.Add(p, newIdx[i], false); err != nil {
			return nil, err
		}
	}
	return b.Profile()
}

// DiffBuilder builds DiffProfile's diff one profile at a time, merging
// as it goes, so that a caller that lets each profile go after adding it
// holds the diff accumulated so far (the union of the stacks seen, one
// sample per stack and side) and a batch of profiles not yet merged into
// it, which is never more than the diff's own samples or minDiffBatch
// samples, whichever is more: memory does not grow with the number of
// profiles. (Merging each profile on its own would re-merge the whole diff
// every time; by batches, each sample is merged about twice.) The zero
// value is an empty builder.
type DiffBuilder struct {
	acc      *pprofile.Profile   // the diff so far; nil before the first merge
	pending  []*pprofile.Profile // reduced views, not yet merged
	nPending int                 // their samples
	first    *pprofile.ValueType // the first profile's sample type, which all must have
	period   *pprofile.ValueType // and its period, given to all
	periodN  int64
}

// minDiffBatch is the fewest samples a DiffBuilder holds back before it
// merges: small profiles are merged a few at a time. It is kept small
// because what is held back stays live through every collection.
const minDiffBatch = 10_000

// Add adds p, reduced to the sample type at idx, to the diff; a base
// profile's values are negated and its samples labelled pprof::base=true.
// p is not modified; the builder reads it until its batch is merged (at
// the latest by Profile), so p must not change meanwhile. The error (a
// sample type that differs from the first profile's, an index out of
// range) leaves the diff as it was.
func (b *DiffBuilder) Add(p *pprofile.Profile, idx int, base bool) error {
	if n := len(p.SampleType); idx < 0 || idx >= n {
		return fmt.Errorf("building diff profile: sample type index %d out of range (the profile has %d)", idx, n)
	}
	if st := p.SampleType[idx]; b.first != nil && (st.Type != b.first.Type || st.Unit != b.first.Unit) {
		return fmt.Errorf("building diff profile: incompatible sample types %s/%s and %s/%s", b.first.Type, b.first.Unit, st.Type, st.Unit)
	}
	r := b.reduce(p, idx, base)
	b.pending = append(b.pending, r)
	b.nPending += len(r.Sample)
	acc := 0
	if b.acc != nil {
		acc = len(b.acc.Sample)
	}
	if b.nPending >= max(acc, minDiffBatch) {
		return b.merge()
	}
	return nil
}

// merge merges the pending batch into the diff.
func (b *DiffBuilder) merge() error {
	if len(b.pending) == 0 {
		return nil
	}
	srcs := b.pending
	if b.acc != nil {
		srcs = append([]*pprofile.Profile{b.acc}, srcs...)
	}
	merged, err := pprofile.Merge(srcs)
	if err != nil {
		return fmt.Errorf("building diff profile: %v", err)
	}
	b.acc, b.pending, b.nPending = merged, nil, 0
	return nil
}

// Profile returns the diff of the profiles added, checked valid; it fails
// when none was added. Adding more afterwards does not change it.
func (b *DiffBuilder) Profile() (*pprofile.Profile, error) {
	if err := b.merge(); err != nil {
		return nil, err
	}
	if b.acc == nil {
		return nil, fmt.Errorf("building diff profile: no profiles")
	}
	if err := b.acc.CheckValid(); err != nil {
		return nil, fmt.Errorf("building diff profile: %v", err)
	}
	return b.acc, nil
}

// reduce is a view of p with one sample type, negated and labelled for a
// base profile. It shares p's locations, functions and mappings, which
// Merge only reads, and copies only the samples' headers; the first
// profile's sample type and period become the diff's.
func (b *DiffBuilder) reduce(p *pprofile.Profile, idx int, negate bool) *pprofile.Profile {
	st := p.SampleType[idx]
	r := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: st.Type, Unit: st.Unit}},
		Mapping:    p.Mapping, Location: p.Location, Function: p.Function,
		Comments: p.Comments, DocURL: p.DocURL,
		DropFrames: p.DropFrames, KeepFrames: p.KeepFrames,
		TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos,
		PeriodType: p.PeriodType, Period: p.Period,
		Sample: make([]*pprofile.Sample, len(p.Sample)),
	}
	for i, s := range p.Sample {
		v, label := s.Value[idx], s.Label
		if negate {
			v = -v
			label = maps.Clone(label)
			if label == nil {
				label = map[string][]string{}
			}
			label[BaseLabel] = []string{"true"}
		}
		r.Sample[i] = &pprofile.Sample{Location: s.Location, Value: []int64{v}, Label: label, NumLabel: s.NumLabel, NumUnit: s.NumUnit}
	}
	// Merge demands equal period types; profiles of one sample type from
	// different writers may disagree (folded stacks have none).
	if b.first == nil {
		b.first, b.period, b.periodN = r.SampleType[0], r.PeriodType, r.Period
	} else {
		r.PeriodType, r.Period = b.period, b.periodN
	}
	return r
}
