package gate

import (
	"fmt"
)

// Mode is how the checks were decided.
type Mode string

const (
	// ModeUTest: each profile's share is one observation; a check fails when
	// the merged growth exceeds its threshold and a one-sided Mann–Whitney U
	// test, Holm-adjusted over the checks, is significant at alpha.
	ModeUTest Mode = "u-test"
	// ModeMerged: too few profiles for the test to ever reach alpha; a check
	// fails when the merged growth exceeds its threshold.
	ModeMerged Mode = "merged"
)

// Verdict is the outcome of one check or of the whole gate.
type Verdict string

const (
	Pass  Verdict = "pass"
	Noise Verdict = "noise" // grew past the threshold, but not significantly: passes
	Fail  Verdict = "fail"
)

// Observation is what one check measured: a value per profile on each
// side, and the value of each merged side. Values are shares (fractions
// 0..1) unless Measure says otherwise (then in Unit).
type Observation struct {
	Base, New             []float64
	MergedBase, MergedNew float64
	Measure               Measure // "" means MeasureShare
	Unit                  string  // of absolute values
}

// CheckResult is the decision of one check. Base and New are the merged
// sides' shares (fractions 0..1), or with an absolute Measure their values
// in Unit (per second, or per run); Delta = New − Base is the merged
// growth, the number the threshold is compared with.
type CheckResult struct {
	Check        string    `json:"check"` // Check.Label()
	Target       Target    `json:"target"`
	Name         string    `json:"name"` // Check.Name(): bucket, "sync" or the regexp
	Threshold    Limit     `json:"threshold"`
	Measure      Measure   `json:"measure"`
	Unit         string    `json:"unit,omitempty"` // of Base, New, Delta and the profiles' values when Measure is not share
	Base         float64   `json:"base"`
	New          float64   `json:"new"`
	Delta        float64   `json:"delta"`
	Relative     *float64  `json:"relative,omitempty"` // Delta / Base; absent when Base is 0
	P            *float64  `json:"p"`                  // Holm-adjusted one-sided p; null in merged mode
	PRaw         *float64  `json:"p_raw,omitempty"`    // the unadjusted p
	Exceeded     bool      `json:"exceeded"`           // Delta is more growth than Threshold allows
	Significant  bool      `json:"significant"`        // P <= alpha (always false in merged mode)
	Verdict      Verdict   `json:"verdict"`
	BaseProfiles []float64 `json:"base_profiles"` // the observations, in source order
	NewProfiles  []float64 `json:"new_profiles"`
	Behind       *Behind   `json:"behind,omitempty"` // for failed checks: the frames that grew
}

// Decision is the outcome of Evaluate.
type Decision struct {
	Mode     Mode
	Alpha    float64
	Results  []CheckResult
	Failed   int
	Warnings []string
}

// DefaultAlpha is the significance level when none is given, as benchstat's.
const DefaultAlpha = 0.05

// Evaluate decides each check from its observations (obs[i] for
// checks[i]). Every check must have the same number of profiles per side.
//
// With at least MinProfiles profiles per side, and enough of them that the
// smallest achievable Holm-adjusted p-value reaches alpha, a check fails
// only when its merged growth exceeds the threshold AND the one-sided U test
// of the per-profile shares is significant after Holm's adjustment for the
// number of checks. Otherwise the merged sides are compared against the
// thresholds alone, and a warning says how many profiles the test needs.
func Evaluate(checks []Check, obs []Observation, alpha float64) Decision {
	d := Decision{Mode: ModeMerged, Alpha: alpha, Results: make([]CheckResult, len(checks))}
	if len(checks) == 0 {
		return d
	}
	// Checks of shares leave out profiles without samples, checks of
	// values count them as zero: the fewest observations decide the mode.
	n1, n2 := len(obs[0].Base), len(obs[0].New)
	for _, o := range obs[1:] {
		n1, n2 = min(n1, len(o.Base)), min(n2, len(o.New))
	}
	k := len(checks)
	// Holm compares the smallest p with alpha/k; if even a complete
	// separation cannot get there, no check could ever fail on the test.
	first := alpha / float64(k)
	need := ProfilesNeeded(first)
	switch {
	case n1 < MinProfiles || n2 < MinProfiles:
		d.Warnings = append(d.Warnings, fmt.Sprintf(
			"%d base and %d new profile(s): too few for a significance test, so the merged sides are compared with the thresholds alone and noise can fail the gate; capture at least %d profiles per side (one per run) for a one-sided Mann–Whitney U test at alpha %g over %d check(s)",
			n1, n2, need, alpha, k))
	case MinP(n1, n2) > first:
		d.Warnings = append(d.Warnings, fmt.Sprintf(
			"with %d base and %d new profiles the smallest achievable p-value is %.3g, above %.3g (alpha %g shared by %d checks, Holm), so no check could ever be significant; comparing the merged sides with the thresholds alone instead; capture at least %d profiles per side, or use fewer checks or a larger alpha",
			n1, n2, MinP(n1, n2), first, alpha, k, need))
	default:
		d.Mode = ModeUTest
	}

	raw := make([]float64, k)
	for i, c := range checks {
		o := obs[i]
		r := &d.Results[i]
		m := o.Measure
		if m == "" {
			m = MeasureShare
		}
		*r = CheckResult{
			Check: c.Label(), Target: c.Target, Name: c.Name(), Threshold: c.Max, Measure: m, Unit: o.Unit,
			Base: o.MergedBase, New: o.MergedNew, Delta: o.MergedNew - o.MergedBase,
			BaseProfiles: append([]float64{}, o.Base...), NewProfiles: append([]float64{}, o.New...),
		}
		if o.MergedBase > 0 {
			rel := r.Delta / o.MergedBase
			r.Relative = &rel
		}
		r.Exceeded = c.Max.Exceeded(o.MergedBase, o.MergedNew)
		if d.Mode == ModeUTest {
			p, err := GrowthP(o.Base, o.New)
			if err != nil {
				d.Warnings = append(d.Warnings, fmt.Sprintf("%s: U test failed (%v); counted as not significant", c.Label(), err))
			}
			raw[i] = p
		}
	}
	if d.Mode == ModeUTest {
		adj := Holm(raw)
		for i := range d.Results {
			r := &d.Results[i]
			p, pr := adj[i], raw[i]
			r.P, r.PRaw = &p, &pr
			r.Significant = p <= alpha
		}
	}
	for i := range d.Results {
		r := &d.Results[i]
		switch {
		case !r.Exceeded:
			r.Verdict = Pass
		case d.Mode == ModeMerged || r.Significant:
			r.Verdict = Fail
			d.Failed++
		default:
			r.Verdict = Noise
		}
	}
	return d
}
