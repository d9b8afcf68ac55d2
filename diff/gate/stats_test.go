package gate

import (
	"math"
	"math/rand"
	"testing"
)

func TestMinPAndProfilesNeeded(t *testing.T) {
	for _, c := range []struct {
		n1, n2 int
		want   float64
	}{
		{3, 3, 1.0 / 20}, {4, 4, 1.0 / 70}, {5, 5, 1.0 / 252}, {3, 5, 1.0 / 56}, {1, 1, 0.5}, {0, 5, 1},
	} {
		if got := MinP(c.n1, c.n2); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("MinP(%d, %d) = %v, want %v", c.n1, c.n2, got, c.want)
		}
	}
	for alpha, want := range map[float64]int{0.05: 3, 0.025: 4, 0.01: 5, 0.05 / 7: 5, 0.001: 7, 0.5: 3} {
		if got := ProfilesNeeded(alpha); got != want {
			t.Errorf("ProfilesNeeded(%v) = %d, want %d", alpha, got, want)
		}
	}
}

func TestGrowthP(t *testing.T) {
	// Complete separation in the growth direction: the smallest p.
	p, err := GrowthP([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if err != nil || math.Abs(p-1.0/252) > 1e-12 {
		t.Errorf("separated: p = %v, %v; want 1/252", p, err)
	}
	// Shrinking is no evidence of growth.
	if p, _ := GrowthP([]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}); p < 0.99 {
		t.Errorf("shrinking: p = %v, want 1", p)
	}
	// All equal (a bucket that is 0 everywhere).
	if p, err := GrowthP([]float64{0, 0, 0}, []float64{0, 0, 0}); p != 1 || err != nil {
		t.Errorf("all equal: p = %v, %v", p, err)
	}
	// Ties are handled by the exact tie-corrected distribution.
	if p, err := GrowthP([]float64{1, 1, 2, 2, 3}, []float64{2, 3, 3, 4, 4}); err != nil || p <= 0 || p >= 0.1 {
		t.Errorf("ties: p = %v, %v", p, err)
	}
}

func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	if got := Holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm caps at 1: %v", got)
	}
}

// TestPowerNormal measures the power of the default test setting on its
// own: 5 vs 5 profiles, two checks (Holm: the first at alpha/2), one of
// which really shifted by k standard deviations of the per-profile share,
// with the thresholds at +0pp so only the statistics decide. These numbers
// are the ones in the package comment and the README.
func TestPowerNormal(t *testing.T) {
	const trials = 2000
	checks := mustChecks("lock-contention=+0pp", "sync=+0pp")
	want := map[float64][2]float64{ // shift in σ → [min, max] power
		0:   {0, 0.05},
		1:   {0.12, 0.30},
		1.5: {0.35, 0.55},
		2:   {0.60, 0.80},
		2.5: {0.80, 0.95},
		3:   {0.90, 1},
	}
	for _, n := range []int{5, 10} {
		for _, k := range []float64{0, 1, 1.5, 2, 2.5, 3} {
			power := normalPower(checks, n, k, trials)
			t.Logf("%d vs %d, shift %.1fσ: detected in %.1f%% of %d trials", n, n, k, 100*power, trials)
			if w, ok := want[k]; ok && n == 5 && (power < w[0] || power > w[1]) {
				t.Errorf("shift %.1fσ: power %.3f outside [%.2f, %.2f]", k, power, w[0], w[1])
			}
		}
	}
}

// normalPower is the fraction of trials in which the first of checks
// fails, n profiles per side, its per-profile shares normal with the new
// side shifted by k standard deviations (the other checks unshifted).
func normalPower(checks []Check, n int, k float64, trials int) float64 {
	rng := rand.New(rand.NewSource(42))
	hits := 0
	for range trials {
		obs := make([]Observation, 2)
		for i := range obs {
			shift := 0.0
			if i == 0 {
				shift = k
			}
			o := &obs[i]
			for range n {
				o.Base = append(o.Base, 10+rng.NormFloat64())
				o.New = append(o.New, 10+shift+rng.NormFloat64())
			}
			o.MergedBase, o.MergedNew = mean(o.Base)/100, mean(o.New)/100
		}
		d := Evaluate(checks, obs, DefaultAlpha)
		if d.Results[0].Verdict == Fail {
			hits++
		}
	}
	return float64(hits) / float64(trials)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
