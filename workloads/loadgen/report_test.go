package loadgen

import (
	"bytes"
	"flag"
	"testing"

	"github.com/profdiff/profdiff/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The human report, clean and with every kind of trouble: failed
// requests, socket errors with examples, reconnects and warmup failures.
func TestReportTextGolden(t *testing.T) {
	clean := &Report{
		URL: "http://127.0.0.1:8080/", Engine: "epoll", Connections: 16, ConnectionsOpened: 16,
		DurationS: 5, Sent: 52000, OK: 52000, Non2xx: map[string]int64{}, RPSOK: 10400,
		LatencyMS: Latency{P50: 0.5, P90: 1.25, P99: 3.0625, Max: 12}, ServerCPUPerRequestUS: 96.125,
		WarmupS: 1, TimeoutS: 2.5,
	}
	troubled := &Report{
		URL: "http://127.0.0.1:8080/plugin", Connections: 8, ConnectionsOpened: 11,
		DurationS: 2.004, Sent: 900, OK: 850, Non2xx: map[string]int64{"503": 30, "500": 5}, SocketErrors: 15,
		SocketErrorKinds:    map[string]int64{"read": 10, "connect": 5},
		SocketErrorExamples: map[string]string{"read": "connection reset by peer", "connect": "connection refused"},
		RPSOK:               424.15, LatencyMS: Latency{P50: 10, P90: 20.5, P99: 40.123, Max: 99.9999},
		WarmupS: 0.3, WarmupFailed: 3, TimeoutS: 0.1234567,
	}
	for name, r := range map[string]*Report{"clean": clean, "troubled": troubled} {
		var b bytes.Buffer
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "./workloads/loadgen", "report."+name+".txt", b.Bytes(), *update)
	}
}
