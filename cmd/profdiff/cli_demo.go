package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/profdiff/profdiff/diff/render/sink"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/workloads"
)

// demoOutro is what follows the demo's diff: the two capture folders and
// the exact follow-up commands on them. The conclusion itself (the
// lock-contention growth, as shares and rates, and the frames leading it)
// is the diff's verdict, which leads the output.
func demoOutro(result *result.Result, res [2]*workloads.Result) report.Para {
	base, nw := res[0].Config.Out, res[1].Config.Out
	lines := []report.Line{report.Cat("Capture folders: ", base, " and ", nw, ". Follow up with:")}
	cwd, _ := os.Getwd()
	exe, _ := os.Executable()
	for _, cmd := range demoFollowUps(invokedAs(exe, os.Args[0], cwd), cwd, leadingMethod(result), res) {
		lines = append(lines, report.Cat("  ", report.Code(cmd)))
	}
	return report.Para{Lines: lines}
}

// leadingMethod is the method the demo points at: the first grown method
// in lock contention, else the first grown one; nil when none grew.
func leadingMethod(r *result.Result) *result.MethodRow {
	var grown *result.MethodRow
	for i := range r.Methods {
		m := &r.Methods[i]
		if m.Delta <= 0 {
			continue
		}
		if m.Bucket == rules.LockContention {
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
func demoFollowUps(prog, cwd string, lead *result.MethodRow, res [2]*workloads.Result) []string {
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
// otherwise; else args0 (os.Args[0]) as the shell was given it: a bare
// name it looked up in the PATH ("profdiff"), or a path (an absolute one
// relative to cwd when shorter).
func invokedAs(exe, args0, cwd string) string {
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
	if args0 == "" {
		args0 = exe
	}
	if !strings.ContainsRune(args0, filepath.Separator) {
		return shellQuote(args0)
	}
	rel := shortPath(args0, cwd)
	if !strings.ContainsRune(rel, filepath.Separator) {
		rel = "." + string(filepath.Separator) + rel // a bare name would be looked up in the PATH
	}
	return shellQuote(rel)
}

// isGoRunBinary reports whether exe is where `go run` puts the binary it
// builds: in the build cache, GOCACHE/XX/HASH-d/NAME (modules of Go 1.24
// and later), or else GOTMPDIR (or the temporary folder)/go-buildNNN/b001/exe/NAME.
func isGoRunBinary(exe string) bool {
	dir := filepath.Dir(exe)
	if cache := goCache(); cache != "" && strings.HasSuffix(filepath.Base(dir), "-d") &&
		filepath.Dir(filepath.Dir(dir)) == filepath.Clean(cache) {
		return true
	}
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

// goCache is the go command's build cache folder: GOCACHE, or its default
// under the user's cache folder ("" when neither is known, or it is off).
func goCache() string {
	if c := os.Getenv("GOCACHE"); c != "" {
		if c == "off" {
			return ""
		}
		return c
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "go-build")
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

// demoCautions are the sentences the demo adds to its verdict: that the
// machine was too busy for the comparison (cond), and that throughput
// moved against the verdict, said whenever it does.
func demoCautions(result *result.Result, res [2]*workloads.Result, cond workloads.Conditions) []string {
	var out []string
	if cond.Busy {
		out = append(out, cond.Sentence)
		if cond.Pairs != "" {
			out = append(out, cond.Pairs)
		}
	}
	grew := ""
	if v := result.Verdict; v != nil && v.Grew && v.Principal != nil {
		grew = v.Principal.Bucket.String()
	}
	if c := workloads.Contradiction(grew, res[0].Load.RPSOK, res[1].Load.RPSOK); c != "" {
		out = append(out, c)
	}
	return out
}

// writeConditions keeps what the demo measured of the machine beside its
// capture folders.
func writeConditions(path string, ml workloads.MachineLoad) error {
	b, err := json.MarshalIndent(ml, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("keeping the machine's load figures: %v", err)
	}
	return nil
}

// demoProgress shows a run's progress on w until the returned function
// is called: on a terminal, one line rewritten each second with the
// seconds left of the run's load (then "writing the captures"); elsewhere
// (a pipe, a log) nothing more than the line before it, so logs hold no
// carriage returns.
func demoProgress(w io.Writer, variant string, total time.Duration) (stop func()) {
	if m, ok := w.(*messages); ok {
		w = m.w
	}
	if sw, ok := w.(sink.Writer); ok {
		w = sw.W // the terminal itself: the sink escapes the \r that rewrites the line
	}
	if _, tty := terminalWidth(w); !tty {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			fmt.Fprintf(w, "\r\033[K  %s: %s", variant, progressText(total-time.Since(start)))
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// progressText is the progress line's words when left of the load
// remains: whole seconds, rounded up.
func progressText(left time.Duration) string {
	if left <= 0 {
		return "load done, writing the captures..."
	}
	return strconv.Itoa(int((left+time.Second-1)/time.Second)) + " s of load left"
}
