package loadgen

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
)

// Latency holds percentiles of the 2xx responses' latency, in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Report is the result of a Run. Its JSON encoding is deterministic
// (encoding/json sorts map keys).
type Report struct {
	URL               string `json:"url"`
	Engine            string `json:"engine"` // epoll or goroutines
	Connections       int    `json:"connections"`
	ConnectionsOpened int    `json:"connections_opened"` // successful dials, warmup included; == Connections when keep-alive held
	// Reconnects counts the connects tried after each connection's first,
	// warmup included, failed ones too: after a failure (each waits out
	// the connection's backoff, BackoffMin doubling to BackoffMax) or a
	// Connection: close.
	Reconnects       int64            `json:"reconnects"`
	DurationS        float64          `json:"duration_s"` // measured window
	Sent             int64            `json:"sent"`       // requests completed or failed in the window
	OK               int64            `json:"ok"`         // 2xx
	Non2xx           map[string]int64 `json:"non_2xx"`    // status code → count (always present, {} when none)
	SocketErrors     int64            `json:"socket_errors"`
	SocketErrorKinds map[string]int64 `json:"socket_error_kinds,omitempty"` // connect/read/write/timeout
	// SocketErrorExamples holds the first error message seen of each kind.
	SocketErrorExamples map[string]string `json:"socket_error_examples,omitempty"`
	RPSOK               float64           `json:"rps_ok"`     // OK / DurationS
	LatencyMS           Latency           `json:"latency_ms"` // of the 2xx responses in the window
	// ServerCPUPerRequestUS is the server's CPU time per 2xx response in µs,
	// filled by Config.ServerCPU or SetServerCPU; the generator cannot
	// measure it by itself.
	ServerCPUPerRequestUS float64 `json:"server_cpu_per_request_us,omitempty"`

	WarmupS      float64 `json:"warmup_s"`
	WarmupFailed int64   `json:"warmup_failed,omitempty"` // failed requests in the discarded warmup
	TimeoutS     float64 `json:"timeout_s"`
}

// Failed is the number of requests in the window that did not get a 2xx
// response: non-2xx responses plus socket errors.
func (r *Report) Failed() int64 {
	n := r.SocketErrors
	for _, c := range r.Non2xx {
		n += c
	}
	return n
}

// SetServerCPU sets ServerCPUPerRequestUS from the server's CPU time over
// the measured window (it stays 0 when there was no 2xx response).
func (r *Report) SetServerCPU(cpu time.Duration) {
	if r.OK > 0 && cpu > 0 {
		r.ServerCPUPerRequestUS = float64(cpu.Nanoseconds()) / 1e3 / float64(r.OK)
	}
}

// Warnings returns the report's warnings, most important first; WriteText
// prints them before anything else. The first is about failed requests when
// there were any.
func (r *Report) Warnings() []string {
	var ws []string
	if f := r.Failed(); f > 0 {
		var parts []string
		for _, code := range slices.Sorted(maps.Keys(r.Non2xx)) {
			parts = append(parts, fmt.Sprintf("%s: %d", code, r.Non2xx[code]))
		}
		if r.SocketErrors > 0 {
			parts = append(parts, fmt.Sprintf("socket errors: %d", r.SocketErrors))
		}
		ws = append(ws, fmt.Sprintf("%d of %d requests failed (%s): requests/s counts only 2xx responses — this is not saturation",
			f, r.Sent, strings.Join(parts, ", ")))
	}
	if r.Sent == 0 {
		ws = append(ws, "no request completed in the measured window")
	} else if r.OK == 0 {
		ws = append(ws, "no 2xx response in the measured window")
	}
	if r.ConnectionsOpened > r.Connections {
		ws = append(ws, fmt.Sprintf("keep-alive was not held: %d connections opened for %d workers (reconnects after errors or Connection: close); dials cost the server extra work",
			r.ConnectionsOpened, r.Connections))
	} else if r.ConnectionsOpened < r.Connections {
		ws = append(ws, fmt.Sprintf("only %d of %d connections could be opened", r.ConnectionsOpened, r.Connections))
	}
	if r.WarmupFailed > 0 {
		ws = append(ws, fmt.Sprintf("%d requests failed during the warmup (not counted)", r.WarmupFailed))
	}
	return ws
}

// WriteText writes the human report. When any request failed its first line
// is a WARNING saying how many and that requests/s counts only 2xx.
func (r *Report) WriteText(w io.Writer) error {
	return render.Report(w, r.Model(), render.Table)
}

// Model is the human report as a report.Report: the warnings, then the
// URL and a line per fact; its JSON is r itself. It has no CSV form.
func (r *Report) Model() *report.Report {
	ws := r.Warnings()
	var lines []report.Line
	for _, s := range ws {
		lines = append(lines, report.Cat("WARNING: ", s))
	}
	field := func(name string, value ...any) {
		lines = append(lines, report.Cat(append([]any{fmt.Sprintf("  %-15s", name)}, value...)...))
	}
	lines = append(lines, report.Cat("GET ", r.URL))
	conns := report.Cat(report.Int(int64(r.Connections)), " (", report.Int(int64(r.ConnectionsOpened)), " opened)")
	if r.Engine != "" {
		conns = report.Cat(conns, ", ", r.Engine, " engine")
	}
	field("connections", conns)
	if r.Reconnects > 0 {
		field("reconnects", report.Int(r.Reconnects), " (after failures, each after a backoff of ", BackoffMin.String(), " doubling to ",
			BackoffMax.String(), ", or after Connection: close)")
	}
	field("window", report.Fixed(r.DurationS, 2), "s measured after ", report.Fixed(r.WarmupS, 2), "s warmup (discarded); timeout ",
		report.ExactNum(r.TimeoutS), "s")
	field("requests", report.Int(r.Sent), " in the window: ", report.Int(r.OK), " 2xx, ", report.Int(r.Failed()), " failed")
	field("requests/s", report.Fixed(r.RPSOK, 1), " (2xx only)")
	l := r.LatencyMS
	field("latency (ms)", "p50 ", report.Fixed(l.P50, 3), "  p90 ", report.Fixed(l.P90, 3), "  p99 ", report.Fixed(l.P99, 3),
		"  max ", report.Fixed(l.Max, 3), " (2xx responses)")
	if len(r.Non2xx) > 0 {
		field("non-2xx", counts(r.Non2xx))
	}
	if r.SocketErrors > 0 {
		field("socket errors", report.Int(r.SocketErrors), " (", counts(r.SocketErrorKinds), ")")
		for _, k := range slices.Sorted(maps.Keys(r.SocketErrorExamples)) {
			lines = append(lines, report.Cat("    first ", k, " error: ", r.SocketErrorExamples[k]))
		}
	}
	if r.ServerCPUPerRequestUS > 0 {
		field("server CPU", report.Fixed(r.ServerCPUPerRequestUS, 2), " µs per 2xx response")
	}
	return &report.Report{Blocks: []report.Block{report.Para{Lines: lines}}, JSON: r, Warnings: ws}
}

// counts lists counts by key, in key order: "500: 5, 503: 30".
func counts(m map[string]int64) report.Line {
	var l report.Line
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			l = append(l, report.Text(", "))
		}
		l = append(l, report.Cat(k, ": ", report.Int(m[k]))...)
	}
	return l
}
