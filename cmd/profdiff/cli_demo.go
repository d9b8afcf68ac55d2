package main

import (
	"regexp"
	"strings"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/workloads"
)

// demoOutro names the lock-contention growth, as shares and, where the
// durations are known, as rates (goroutines in that state), and its
// leading method, and the exact follow-up commands on the two capture
// folders.
func demoOutro(result *diff.Result, res [2]*workloads.Result) report.Para {
	base, nw := res[0].Config.Out, res[1].Config.Out
	lc := bucketRow(result, diff.LockContention)
	first := report.Cat("Lock contention: ", report.Share(lc.Base), " → ", report.Share(lc.New))
	if lc.BaseRate != nil && lc.NewRate != nil {
		first = append(first, report.Cat(" (", report.Amount(*lc.BaseRate, lc.RateUnit), " → ", report.Amount(*lc.NewRate, lc.RateUnit), ")")...)
	}
	lead := leadingMethod(result)
	if lead != nil && lead.Bucket == diff.LockContention {
		first = append(first, report.Cat(", led by ", report.Text(lead.Name), " (", report.Delta(lead.Delta, false, ""), ")")...)
	}
	first = append(first, report.Text("."))
	lines := []report.Line{first, report.Cat("Capture folders: ", base, " and ", nw, ". Follow up with:")}
	for _, cmd := range demoFollowUps(lead, res) {
		lines = append(lines, report.Cat("  ", report.Code(cmd)))
	}
	return report.Para{Lines: lines}
}

// bucketRow is b's row of r (zero when r has none).
func bucketRow(r *diff.Result, b diff.Bucket) diff.BucketRow {
	for _, row := range r.Buckets {
		if row.Bucket == b {
			return row
		}
	}
	return diff.BucketRow{Bucket: b}
}

// leadingMethod is the method the demo points at: the first grown method
// in lock contention, else the first grown one; nil when none grew.
func leadingMethod(r *diff.Result) *diff.MethodRow {
	var grown *diff.MethodRow
	for i := range r.Methods {
		m := &r.Methods[i]
		if m.Delta <= 0 {
			continue
		}
		if m.Bucket == diff.LockContention {
			return m
		}
		if grown == nil {
			grown = m
		}
	}
	return grown
}

// demoFollowUps are the commands worth running next on the demo's two
// capture folders, as a shell takes them: the mutex profile's diff (who
// held the contended lock), when both runs captured one, and a drill-down
// (--peek) into the leading method's callers and callees.
func demoFollowUps(lead *diff.MethodRow, res [2]*workloads.Result) []string {
	folders := shellQuote(res[0].Config.Out) + " " + shellQuote(res[1].Config.Out)
	var cmds []string
	for _, kind := range []string{"mutex", "cpu"} {
		_, ok0 := res[0].Manifest.File(kind)
		_, ok1 := res[1].Manifest.File(kind)
		if ok0 && ok1 {
			cmds = append(cmds, "profdiff diff --kind "+kind+" "+folders)
		}
	}
	if lead != nil {
		cmds = append(cmds, "profdiff diff --peek "+shellQuote(peekPattern(lead.Name))+" "+folders)
	}
	return cmds
}

// peekPattern is a --peek regexp for the method name: the name from its
// last path element on (jsonserver.(*waitRegistry).acquire), quoted.
func peekPattern(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 && !strings.Contains(name[i:], " ") {
		name = name[i+1:]
	}
	return regexp.QuoteMeta(name)
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./,:=+@%.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:=+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
