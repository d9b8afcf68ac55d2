package workloads

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// This file holds the models behind `profdiff workload json --project N`:
// a lock's utilization bound and the Universal Scalability Law. They are
// pure functions of numbers, tested on synthetic inputs with known
// answers; projectmeasure.go reads their inputs from a sweep's runs and
// projectreport.go renders the projection.

// LockBound is the most requests per second a set of locks lets through:
// each acquisition holds its lock for holdS seconds, a request takes
// acqPerRequest acquisitions, and the busiest lock sees busiestShare of
// all acquisitions (1 for a single lock, about 1/shards when requests
// spread evenly). The busiest lock is busy holdS × acqPerRequest ×
// busiestShare seconds per request, so it saturates (utilization 1) at
// the reciprocal: throughput ≤ 1 / (hold × acquisitions per request ×
// busiest share). It is +Inf when any factor is 0.
func LockBound(holdS, acqPerRequest, busiestShare float64) float64 {
	d := holdS * acqPerRequest * busiestShare
	if d <= 0 {
		return math.Inf(1)
	}
	return 1 / d
}

// USLFit is the Universal Scalability Law fitted to measured throughput:
// X(N) = λN / (1 + σ(N−1) + κN(N−1)).
type USLFit struct {
	Lambda float64 `json:"lambda"` // requests/s of one core without contention
	Sigma  float64 `json:"sigma"`  // contention: the serialized fraction
	Kappa  float64 `json:"kappa"`  // coherency: the pairwise crosstalk cost
	// PeakCores is N* = sqrt((1−σ)/κ), where throughput peaks and then
	// falls; 0 when κ is 0 (no peak: X approaches λ/σ, or grows
	// linearly when σ is 0 too).
	PeakCores float64 `json:"peak_cores,omitempty"`
	Points    int     `json:"points"` // the measured points fitted
	// RMSRelError is the fit's root-mean-square error relative to the
	// measured throughput.
	RMSRelError float64 `json:"rms_rel_error"`
}

// At is the fitted throughput at n cores.
func (u *USLFit) At(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// USLPoint is one measured point: throughput x at n cores.
type USLPoint struct {
	N int
	X float64
}

// MinUSLPoints is the fewest points (distinct core counts) a USL fit
// takes: it has three coefficients.
const MinUSLPoints = 3

// FitUSL fits the USL by least squares on its linearised form: N/X = a +
// b(N−1) + cN(N−1), with a = 1/λ, b = σ/λ, c = κ/λ, every coefficient
// non-negative (an exact non-negative least squares over the seven sets
// of free coefficients; a must be positive). It needs MinUSLPoints points
// at distinct core counts with positive throughput, and says why not.
func FitUSL(points []USLPoint) (*USLFit, error) {
	seen := map[int]bool{}
	var ps []USLPoint
	for _, p := range points {
		if p.N < 1 || !(p.X > 0) || math.IsInf(p.X, 0) || seen[p.N] {
			continue
		}
		seen[p.N] = true
		ps = append(ps, p)
	}
	if len(ps) < MinUSLPoints {
		return nil, fmt.Errorf("%d successful point(s) at distinct core counts; the USL's three coefficients need at least %d", len(ps), MinUSLPoints)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].N < ps[j].N })
	rows := make([][3]float64, len(ps))
	ys := make([]float64, len(ps))
	for i, p := range ps {
		n := float64(p.N)
		rows[i] = [3]float64{1, n - 1, n * (n - 1)}
		ys[i] = n / p.X
	}
	coef, ok := nnls3(rows, ys)
	if !ok || coef[0] <= 0 {
		return nil, errors.New("no fit with a positive single-core throughput")
	}
	u := &USLFit{Lambda: 1 / coef[0], Sigma: coef[1] / coef[0], Kappa: coef[2] / coef[0], Points: len(ps)}
	if u.Kappa > 0 && u.Sigma < 1 {
		u.PeakCores = math.Sqrt((1 - u.Sigma) / u.Kappa)
	}
	var sq float64
	for _, p := range ps {
		r := (u.At(float64(p.N)) - p.X) / p.X
		sq += r * r
	}
	u.RMSRelError = math.Sqrt(sq / float64(len(ps)))
	return u, nil
}

// nnls3 minimises |A·c − y|² over c ≥ 0 for three columns: it solves the
// unconstrained problem on every non-empty subset of the columns (the
// others held at 0), keeps the feasible solutions and returns the one of
// least residual. Exact, and cheap for three columns.
func nnls3(rows [][3]float64, ys []float64) ([3]float64, bool) {
	var best [3]float64
	bestSSE, found := math.Inf(1), false
	for mask := 1; mask < 8; mask++ {
		var cols []int
		for j := 0; j < 3; j++ {
			if mask&(1<<j) != 0 {
				cols = append(cols, j)
			}
		}
		c, ok := leastSquares(rows, ys, cols)
		if !ok {
			continue
		}
		feasible := true
		for _, v := range c {
			feasible = feasible && v >= 0
		}
		if !feasible {
			continue
		}
		if sse := residual(rows, ys, c); sse < bestSSE*(1-1e-12) {
			best, bestSSE, found = c, sse, true
		}
	}
	return best, found
}

// leastSquares solves the normal equations of the columns cols of rows
// (Gaussian elimination with partial pivoting); the other coefficients
// are 0. It fails when those columns are linearly dependent.
func leastSquares(rows [][3]float64, ys []float64, cols []int) ([3]float64, bool) {
	k := len(cols)
	m := make([][]float64, k)
	for i := range m {
		m[i] = make([]float64, k+1)
		for _, r := range rows {
			for j := range k {
				m[i][j] += r[cols[i]] * r[cols[j]]
			}
		}
		for t, r := range rows {
			m[i][k] += r[cols[i]] * ys[t]
		}
	}
	for p := range k {
		piv := p
		for i := p + 1; i < k; i++ {
			if math.Abs(m[i][p]) > math.Abs(m[piv][p]) {
				piv = i
			}
		}
		if math.Abs(m[piv][p]) < 1e-300 {
			return [3]float64{}, false
		}
		m[p], m[piv] = m[piv], m[p]
		for i := range k {
			if i == p {
				continue
			}
			f := m[i][p] / m[p][p]
			for j := p; j <= k; j++ {
				m[i][j] -= f * m[p][j]
			}
		}
	}
	var c [3]float64
	for i, col := range cols {
		c[col] = m[i][k] / m[i][i]
		if math.IsNaN(c[col]) || math.IsInf(c[col], 0) {
			return [3]float64{}, false
		}
	}
	return c, true
}

func residual(rows [][3]float64, ys []float64, c [3]float64) float64 {
	var sse float64
	for i, r := range rows {
		d := r[0]*c[0] + r[1]*c[1] + r[2]*c[2] - ys[i]
		sse += d * d
	}
	return sse
}
