package workloads

import (
	"bytes"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/internal/golden"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/workloads/loadgen"
)

// sampleSweep is a fixed 1/2/4-core sweep: it peaks at 2 cores, and the
// 4-core run had failed requests.
func sampleSweep() []SweepRow {
	run := func(cores int, rps, p99, cpu float64, non2xx int64, lock, wait, gc float64) *Result {
		r := &Result{
			Config: RunConfig{Cores: cores, Out: "out/cores-" + string(rune('0'+cores))},
			Load: &loadgen.Report{RPSOK: rps, LatencyMS: loadgen.Latency{P99: p99}, ServerCPUPerRequestUS: cpu,
				Non2xx: map[string]int64{}},
			Kind: profile.KindWall,
		}
		if non2xx > 0 {
			r.Load.Non2xx["503"] = non2xx
		}
		r.Buckets[diff.CPU] = 1 - lock - wait - gc
		r.Buckets[diff.LockContention], r.Buckets[diff.Wait], r.Buckets[diff.GC] = lock, wait, gc
		return r
	}
	return SweepRows([]*Result{
		run(1, 10500, 1.234, 88.25, 0, 0.01, 0.40, 0.05),
		run(2, 19800.4, 2.5, 91.04, 0, 0.0486, 0.35, 0.06),
		run(4, 15000, 40.125, 140.55, 12, 0.3021, 0.2, 0.08),
	})
}

func TestSweepRenders(t *testing.T) {
	for _, f := range []string{"table", "markdown", "json"} {
		var b bytes.Buffer
		if err := WriteSweep(&b, sampleSweep(), f); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "./workloads", "sweep."+f, b.Bytes(), *update)
	}
}
