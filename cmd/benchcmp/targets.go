package main

import (
	"fmt"
	"io"
	"time"
)

// report is everything one run measured, for the target lines.
type report struct {
	rows []*row // the pairs, smallest first as given
	top  *extra // `profdiff top` (nil: not measured)
	gate *extra // `profdiff gate` (nil: not measured)
}

// The performance issue's targets.
const (
	diffStacks   = 200_000
	diffWall     = 300 * time.Millisecond
	diffRSS      = 150 << 20
	diffVsPprof  = 70.0
	diffVsFloor  = 2.0
	topStacks    = 1_000_000
	topWall      = 3 * time.Second
	topRSS       = 400 << 20
	gateProfiles = 200
	gateWall     = 10 * time.Second
	gateRSS      = 200 << 20
)

// check is one target line.
type check struct {
	name     string
	state    string // PASS, FAIL or NOT RUN
	measured string
	target   string
	note     string
}

func judge(name string, ok bool, measured, target, note string) check {
	state := "FAIL"
	if ok {
		state = "PASS"
	}
	return check{name, state, measured, target, note}
}

func notRun(name, target, why string) check {
	return check{name: name, state: "NOT RUN", target: target, note: why}
}

// printTargets prints one line per target, measured against target. A
// target is checked on the measurement nearest its size; the line says
// when that is another size than the target's.
func printTargets(w io.Writer, rep *report) {
	var cs []check
	cs = append(cs, diffChecks(rep.rows)...)
	cs = append(cs, extraChecks("1M-stack profile: `profdiff top`", rep.top, "stacks", topStacks, func(e *extra) int { return e.stacks }, topWall, topRSS, "-top-stacks 0")...)
	cs = append(cs, extraChecks("gate of 200 vs 200 1-MB profiles", rep.gate, "profiles per side", gateProfiles, func(e *extra) int { return e.profiles }, gateWall, gateRSS, "-gate-profiles 0")...)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Targets (the performance issue's done-when; MB read as the tables' MiB)")
	fmt.Fprintln(w)
	pass, fail := 0, 0
	for _, c := range cs {
		line := fmt.Sprintf("- %s %s: ", c.state, c.name)
		if c.state == "NOT RUN" {
			line += fmt.Sprintf("target %s; %s", c.target, c.note)
		} else {
			line += fmt.Sprintf("measured %s, target %s", c.measured, c.target)
			if c.note != "" {
				line += " (" + c.note + ")"
			}
		}
		fmt.Fprintln(w, line)
		switch c.state {
		case "PASS":
			pass++
		case "FAIL":
			fail++
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d not run (a report: the exit status does not depend on them).\n", pass, fail, len(cs)-pass-fail)
}

// diffChecks are the 200k pair's targets, on the row nearest 200,000
// stacks.
func diffChecks(rows []*row) []check {
	const name = "200k pair: `profdiff diff`"
	if len(rows) == 0 {
		return []check{notRun(name, "≤ 0.30 s, ≤ 150 MB", "no pair measured")}
	}
	r := rows[0]
	for _, x := range rows {
		if abs(x.n-diffStacks) < abs(r.n-diffStacks) {
			r = x
		}
	}
	note := ""
	if r.n != diffStacks {
		note = fmt.Sprintf("measured at %d stacks, the target is set for %d", r.n, diffStacks)
	}
	f := r.floor
	vsFloor := ratio(r.pd.wall, f.floor().wall)
	cs := []check{
		judge(name+" wall", r.pd.wall <= diffWall, fmt.Sprintf("%s (user+sys %s)", secs(r.pd.wall), secs(r.pd.cpu)), "≤ "+secs(diffWall), note),
		judge(name+" peak RSS", r.pd.maxRSS > 0 && r.pd.maxRSS <= diffRSS, mib(r.pd.maxRSS), "≤ "+mib(diffRSS), note),
	}
	if r.pp == nil {
		cs = append(cs, notRun(name+" vs pprof", fmt.Sprintf("≥ %.0fx faster", diffVsPprof), "pprof skipped: "+r.ppSkip))
	} else {
		sp := ratio(r.pp.wall, r.pd.wall)
		cs = append(cs, judge(name+" vs pprof", sp >= diffVsPprof, fmt.Sprintf("%.1fx faster (%s vs %s)", sp, secs(r.pp.wall), secs(r.pd.wall)), fmt.Sprintf("≥ %.0fx", diffVsPprof), note))
	}
	cs = append(cs, judge(name+" vs the decompression floor", vsFloor <= diffVsFloor,
		fmt.Sprintf("%.1fx the floor (%s vs %s, %s, both files one after the other; %.1fx the parallel floor's %s)", vsFloor, secs(r.pd.wall), secs(f.floor().wall), f.bestName(), ratio(r.pd.wall, f.par.wall), secs(f.par.wall)),
		fmt.Sprintf("≤ %.0fx", diffVsFloor), note))
	return cs
}

// extraChecks are the wall and peak targets of the top or gate
// measurement e; size reads the size that the target is set for.
func extraChecks(name string, e *extra, unit string, want int, size func(*extra) int, wall time.Duration, rss int64, off string) []check {
	if e == nil {
		return []check{notRun(name, fmt.Sprintf("≤ %s, ≤ %s", secs(wall), mib(rss)), "not measured ("+off+")")}
	}
	note := ""
	if n := size(e); n != want {
		note = fmt.Sprintf("measured at %d %s, the target is set for %d", n, unit, want)
	}
	return []check{
		judge(name+" wall", e.pd.wall <= wall, fmt.Sprintf("%s (user+sys %s; %.1fx the floor's %s)", secs(e.pd.wall), secs(e.pd.cpu), ratio(e.pd.wall, e.floor.floor().wall), secs(e.floor.floor().wall)), "≤ "+secs(wall), note),
		judge(name+" peak RSS", e.pd.maxRSS > 0 && e.pd.maxRSS <= rss, mib(e.pd.maxRSS), "≤ "+mib(rss), note),
	}
}

func abs(x int) int { return max(x, -x) }
