package workloads

import (
	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
)

// SweepGrowth is how far (a fraction, 0.01 = one percentage point) a
// bucket's share must rise above the first run's, besides doubling,
// before a sweep's verdict says it appears.
const SweepGrowth = 0.01

// sweepVerdict is a core-count sweep's verdict: where the bucket (other
// than cpu) that appears with the cores starts (see sweepGrowth) and how requests/s per
// core at the largest count compares with the first count's; then the
// peak, and the runs that failed or had failed requests. Nil without a
// run that did not fail.
func sweepVerdict(rows []SweepRow) *report.Verdict {
	var ok []SweepRow
	for _, r := range rows {
		if r.Failed == "" {
			ok = append(ok, r)
		}
	}
	v := &report.Verdict{}
	if len(ok) > 0 {
		first, last := ok[0], ok[len(ok)-1]
		var l report.Line
		if b, from, found := sweepGrowth(ok); found {
			top := maxShare(ok, b)
			l = report.Cat(report.Code(b.String()), " appears from ", cores(from.Cores), " (", report.Share(first.Share(b)), " at ", cores(first.Cores),
				" → ", report.Share(top.Share(b)), " at ", cores(top.Cores), ")")
			v.Tone = report.ToneGrowth
		}
		if last.Cores != first.Cores && first.RequestsPerS > 0 {
			verb := "falls to "
			if last.Efficiency >= 1 {
				verb = "rises to "
			}
			if l != nil {
				l = append(l, report.Text("; "))
			}
			l = append(l, report.Cat("requests/s per core ", verb, report.Share(last.Efficiency).Places(0), " of ", cores(first.Cores), "'s at ", cores(last.Cores))...)
		}
		if l != nil {
			v.Lines = append(v.Lines, append(l, report.Text(".")))
		}
		for _, r := range ok {
			if r.Peak {
				v.Lines = append(v.Lines, report.Cat("Peak: ", report.Fixed(r.RequestsPerS, 0), " requests/s at ", cores(r.Cores), "."))
			}
		}
	}
	for _, r := range rows {
		switch {
		case r.Failed != "":
			v.Lines = append(v.Lines, report.Cat("The ", r.Cores, "-core run failed: ", r.Failed, "."))
			v.Tone = report.ToneFail
		case r.Errors > 0:
			v.Lines = append(v.Lines, report.Cat("The ", r.Cores, "-core run had ", report.Int(r.Errors), " failed requests (requests/s counts successes only)."))
		}
	}
	if len(v.Lines) == 0 {
		return nil
	}
	return v
}

// sweepGrowth is the bucket other than cpu that appears as the cores
// grow: among those whose share at some run is at least twice the first
// run's and SweepGrowth above it, the one whose largest rise scores most
// as a diff's verdict scores it (Δ²/(first+that run)); and the first run
// where it is both.
func sweepGrowth(ok []SweepRow) (diff.Bucket, SweepRow, bool) {
	appears := func(b diff.Bucket, r SweepRow) bool {
		s0, s := ok[0].Share(b), r.Share(b)
		return s >= 2*s0 && s-s0 >= SweepGrowth
	}
	best, bestScore := diff.CPU, 0.0
	for _, b := range diff.Buckets {
		if b == diff.CPU {
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
func maxShare(ok []SweepRow, b diff.Bucket) SweepRow {
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
