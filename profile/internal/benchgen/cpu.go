package benchgen

import (
	"testing"
	"time"
)

// Loop runs f b.N times (b.Loop) and reports, beside ns/op and MB/s
// (wall clock, which a loaded machine stretches), cpu-MB/s: the bytes
// per op over the CPU time the whole process spent (every thread, the
// collector's too), the per-core speed however many other processes
// share the machine. Where CPU time cannot be read it is wall time.
func Loop(b *testing.B, bytes int64, f func()) {
	b.Helper()
	b.SetBytes(bytes)
	b.ReportAllocs()
	start, wall := cpuTime(), time.Now()
	for b.Loop() {
		f()
	}
	cpu := cpuTime() - start
	if cpu <= 0 {
		cpu = time.Since(wall)
	}
	b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
}
