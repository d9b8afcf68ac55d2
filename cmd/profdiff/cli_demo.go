package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	cwd, _ := os.Getwd()
	exe, _ := os.Executable()
	for _, cmd := range demoFollowUps(invokedAs(exe, cwd, exec.LookPath), cwd, leadingMethod(result), res) {
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
// capture folders, as a shell in cwd takes them, each starting with
// prog (invokedAs): the mutex profile's diff (who held the contended
// lock), when both runs captured one, and a drill-down (--peek) into the
// leading method's callers and callees.
func demoFollowUps(prog, cwd string, lead *diff.MethodRow, res [2]*workloads.Result) []string {
	folders := shellQuote(shortPath(res[0].Config.Out, cwd)) + " " + shellQuote(shortPath(res[1].Config.Out, cwd))
	var cmds []string
	for _, kind := range []string{"mutex", "cpu"} {
		_, ok0 := res[0].Manifest.File(kind)
		_, ok1 := res[1].Manifest.File(kind)
		if ok0 && ok1 {
			cmds = append(cmds, prog+" diff --kind "+kind+" "+folders)
		}
	}
	if lead != nil {
		cmds = append(cmds, prog+" diff --peek "+shellQuote(peekPattern(lead.Name))+" "+folders)
	}
	return cmds
}

// invokedAs is how to start this profdiff again from cwd, as a shell
// takes it: "go run ./cmd/profdiff" when exe is a binary `go run` built
// (in a go-build temporary folder, as exe/profdiff), with the package's
// path from cwd when cwd is inside this module and the module path
// otherwise; "profdiff" when lookPath finds exe itself on the PATH; else
// exe's path (relative to cwd when shorter).
func invokedAs(exe, cwd string, lookPath func(string) (string, error)) string {
	if isGoRunBinary(exe) {
		if root := moduleRoot(cwd); root != "" {
			rel, err := filepath.Rel(cwd, filepath.Join(root, "cmd", "profdiff"))
			if err == nil {
				if rel != "." && !strings.HasPrefix(rel, "..") {
					rel = "." + string(filepath.Separator) + rel
				}
				return "go run " + shellQuote(filepath.ToSlash(rel))
			}
		}
		return "go run " + modulePath + "/cmd/profdiff@latest"
	}
	if p, err := lookPath("profdiff"); err == nil && sameFile(p, exe) {
		return "profdiff"
	}
	rel := shortPath(exe, cwd)
	if !strings.ContainsRune(rel, filepath.Separator) {
		rel = "." + string(filepath.Separator) + rel // a shell looks a bare name up in PATH
	}
	return shellQuote(rel)
}

// isGoRunBinary reports whether exe is where `go run` puts the binary it
// builds: GOTMPDIR (or the temporary folder)/go-buildNNN/b001/exe/NAME.
func isGoRunBinary(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

// moduleRoot is the folder at or above dir whose go.mod declares
// modulePath, or "".
func moduleRoot(dir string) string {
	for d := dir; d != ""; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			first, _, _ := strings.Cut(string(b), "\n")
			if strings.TrimSpace(first) == "module "+modulePath {
				return d
			}
			return "" // another module
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return ""
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// shortPath is p relative to cwd when that is shorter, else p.
func shortPath(p, cwd string) string {
	if cwd == "" || !filepath.IsAbs(p) {
		return p
	}
	if rel, err := filepath.Rel(cwd, p); err == nil && len(rel) < len(p) {
		return rel
	}
	return p
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
