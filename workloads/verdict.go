package workloads

import (
	"strings"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/rules"
)

// SweepGrowth is how far (a fraction, 0.01 = one percentage point) a
// bucket's share must rise above the first run's, besides doubling,
// before a sweep's verdict says it appears.
const SweepGrowth = 0.01

// SweepVerdict is a core-count sweep's conclusion, the "verdict" of its
// JSON and, as sentences, the paragraph its report opens with.
type SweepVerdict struct {
	// Summary is the verdict as plain sentences.
	Summary string `json:"summary"`
	// Appears is the bucket (other than cpu) that appears as the cores
	// grow: its share at least doubles and rises SweepGrowth above the
	// first run's. Nil when none does.
	Appears *SweepAppears `json:"appears,omitempty"`
	// PerCore compares requests/s per core at the largest core count with
	// the first's (Efficiency of the last run); nil for a single count.
	PerCore *SweepPerCore `json:"per_core,omitempty"`
	// PeakCores and PeakRequestsPerS are the run with the most requests/s.
	PeakCores        int     `json:"peak_cores,omitempty"`
	PeakRequestsPerS float64 `json:"peak_requests_per_s,omitempty"`
	// Failed are the runs that failed; FailedRequests those that had
	// failed requests.
	Failed         []SweepFailure `json:"failed,omitempty"`
	FailedRequests []SweepFailure `json:"failed_requests,omitempty"`
}

// SweepAppears is where a bucket appears in a sweep: from FromCores on,
// its share rising from FirstShare (at FirstCores, the first run) to
// TopShare (at TopCores, its largest).
type SweepAppears struct {
	Bucket     rules.Bucket `json:"bucket"`
	FromCores  int          `json:"from_cores"`
	FirstCores int          `json:"first_cores"`
	FirstShare float64      `json:"first_share"`
	TopCores   int          `json:"top_cores"`
	TopShare   float64      `json:"top_share"`
}

// SweepPerCore is requests/s per core at LastCores as a fraction of the
// first run's (at FirstCores).
type SweepPerCore struct {
	FirstCores int     `json:"first_cores"`
	LastCores  int     `json:"last_cores"`
	Fraction   float64 `json:"fraction"`
}

// SweepFailure is a run that failed (Reason) or had failed requests
// (Errors).
type SweepFailure struct {
	Cores  int    `json:"cores"`
	Reason string `json:"reason,omitempty"`
	Errors int64  `json:"errors,omitempty"`
}

// SweepConclusion works out a sweep's verdict from its rows (nil when
// there is nothing to say: no run).
func SweepConclusion(rows []SweepRow) *SweepVerdict {
	var ok []SweepRow
	for _, r := range rows {
		if r.Failed == "" {
			ok = append(ok, r)
		}
	}
	v := &SweepVerdict{}
	if len(ok) > 0 {
		first, last := ok[0], ok[len(ok)-1]
		if b, from, found := sweepGrowth(ok); found {
			top := maxShare(ok, b)
			v.Appears = &SweepAppears{Bucket: b, FromCores: from.Cores, FirstCores: first.Cores, FirstShare: first.Share(b), TopCores: top.Cores, TopShare: top.Share(b)}
		}
		if last.Cores != first.Cores && first.RequestsPerS > 0 {
			v.PerCore = &SweepPerCore{FirstCores: first.Cores, LastCores: last.Cores, Fraction: last.Efficiency}
		}
		for _, r := range ok {
			if r.Peak {
				v.PeakCores, v.PeakRequestsPerS = r.Cores, r.RequestsPerS
			}
		}
	}
	for _, r := range rows {
		switch {
		case r.Failed != "":
			v.Failed = append(v.Failed, SweepFailure{Cores: r.Cores, Reason: r.Failed})
		case r.Errors > 0:
			v.FailedRequests = append(v.FailedRequests, SweepFailure{Cores: r.Cores, Errors: r.Errors})
		}
	}
	rv := v.report()
	if rv == nil {
		return nil
	}
	var sentences []string
	for _, l := range rv.Lines {
		sentences = append(sentences, render.Plain(l))
	}
	v.Summary = strings.Join(sentences, " ")
	return v
}

// sweepVerdict is the verdict paragraph of a sweep.
func sweepVerdict(rows []SweepRow) *report.Verdict { return SweepConclusion(rows).report() }

// report is the verdict as the sentences a report opens with: where the
// bucket appears and how requests/s per core falls, the peak, and the
// failures; nil when it says nothing (or v is nil).
func (v *SweepVerdict) report() *report.Verdict {
	if v == nil {
		return nil
	}
	out := &report.Verdict{}
	var l report.Line
	if a := v.Appears; a != nil {
		l = report.Cat(report.Code(a.Bucket.String()), " appears from ", cores(a.FromCores), " (", report.Share(a.FirstShare), " at ", cores(a.FirstCores),
			" → ", report.Share(a.TopShare), " at ", cores(a.TopCores), ")")
		out.Tone = report.ToneGrowth
	}
	if p := v.PerCore; p != nil {
		verb := "falls to "
		if p.Fraction >= 1 {
			verb = "rises to "
		}
		if l != nil {
			l = append(l, report.Text("; "))
		}
		l = append(l, report.Cat("requests/s per core ", verb, report.Share(p.Fraction).Places(0), " of ", cores(p.FirstCores), "'s at ", cores(p.LastCores))...)
	}
	if l != nil {
		out.Lines = append(out.Lines, append(l, report.Text(".")))
	}
	if v.PeakCores > 0 {
		out.Lines = append(out.Lines, report.Cat("Peak: ", report.Fixed(v.PeakRequestsPerS, 0), " requests/s at ", cores(v.PeakCores), "."))
	}
	for _, f := range v.Failed {
		out.Lines = append(out.Lines, report.Cat("The ", f.Cores, "-core run failed: ", f.Reason, "."))
		out.Tone = report.ToneFail
	}
	for _, f := range v.FailedRequests {
		out.Lines = append(out.Lines, report.Cat("The ", f.Cores, "-core run had ", report.Int(f.Errors), " failed requests (requests/s counts successes only)."))
	}
	if len(out.Lines) == 0 {
		return nil
	}
	return out
}

// sweepGrowth is the bucket other than cpu that appears as the cores
// grow: among those whose share at some run is at least twice the first
// run's and SweepGrowth above it, the one whose largest rise scores most
// as a diff's verdict scores it (Δ²/(first+that run)); and the first run
// where it is both.
func sweepGrowth(ok []SweepRow) (rules.Bucket, SweepRow, bool) {
	appears := func(b rules.Bucket, r SweepRow) bool {
		s0, s := ok[0].Share(b), r.Share(b)
		return s >= 2*s0 && s-s0 >= SweepGrowth
	}
	best, bestScore := rules.CPU, 0.0
	for _, b := range rules.Buckets {
		if b == rules.CPU {
			continue
		}
		for _, r := range ok[1:] {
			s0, s := ok[0].Share(b), r.Share(b)
			if score := (s - s0) * (s - s0) / (s0 + s); appears(b, r) && score > bestScore {
				best, bestScore = b, score
			}
		}
	}
	if bestScore == 0 {
		return best, SweepRow{}, false
	}
	for _, r := range ok[1:] {
		if appears(best, r) {
			return best, r, true
		}
	}
	return best, SweepRow{}, false
}

// maxShare is the first of the runs with the largest share of b.
func maxShare(ok []SweepRow, b rules.Bucket) SweepRow {
	top := ok[0]
	for _, r := range ok[1:] {
		if r.Share(b) > top.Share(b) {
			top = r
		}
	}
	return top
}

// cores is "1 core", "4 cores".
func cores(n int) report.Line {
	if n == 1 {
		return report.Cat(report.Int(1), " core")
	}
	return report.Cat(report.Int(int64(n)), " cores")
}

// wasmVerdict is the wasm sweep's verdict paragraph: the lines of
// Verdict(points) (which setting won each mode, whether the loop's winner
// wins under concurrency, failed points), in the tone of failure when a
// point failed.
func wasmVerdict(points []WasmPoint) *report.Verdict {
	lines := Verdict(points).Lines
	if len(lines) == 0 {
		return nil
	}
	v := &report.Verdict{}
	for _, l := range lines {
		v.Lines = append(v.Lines, report.Cat(l))
	}
	for _, p := range points {
		if p.Failed != "" {
			v.Tone = report.ToneFail
		}
	}
	return v
}
