package workloads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/workloads/jsonserver"
)

// ProjectSweep projects a core-count sweep of the JSON server to toCores
// (see Project): the USL is fitted to the runs that succeeded on as many
// CPUs as they had cores, the CPU per request comes from the smallest
// core count, and the lock's numbers from the largest run on as many CPUs
// (GET /stats, stored in its manifest), cross-checked against that run's
// CPU profile and perf recording.
func ProjectSweep(ctx context.Context, results []*Result, toCores int) *Projection {
	in := ProjectionInput{ToCores: toCores}
	var lockRun *Result
	for _, r := range results {
		if r.Failure != nil || r.Load == nil {
			continue
		}
		if in.DemandCores == 0 && r.Load.ServerCPUPerRequestUS > 0 {
			in.DemandUS, in.DemandCores = r.Load.ServerCPUPerRequestUS, r.Config.Cores
		}
		if r.Config.Cores <= hostCPUs(r) {
			in.Points = append(in.Points, USLPoint{N: r.Config.Cores, X: r.Load.RPSOK})
			lockRun = r
		} else if lockRun == nil {
			lockRun = r // oversubscribed, but all there is
		}
	}
	if lockRun == nil {
		in.LockWhyNot = "no run succeeded"
		return Project(in)
	}
	lm, err := LockMeasureOf(lockRun)
	switch {
	case err != nil:
		in.LockWhyNot = err.Error()
	case lm != nil:
		lm.CrossChecks = criticalCPUPerRequest(ctx, lockRun)
		in.Lock = lm
	}
	return Project(in)
}

// hostCPUs is the CPU count of the machine a run ran on.
func hostCPUs(r *Result) int {
	if r.Manifest != nil && r.Manifest.HostCPUs > 0 {
		return r.Manifest.HostCPUs
	}
	return runtime.NumCPU()
}

// LockMeasureOf reads a run's lock counters: the difference between the
// server's /stats at the window's end and its start (manifest params
// server_stats and server_stats_start). It is nil, without error, for a
// server without locks (the baseline variant).
func LockMeasureOf(r *Result) (*LockMeasure, error) {
	if r.Manifest == nil {
		return nil, errors.New("no manifest")
	}
	var st [2]jsonserver.LockStats
	for i, k := range []string{"server_stats_start", "server_stats"} {
		v, ok := r.Manifest.Params[k]
		if !ok {
			return nil, fmt.Errorf("%s: the server's lock counters were not read (%s missing from the manifest)", r.Config.Out, k)
		}
		b, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(b, &st[i])
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", r.Config.Out, k, err)
		}
	}
	a, b := st[0], st[1]
	if b.Shards == 0 {
		return nil, nil
	}
	req, acq, timed := b.Requests-a.Requests, b.Acquisitions-a.Acquisitions, b.TimedHolds-a.TimedHolds
	if req == 0 || acq == 0 || timed == 0 {
		return nil, fmt.Errorf("%s: the server counted %d requests, %d acquisitions and %d timed holds in the window: too few to measure the lock", r.Config.Out, req, acq, timed)
	}
	return &LockMeasure{
		FromCores: r.Config.Cores, Shards: b.Shards, ShardsPerP: b.ShardsPerP,
		HoldUS:     float64(b.TimedHoldNS-a.TimedHoldNS) / float64(timed) / 1e3,
		TimedHolds: timed, Requests: req,
		AcquisitionsPerRequest: float64(acq) / float64(req),
		// The busiest lock over the server's life: requests spread by id,
		// so its share of the window is the same.
		BusiestShare: float64(b.MaxShardAcquisitions) / float64(b.Acquisitions),
	}, nil
}

// criticalFrames are the registry's methods that hold a lock, and the
// shard's bookkeeping they call under it (named too: a frame-pointer
// stack sampled in a leaf function lacks the leaf's caller), and
// lockFrames the calls inside them that take and drop it: CPU in the
// first and not under the second is CPU inside a critical section.
var (
	criticalFrames = []string{"jsonserver.(*waitRegistry).register", "jsonserver.(*waitRegistry).wake", "jsonserver.(*waitRegistry).unregister",
		"jsonserver.(*registryShard).audit", "jsonserver.(*registryShard).record"}
	lockFrames = []string{"jsonserver.(*waitRegistry).acquire", "jsonserver.(*waitRegistry).release"}
)

// criticalCPUPerRequest is the CPU per request the run's CPU profile and
// perf recording charge to the critical sections (those that could say).
func criticalCPUPerRequest(ctx context.Context, r *Result) []CrossCheck {
	var out []CrossCheck
	for _, kind := range []string{"cpu", capture.PerfKind} {
		f, ok := r.Manifest.File(kind)
		if !ok {
			continue
		}
		l, err := profile.Load(ctx, filepath.Join(r.Config.Out, f.Path), profile.Options{})
		if err != nil || l.Profile.DurationNanos <= 0 || r.Load.RPSOK <= 0 {
			continue
		}
		idx := -1
		for i, st := range l.Profile.SampleType {
			if st.Unit == "nanoseconds" {
				idx = i
				break
			}
		}
		if idx < 0 {
			continue
		}
		var ns int64
		for _, s := range l.Profile.Sample {
			if hasAnyFrame(s.Location, criticalFrames) && !hasAnyFrame(s.Location, lockFrames) {
				ns += s.Value[idx]
			}
		}
		requests := r.Load.RPSOK * float64(l.Profile.DurationNanos) / 1e9
		out = append(out, CrossCheck{Source: f.Path, USPerRequest: float64(ns) / 1e3 / requests})
	}
	return out
}

// hasAnyFrame reports whether a stack has a function whose name ends
// with one of names.
func hasAnyFrame(stack []*pprofile.Location, names []string) bool {
	for _, loc := range stack {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			for _, n := range names {
				if strings.HasSuffix(ln.Function.Name, n) {
					return true
				}
			}
		}
	}
	return false
}
