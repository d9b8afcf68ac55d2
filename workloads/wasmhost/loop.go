package wasmhost

import (
	"context"
	"errors"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/profdiff/profdiff/workloads/loadgen"
)

// LoopLimit bounds a Loop's iterations when the caller gives no bound.
const LoopLimit = 100_000_000

// Loop is the single-threaded instantiate loop: one goroutine, no HTTP,
// serving the same request through Handle for d (or maxIter iterations,
// whichever comes first; maxIter ≤ 0 means LoopLimit) after warmup, which
// runs the same loop and is discarded. The report has the load generator's
// shape so the two modes share tables and manifests: Engine "loop",
// Connections 1, Sent the measured iterations, OK the successful ones,
// LatencyMS the successful iterations' latency, and Non2xx the failed
// iterations keyed by failure kind (pool-full, trap, timeout, ...), not by
// HTTP status, since no HTTP is involved.
func (h *Host) Loop(ctx context.Context, warmup, d time.Duration, maxIter int64) (*loadgen.Report, error) {
	if d <= 0 {
		return nil, errors.New("the loop's measured window must be positive")
	}
	if maxIter <= 0 {
		maxIter = LoopLimit
	}
	req := []byte("GET /plugin HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n")
	rep := &loadgen.Report{
		URL: "loop: " + FuncHandle, Engine: "loop", Connections: 1, ConnectionsOpened: 1,
		Non2xx: map[string]int64{}, WarmupS: warmup.Seconds(), TimeoutS: h.cfg.Timeout.Seconds(),
	}
	kindOf := func(err error) string {
		if k := FailureKind(err); k != "" {
			return k
		}
		return "error"
	}
	end := time.Now().Add(warmup)
	for time.Now().Before(end) && ctx.Err() == nil {
		if _, err := h.Handle(ctx, FuncHandle, req); err != nil {
			rep.WarmupFailed++
		}
	}
	hist := hdrhistogram.New(1, int64(max(h.cfg.Timeout, time.Second)/time.Microsecond)*2, 3)
	var maxUS int64
	start := time.Now()
	end = start.Add(d)
	var n int64
	for n = 0; n < maxIter && ctx.Err() == nil; n++ {
		t0 := time.Now()
		if !t0.Before(end) {
			break
		}
		_, err := h.Handle(ctx, FuncHandle, req)
		us := time.Since(t0).Microseconds()
		if err != nil {
			rep.Non2xx[kindOf(err)]++
			continue
		}
		rep.OK++
		hist.RecordValue(max(us, 1))
		maxUS = max(maxUS, us)
	}
	rep.Sent = n
	rep.DurationS = time.Since(start).Seconds()
	if rep.DurationS > 0 {
		rep.RPSOK = float64(rep.OK) / rep.DurationS
	}
	if hist.TotalCount() > 0 {
		rep.LatencyMS = loadgen.Latency{
			P50: float64(hist.ValueAtPercentile(50)) / 1000,
			P90: float64(hist.ValueAtPercentile(90)) / 1000,
			P99: float64(hist.ValueAtPercentile(99)) / 1000,
			Max: float64(maxUS) / 1000,
		}
	}
	return rep, ctx.Err()
}
