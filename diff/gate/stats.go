package gate

import (
	"errors"
	"math"
	"sort"

	"github.com/aclements/go-moremath/stats"
)

// MinProfiles is the fewest profiles per side for which the gate runs a
// significance test; with fewer it compares the merged sides only.
const MinProfiles = 3

// GrowthP is the p-value of a one-sided Mann–Whitney U test of "new tends to
// be larger than base" (each value one profile's share), against the null
// hypothesis that both come from one distribution. It is the test benchstat
// runs (golang.org/x/perf/benchmath wraps the same go-moremath function),
// read one-sided: a gate only fails on growth, so a shrinking share is no
// evidence against the null, and all of alpha goes to the direction that can
// fail the build. The exact U distribution is used for these sample sizes
// (up to 50 per side, 25 with ties).
//
// Samples that are all equal (a bucket that is 0 in every profile) give 1.
func GrowthP(base, new []float64) (float64, error) {
	r, err := stats.MannWhitneyUTest(base, new, stats.LocationLess)
	if errors.Is(err, stats.ErrSamplesEqual) {
		return 1, nil
	}
	if err != nil {
		return 1, err
	}
	return math.Min(1, r.P), nil
}

// MinP is the smallest p-value GrowthP can return for samples of n1 and n2
// values: every new value above every base value, probability 1/C(n1+n2, n1)
// under the null hypothesis (without ties).
func MinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return 1 / c
}

// ProfilesNeeded is the number of profiles per side (at least MinProfiles)
// for which the one-sided U test can reach alpha at all, i.e. the smallest n
// with MinP(n, n) <= alpha: 3 for 0.05, 4 for 0.025, 5 for 0.01.
func ProfilesNeeded(alpha float64) int {
	n := MinProfiles
	for ; n < 60 && MinP(n, n) > alpha; n++ {
	}
	return n
}

// Holm adjusts p-values for testing several checks at once
// (Holm–Bonferroni step-down): the smallest p is multiplied by k, the next
// by k-1, and so on, each adjusted value at least the one before and at most
// 1. Rejecting where the adjusted value is at most alpha keeps the chance
// that the gate fails on noise in any of the k checks at or below alpha,
// whatever the correlation between the checks (bucket shares sum to one, so
// they are correlated). It is uniformly more powerful than plain Bonferroni.
func Holm(ps []float64) []float64 {
	k := len(ps)
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ps[order[a]] < ps[order[b]] })
	adj := make([]float64, k)
	prev := 0.0
	for rank, i := range order {
		v := math.Min(1, float64(k-rank)*ps[i])
		v = math.Max(v, prev)
		adj[i], prev = v, v
	}
	return adj
}
