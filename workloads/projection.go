package workloads

import (
	"fmt"
	"math"
	"math/bits"
)

// ProjectionLabel marks every projection, in every format: it is a model
// fitted to what this machine measured, not a measurement.
const ProjectionLabel = "PROJECTION (a model fitted to this machine's runs, not a measurement)"

// LockMeasure is what a run measured of the server's locks, from the
// counters the server keeps (GET /stats, see jsonserver.LockStats) over
// its measured window.
type LockMeasure struct {
	FromCores int `json:"from_cores"` // the run it comes from
	Shards    int `json:"shards"`
	// ShardsPerP is the server's sharding rule (0: a fixed set of locks).
	ShardsPerP int     `json:"shards_per_p,omitempty"`
	HoldUS     float64 `json:"hold_us"`     // mean hold of the timed holds
	TimedHolds uint64  `json:"timed_holds"` // how many were timed
	// AcquisitionsPerRequest and BusiestShare: acquisitions of any lock
	// per request, and the busiest lock's share of them.
	AcquisitionsPerRequest float64 `json:"acquisitions_per_request"`
	BusiestShare           float64 `json:"busiest_share"`
	Requests               uint64  `json:"requests"` // requests the server dispatched in the window
	// CrossChecks are the CPU per request the run's profiles charge to
	// the critical sections (inside the registry's locked methods,
	// outside Lock and Unlock), to compare with hold × acquisitions.
	CrossChecks []CrossCheck `json:"cross_checks,omitempty"`
}

// CrossCheck is one profile's CPU per request inside the critical
// sections, in µs.
type CrossCheck struct {
	Source       string  `json:"source"`
	USPerRequest float64 `json:"us_per_request"`
}

// shardsAt is the number of locks at n cores: the measured set, or more
// by the server's sharding rule.
func (l *LockMeasure) shardsAt(n int) int {
	s := l.Shards
	if l.ShardsPerP > 0 {
		want := l.ShardsPerP * n
		s = max(s, 1<<bits.Len(uint(want-1)))
	}
	return max(s, 1)
}

// BoundAt is the lock's utilization bound at n cores (LockBound): the
// busiest lock's share shrinks in proportion as the server adds shards.
func (l *LockMeasure) BoundAt(n int) float64 {
	share := l.BusiestShare * float64(max(l.Shards, 1)) / float64(l.shardsAt(n))
	return LockBound(l.HoldUS*1e-6, l.AcquisitionsPerRequest, share)
}

// ProjectionInput is what a projection is made from.
type ProjectionInput struct {
	ToCores int
	// Points are the measured requests/s (2xx only) of the runs that
	// succeeded on as many CPUs as they had cores.
	Points []USLPoint
	// DemandUS is the server's CPU per request at DemandCores, the
	// smallest core count measured.
	DemandUS    float64
	DemandCores int
	// Lock is nil when the server has no lock to measure (baseline).
	Lock *LockMeasure
	// LockWhyNot says why a lock the server has was not measured.
	LockWhyNot string
}

// Projection is where throughput would peak on up to ToCores cores, and
// why, by the models of project.go.
type Projection struct {
	Label   string `json:"label"` // ProjectionLabel
	ToCores int    `json:"to_cores"`
	// DemandUS at DemandCores: the CPU-bound line is N / DemandUS.
	DemandUS    float64      `json:"cpu_per_request_us"`
	DemandCores int          `json:"cpu_per_request_from_cores"`
	Lock        *LockMeasure `json:"lock,omitempty"`
	// LockBoundRPS is the bound at ToCores (0 when there is no lock).
	LockBoundRPS float64 `json:"lock_bound_requests_per_s,omitempty"`
	LockWhyNot   string  `json:"lock_not_measured,omitempty"`
	USL          *USLFit `json:"usl,omitempty"`
	USLWhyNot    string  `json:"usl_not_fitted,omitempty"`
	// PeakCores is the projected peak's core count, 0 when throughput
	// still grows at ToCores; Cause is what bounds it: "lock",
	// "usl-coherency" or "none".
	PeakCores        int              `json:"peak_cores"`
	PeakRequestsPerS float64          `json:"peak_requests_per_s"`
	Cause            string           `json:"cause"`
	Summary          string           `json:"summary"`
	Curve            []ProjectedPoint `json:"curve"`
	Assumptions      []string         `json:"assumptions"`
}

// ProjectedPoint is the projection at one core count: the CPU-bound line,
// the USL's curve, the lock's bound (0: none or no lock) and the
// projection, the least of those that apply.
type ProjectedPoint struct {
	Cores        int     `json:"cores"`
	CPUBoundRPS  float64 `json:"cpu_bound_requests_per_s,omitempty"`
	USLRPS       float64 `json:"usl_requests_per_s,omitempty"`
	LockBoundRPS float64 `json:"lock_bound_requests_per_s,omitempty"`
	ProjectedRPS float64 `json:"projected_requests_per_s"`
}

// Project works out the projection: the base curve is the USL where it
// could be fitted, else the CPU-bound line; the lock's bound caps it. The
// peak is the first core count at which the base curve reaches the
// bound (cause lock), or the USL's N* (cause usl-coherency), whichever
// comes first below ToCores; else none.
func Project(in ProjectionInput) *Projection {
	p := &Projection{Label: ProjectionLabel, ToCores: in.ToCores, DemandUS: in.DemandUS, DemandCores: in.DemandCores, Lock: in.Lock, LockWhyNot: in.LockWhyNot, Cause: "none"}
	usl, err := FitUSL(in.Points)
	if err != nil {
		p.USLWhyNot = err.Error()
	} else {
		p.USL = usl
	}
	base := func(n int) float64 {
		if p.USL != nil {
			return p.USL.At(float64(n))
		}
		if in.DemandUS > 0 {
			return float64(n) * 1e6 / in.DemandUS
		}
		return math.Inf(1)
	}
	bound := func(n int) float64 {
		if in.Lock == nil {
			return math.Inf(1)
		}
		return in.Lock.BoundAt(n)
	}
	if b := bound(in.ToCores); !math.IsInf(b, 1) {
		p.LockBoundRPS = b
	}
	for n := 1; n <= in.ToCores; n++ {
		if b, x := bound(n), base(n); !math.IsInf(x, 1) && x >= b {
			p.PeakCores, p.PeakRequestsPerS, p.Cause = n, b, "lock"
			break
		}
	}
	if u := p.USL; u != nil && u.PeakCores > 0 && u.PeakCores <= float64(in.ToCores) {
		if n := int(math.Round(u.PeakCores)); p.Cause != "lock" || n < p.PeakCores {
			p.PeakCores, p.PeakRequestsPerS, p.Cause = max(n, 1), math.Min(u.At(float64(max(n, 1))), bound(max(n, 1))), "usl-coherency"
		}
	}
	p.Curve = curve(in.ToCores, p.PeakCores, func(n int) ProjectedPoint {
		pt := ProjectedPoint{Cores: n}
		if in.DemandUS > 0 {
			pt.CPUBoundRPS = float64(n) * 1e6 / in.DemandUS
		}
		if p.USL != nil {
			pt.USLRPS = p.USL.At(float64(n))
		}
		b := bound(n)
		if !math.IsInf(b, 1) {
			pt.LockBoundRPS = b
		}
		if v := math.Min(base(n), b); !math.IsInf(v, 1) {
			pt.ProjectedRPS = v
		}
		return pt
	})
	p.Summary = p.summary()
	p.Assumptions = p.assumptions()
	return p
}

// curve evaluates at at 1, 2, 4, … up to to, plus to and the peak.
func curve(to, peak int, at func(int) ProjectedPoint) []ProjectedPoint {
	var ns []int
	for n := 1; n < to; n *= 2 {
		ns = append(ns, n)
	}
	ns = append(ns, to)
	if peak > 0 {
		i := 0
		for i < len(ns) && ns[i] < peak {
			i++
		}
		if i == len(ns) || ns[i] != peak {
			ns = append(ns[:i], append([]int{peak}, ns[i:]...)...)
		}
	}
	out := make([]ProjectedPoint, len(ns))
	for i, n := range ns {
		out[i] = at(n)
	}
	return out
}

// summary is the projection's sentence.
func (p *Projection) summary() string {
	switch p.Cause {
	case "lock":
		l := p.Lock
		return fmt.Sprintf("throughput stops growing at about %d cores, %.0f requests/s: the lock saturates (hold %.2f µs × %.2f acquisitions per request, busiest of %d lock(s) %.0f%% of them there)",
			p.PeakCores, p.PeakRequestsPerS, l.HoldUS, l.AcquisitionsPerRequest, l.shardsAt(p.PeakCores), 100*l.BusiestShare*float64(max(l.Shards, 1))/float64(l.shardsAt(p.PeakCores)))
	case "usl-coherency":
		return fmt.Sprintf("throughput peaks at about %d cores, %.0f requests/s, and falls beyond: the USL's coherency term (σ %.4f, κ %.6f, N* %.1f)",
			p.PeakCores, p.PeakRequestsPerS, p.USL.Sigma, p.USL.Kappa, p.USL.PeakCores)
	}
	last := p.Curve[len(p.Curve)-1]
	s := fmt.Sprintf("no peak below %d cores: throughput still grows there (%.0f requests/s projected)", p.ToCores, last.ProjectedRPS)
	if p.LockBoundRPS > 0 {
		s += fmt.Sprintf("; the lock bound there is %.0f requests/s", p.LockBoundRPS)
	}
	return s
}

// assumptions are the model's, in the words the report prints.
func (p *Projection) assumptions() []string {
	var a []string
	if p.USL != nil {
		a = append(a, fmt.Sprintf("The curve is the Universal Scalability Law fitted to %d measured points (requests/s, 2xx only; RMS error %.1f%%), extrapolated.", p.USL.Points, 100*p.USL.RMSRelError))
	} else if p.DemandUS > 0 {
		a = append(a, fmt.Sprintf("Without a USL fit the curve is CPU-bound and linear: each core serves 1 / %.1f µs requests/s, the server's CPU per request measured at %d core(s), with no other limit (network, memory bandwidth, load generator).", p.DemandUS, p.DemandCores))
	}
	if l := p.Lock; l != nil {
		a = append(a, fmt.Sprintf("The lock bound is 1 / (hold × acquisitions per request × busiest lock's share), with the hold time (%.2f µs, the mean of %d timed holds) and acquisitions per request (%.2f) the server counted at %d core(s); on more cores holds lengthen with cache-line traffic, so the bound is optimistic.",
			l.HoldUS, l.TimedHolds, l.AcquisitionsPerRequest, l.FromCores))
		if l.ShardsPerP > 0 {
			a = append(a, fmt.Sprintf("The server makes %d shards per core (%d measured), requests spread over them evenly by id: the bound rises with the cores.", l.ShardsPerP, l.Shards))
		}
		a = append(a, "Past the bound the model is flat; a saturated lock usually loses throughput (convoys, handoffs): .NET's peaked at 32 cores and fell by half at 64.")
	}
	return append(a, "Not yet compared with a measured curve on a machine with more cores.")
}
