package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/workloads"
)

// demoOutro is what follows the demo's diff: the two capture folders and
// the exact follow-up commands on them. The conclusion itself (the
// lock-contention growth, as shares and rates, and the frames leading it)
// is the diff's verdict, which leads the output.
func demoOutro(result *diff.Result, res [2]*workloads.Result) report.Para {
	base, nw := res[0].Config.Out, res[1].Config.Out
	lines := []report.Line{report.Cat("Capture folders: ", base, " and ", nw, ". Follow up with:")}
	for _, cmd := range demoFollowUps(leadingMethod(result), res) {
		lines = append(lines, report.Cat("  ", report.Code(cmd)))
	}
	return report.Para{Lines: lines}
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

// demoCharts are the demo page's throughput charts: requests/s (2xx only)
// and p99 latency of the two runs, a bar a run; the note names the runs
// with failed requests, whose bars count only their successes.
func demoCharts(res [2]*workloads.Result) []report.Block {
	rps := report.Series{Name: "requests/s"}
	p99 := report.Series{Name: "p99 ms"}
	note := "Requests/s counts only 2xx responses."
	for i, r := range res {
		name := demoVariants[i]
		if n := r.Load.Failed(); n > 0 {
			note += fmt.Sprintf(" %s: %d failed requests.", name, n)
		}
		rps.Points = append(rps.Points, report.Point{X: float64(i), Y: r.Load.RPSOK, Label: name})
		p99.Points = append(p99.Points, report.Point{X: float64(i), Y: r.Load.LatencyMS.P99, Label: name})
	}
	cores := res[0].Config.Cores
	return []report.Block{
		&report.Chart{Title: "Throughput at " + plural(cores, "core"), Kind: report.ChartBars, X: "server", Y: "requests/s (2xx)", Series: []report.Series{rps}, Note: note},
		&report.Chart{Title: "p99 latency at " + plural(cores, "core"), Kind: report.ChartBars, X: "server", Y: "p99 ms", Series: []report.Series{p99}},
	}
}

// plural is "1 core", "4 cores".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
