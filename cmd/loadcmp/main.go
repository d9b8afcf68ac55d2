// Command loadcmp checks profdiff's built-in load generator (package
// workloads/loadgen) against wrk, the tool TechEmpower and crank use: both
// drive the same TechEmpower JSON server (workloads/jsonserver, variant
// baseline by default) on 127.0.0.1 with the same number of connections and
// the same request headers, in alternating rounds, and loadcmp prints both
// requests/s and their ratio. The target is loadgen ≥ 95% of wrk at each
// connection count.
//
// The server runs in a child process (loadcmp re-executes itself), so the
// server, wrk and loadgen each have a process of their own, as with
// `profdiff load` against a real server. On a small machine all three share
// the CPUs: the numbers say how much CPU each generator leaves the server,
// which is what decides the requests/s. loadcmp also prints the CPU time per
// request of the server and of each generator (from /proc and rusage).
//
// Each wrk run is preceded by a discarded wrk warmup run of the same length
// as loadgen's warmup, and the order alternates between rounds so that drift
// does not favour one side. wrk runs with -t min(C, NumCPU) threads, --latency
// and --timeout 8s, as in TechEmpower's toolset. loadgen runs as profdiff
// load does: the default engine (loadgen.DefaultEngine: epoll on Linux,
// with Config.Dedicated unless -dedicated=false), or -engine goroutines
// (one goroutine per connection).
//
// The machine may be shared: before each round loadcmp waits (up to
// -quiet-wait) for other processes to go quiet, prints the CPUs they used
// during each round ("other"), and leaves rounds above -max-other out of
// the medians.
//
// Run it (wrk must be installed: apt-get install -y wrk):
//
//	go run ./cmd/loadcmp                        # C=64, 128 and 256, 3 rounds of 5s each
//	go run ./cmd/loadcmp -c 64,128,256 -d 3s -rounds 5
//	go run ./cmd/loadcmp -c 64 -engine goroutines
//	go run ./cmd/loadcmp -variant global-lock   # another jsonserver variant
//	go run ./cmd/loadcmp -only loadgen -cpuprofile lg.prof   # profile the generator
//
// Its results are in workloads/README.md (Checked against wrk).
//
// The exit status is 0 when every C reached the target, 1 when one did not,
// and 2 on errors (wrk missing, server not starting) or when interrupted
// (SIGINT or SIGTERM stop the runs, and the server child is stopped).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/profdiff/profdiff/workloads/jsonserver"
	"github.com/profdiff/profdiff/workloads/loadgen"
)

const childEnv = "LOADCMP_SERVE_VARIANT"

func main() {
	if v := os.Getenv(childEnv); v != "" {
		if err := serveChild(v); err != nil {
			fmt.Fprintf(os.Stderr, "loadcmp server: %v\n", err)
			os.Exit(2)
		}
		return
	}
	// An interrupt stops the runs and still stops the server child.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code, err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadcmp: %v\n", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// serveChild is the server process: it listens on 127.0.0.1, prints the
// address on stdout and serves until its stdin closes (the parent exited).
func serveChild(variant string) error {
	h, err := jsonserver.Handler(variant)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	return (&http.Server{Handler: h}).Serve(ln)
}

type server struct {
	cmd  *exec.Cmd
	addr string
	in   io.Closer
}

func startServer(variant string) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	// The server picks its own GOMAXPROCS, whatever this process was given.
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOMAXPROCS=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"="+variant)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("server did not start: %v", err)
	}
	return &server{cmd: cmd, addr: strings.TrimSpace(line), in: in}, nil
}

func (s *server) stop() {
	s.in.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// cpu returns the server's user+system CPU time from /proc/PID/stat.
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the ")" that closes the command name: state is field 3,
	// utime 14 and stime 15 (1-based, over the whole line).
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is sysconf(_SC_CLK_TCK), 100 on Linux.
const clockTicks = 100

// machineBusy returns the CPU time all processes used, from /proc/stat.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, x := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		v, _ := strconv.ParseInt(x, 10, 64)
		busy += v
	}
	return time.Duration(busy) * time.Second / clockTicks
}

// waitQuiet waits, up to max, for half a second in which all processes
// together used less than maxOther CPUs (the server is idle between runs).
// It returns ctx's error when ctx ends first (an interrupt).
func waitQuiet(ctx context.Context, max time.Duration, maxOther float64) error {
	const step = 500 * time.Millisecond
	t := time.NewTicker(step)
	defer t.Stop()
	for range int(max / step) {
		b0 := machineBusy()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if (machineBusy() - b0).Seconds() < maxOther*step.Seconds() {
			return nil
		}
	}
	return nil
}

// other is the CPU share, in CPUs, that neither the server nor the
// generator used during a run: other tenants of the machine.
func other(busy, server, client, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return max(0, (busy-server-client).Seconds()/wall.Seconds())
}

type result struct {
	other     float64 // CPUs used by other processes during the run
	rps       float64
	serverUS  float64 // server CPU µs per 2xx response
	clientUS  float64 // generator CPU µs per 2xx response
	failed    int64
	latP99ms  float64
	rawErrors string
}

// config is loadcmp's flags, validated.
type config struct {
	conns      []int
	dur, warm  time.Duration
	rounds     int
	threads    int // wrk threads; 0 = min(C, NumCPU)
	wrk        string
	variant    string
	target     float64
	maxOther   float64
	engine     string
	dedicated  bool
	quietWait  time.Duration
	only       string
	cpuProfile string
}

func parseFlags(args []string) (*config, error) {
	var c config
	var conns, wrkPath string
	fs := flag.NewFlagSet("loadcmp", flag.ContinueOnError)
	fs.StringVar(&conns, "c", "64,128,256", "connection counts to compare, comma-separated")
	fs.DurationVar(&c.dur, "d", 5*time.Second, "measured duration of each run")
	fs.DurationVar(&c.warm, "warmup", time.Second, "warmup before each run (loadgen: discarded window; wrk: a discarded run)")
	fs.IntVar(&c.rounds, "rounds", 3, "alternating rounds per connection count")
	fs.IntVar(&c.threads, "t", 0, "wrk threads (0 = min(C, NumCPU))")
	fs.StringVar(&wrkPath, "wrk", "wrk", "wrk binary")
	fs.StringVar(&c.variant, "variant", jsonserver.Baseline, "jsonserver variant to serve")
	fs.Float64Var(&c.target, "target", 0.95, "required loadgen/wrk ratio of median requests/s")
	fs.Float64Var(&c.maxOther, "max-other", 0.1, "rounds in which other processes used more CPUs than this are left out of the medians")
	fs.StringVar(&c.engine, "engine", "", "loadgen engine: epoll or goroutines (default: loadgen.DefaultEngine(), epoll on Linux)")
	fs.BoolVar(&c.dedicated, "dedicated", true, "loadgen.Config.Dedicated, as profdiff load sets it")
	fs.DurationVar(&c.quietWait, "quiet-wait", 30*time.Second, "before each round, wait up to this long for the machine to be quiet (other processes using < max-other CPUs); 0 to not wait")
	fs.StringVar(&c.only, "only", "", "run only 'wrk' or 'loadgen' (no ratio; for profiling)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (the loadgen runs) to this file")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.rounds < 1 || c.rounds > 50 || c.dur <= 0 || c.dur > 2*time.Minute {
		return nil, errors.New("want 1..50 rounds and a duration of up to 2m")
	}
	if c.only != "" && c.only != "wrk" && c.only != "loadgen" {
		return nil, fmt.Errorf("-only wants wrk or loadgen, not %q", c.only)
	}
	for _, f := range strings.Split(conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("bad -c %q", f)
		}
		c.conns = append(c.conns, n)
	}
	wrk, err := exec.LookPath(wrkPath)
	if err != nil && c.only != "loadgen" {
		return nil, fmt.Errorf("wrk not found (apt-get install -y wrk): %v", err)
	}
	c.wrk = wrk
	return &c, nil
}

// run compares the generators at each connection count: 0 when every
// count reached the target, 1 when one did not.
func run(ctx context.Context, args []string) (int, error) {
	c, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return 2, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 2, err
		}
		defer pprof.StopCPUProfile()
	}
	srv, err := startServer(c.variant)
	if err != nil {
		return 2, err
	}
	defer srv.stop()
	url := "http://" + srv.addr + "/json"
	fmt.Printf("server: jsonserver %q, pid %d, %s; NumCPU %d; %d rounds of %v (+%v warmup) per C\n",
		c.variant, srv.cmd.Process.Pid, url, runtime.NumCPU(), c.rounds, c.dur, c.warm)
	fmt.Printf("cpu columns: µs of CPU per 2xx response (server + generator); other: CPUs used by other processes meanwhile\n")
	pass := true
	for _, conns := range c.conns {
		ok, err := compareAt(ctx, c, srv, url, conns)
		if err != nil {
			return 2, err
		}
		pass = pass && ok
	}
	if !pass {
		return 1, nil
	}
	return 0, nil
}

// compareAt runs the rounds at one connection count, prints a line per
// round and the medians, and reports whether loadgen reached the target.
func compareAt(ctx context.Context, c *config, srv *server, url string, conns int) (bool, error) {
	t := c.threads
	if t <= 0 {
		t = min(conns, runtime.NumCPU())
	}
	fmt.Printf("\nC=%d: wrk -t %d -c %d -d %v --latency --timeout 8s (TFB headers) vs loadgen -connections %d\n", conns, t, conns, c.dur, conns)
	fmt.Printf("%-6s %9s %9s %7s  %-16s %-16s %s\n", "round", "wrk rps", "lg rps", "ratio", "wrk cpu", "loadgen cpu", "other")
	var ws, ls, wsAll, lsAll []float64
	var paired pairs // of the rounds in the medians
	var pairedAll pairs
	for i := range c.rounds {
		if c.quietWait > 0 {
			if err := waitQuiet(ctx, c.quietWait, c.maxOther); err != nil {
				return false, err
			}
		}
		w, l, err := round(ctx, c, srv, url, t, conns, i)
		if err != nil {
			return false, err
		}
		oth := max(w.other, l.other)
		mark := ""
		if oth > c.maxOther {
			mark = " (noisy: left out)"
		} else {
			ws, ls = append(ws, w.rps), append(ls, l.rps)
			paired.add(w, l)
		}
		wsAll, lsAll = append(wsAll, w.rps), append(lsAll, l.rps)
		pairedAll.add(w, l)
		fmt.Printf("%-6d %9.0f %9.0f %6.1f%%  %5.1f + %-8.1f %5.1f + %-8.1f %.2f%s\n", i+1, w.rps, l.rps, 100*l.rps/w.rps,
			w.serverUS, w.clientUS, l.serverUS, l.clientUS, oth, mark)
		if w.failed > 0 || l.failed > 0 {
			fmt.Printf("       WARNING: failed requests: wrk %d (%s), loadgen %d\n", w.failed, w.rawErrors, l.failed)
		}
	}
	if len(ws) == 0 {
		fmt.Printf("       every round was noisy: the medians use all rounds\n")
		ws, ls, paired = wsAll, lsAll, pairedAll
	}
	mw, ml := median(ws), median(ls)
	ratio := ml / mw
	verdict := "ok"
	if ratio < c.target {
		verdict = fmt.Sprintf("BELOW the %.0f%% target", 100*c.target)
	}
	fmt.Printf("median %9.0f %9.0f %6.1f%%  %s (%d rounds)\n", mw, ml, 100*ratio, verdict, len(ws))
	paired.print()
	return ratio >= c.target, nil
}

// pairs are the rounds' paired numbers: each round's ratio (wrk and
// loadgen ran back to back, so drift between rounds cancels out) and each
// generator's own CPU per 2xx response, which decides how much CPU it
// leaves a server it shares the machine with.
type pairs struct {
	ratio, wrkUS, lgUS []float64
}

func (p *pairs) add(w, l result) {
	if w.rps > 0 {
		p.ratio = append(p.ratio, l.rps/w.rps)
	}
	if w.clientUS > 0 && l.clientUS > 0 {
		p.wrkUS, p.lgUS = append(p.wrkUS, w.clientUS), append(p.lgUS, l.clientUS)
	}
}

// print writes the medians of the paired numbers, under the medians line.
func (p *pairs) print() {
	if len(p.ratio) == 0 {
		return
	}
	fmt.Printf("       per round: ratio median %.1f%% (%.1f-%.1f%%)", 100*median(p.ratio), 100*slices.Min(p.ratio), 100*slices.Max(p.ratio))
	if len(p.lgUS) > 0 {
		fmt.Printf("; generator CPU per 2xx response (medians): wrk %.1f µs, loadgen %.1f µs", median(p.wrkUS), median(p.lgUS))
	}
	fmt.Println()
}

// round is round i at one connection count: wrk then loadgen on even
// rounds, the other way on odd ones, so that drift favours neither; with
// -only, the one generator's result stands for both.
func round(ctx context.Context, c *config, srv *server, url string, threads, conns, i int) (w, l result, err error) {
	switch {
	case c.only == "wrk":
		w, err = runWrk(ctx, c.wrk, srv, url, threads, conns, c.dur, c.warm)
		l = w
	case c.only == "loadgen":
		l, err = runLoadgen(ctx, c, srv, url, conns)
		w = l
	case i%2 == 0:
		if w, err = runWrk(ctx, c.wrk, srv, url, threads, conns, c.dur, c.warm); err == nil {
			l, err = runLoadgen(ctx, c, srv, url, conns)
		}
	default:
		if l, err = runLoadgen(ctx, c, srv, url, conns); err == nil {
			w, err = runWrk(ctx, c.wrk, srv, url, threads, conns, c.dur, c.warm)
		}
	}
	return w, l, err
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

var (
	reRPS    = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	reReqs   = regexp.MustCompile(`(?m)^\s*([0-9]+) requests in`)
	reNon2xx = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses:\s+([0-9]+)`)
	reSock   = regexp.MustCompile(`(?m)^\s*Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)`)
	reP99    = regexp.MustCompile(`(?m)^\s*99%\s+([0-9.]+)(us|ms|s)`)
)

func runWrk(ctx context.Context, wrk string, srv *server, url string, threads, conns int, d, warm time.Duration) (result, error) {
	args := func(d time.Duration) []string {
		return []string{
			"-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second)),
			"--latency", "--timeout", "8s",
			"-H", "Accept: " + loadgen.DefaultAccept, "-H", "Connection: keep-alive", url,
		}
	}
	if warm >= time.Second {
		if out, err := exec.CommandContext(ctx, wrk, args(warm)...).CombinedOutput(); err != nil {
			return result{}, fmt.Errorf("wrk warmup: %v\n%s", err, out)
		}
	}
	cmd := exec.CommandContext(ctx, wrk, args(d)...)
	cpu0, busy0, t0 := srv.cpu(), machineBusy(), time.Now()
	out, err := cmd.CombinedOutput()
	cpu1, busy1, wall := srv.cpu(), machineBusy(), time.Since(t0)
	if err != nil {
		return result{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	m := reRPS.FindSubmatch(out)
	n := reReqs.FindSubmatch(out)
	if m == nil || n == nil {
		return result{}, fmt.Errorf("cannot parse wrk output:\n%s", out)
	}
	var r result
	r.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	reqs, _ := strconv.ParseInt(string(n[1]), 10, 64)
	var errs []string
	if x := reNon2xx.FindSubmatch(out); x != nil {
		v, _ := strconv.ParseInt(string(x[1]), 10, 64)
		r.failed += v
		errs = append(errs, "non-2xx/3xx "+string(x[1]))
	}
	if x := reSock.FindSubmatch(out); x != nil {
		for _, s := range x[1:] {
			v, _ := strconv.ParseInt(string(s), 10, 64)
			r.failed += v
		}
		errs = append(errs, strings.TrimSpace(string(x[0])))
	}
	r.rawErrors = strings.Join(errs, "; ")
	// wrk's Requests/sec counts every response, so take the failures out.
	if ok := reqs - r.failed; ok > 0 && reqs > 0 {
		r.rps *= float64(ok) / float64(reqs)
		r.serverUS = float64((cpu1 - cpu0).Nanoseconds()) / 1e3 / float64(ok)
		client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		r.clientUS = float64(client.Nanoseconds()) / 1e3 / float64(ok)
		r.other = other(busy1-busy0, cpu1-cpu0, client, wall)
	}
	if x := reP99.FindSubmatch(out); x != nil {
		v, _ := strconv.ParseFloat(string(x[1]), 64)
		switch string(x[2]) {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		r.latP99ms = v
	}
	return r, nil
}

func runLoadgen(ctx context.Context, c *config, srv *server, url string, conns int) (result, error) {
	// The generator's own CPU and the machine's over the measured window,
	// read at the same moments as the server's, through the ServerCPU hook.
	var self, busy [2]time.Duration
	var at [2]time.Time
	var srvCPU [2]time.Duration
	n := 0
	rep, err := loadgen.Run(ctx, loadgen.Config{
		URL: url, Connections: conns, Duration: c.dur, Warmup: c.warm, Timeout: 8 * time.Second, Engine: c.engine, Dedicated: c.dedicated,
		ServerCPU: func() time.Duration {
			i := min(n, 1)
			n++
			self[i], busy[i], at[i], srvCPU[i] = selfCPU(), machineBusy(), time.Now(), srv.cpu()
			return srvCPU[i]
		},
	})
	if err != nil {
		return result{}, fmt.Errorf("loadgen: %v", err)
	}
	if rep.ConnectionsOpened != conns {
		fmt.Printf("       WARNING: loadgen opened %d connections for %d\n", rep.ConnectionsOpened, conns)
	}
	r := result{rps: rep.RPSOK, serverUS: rep.ServerCPUPerRequestUS, failed: rep.Failed(), latP99ms: rep.LatencyMS.P99}
	if rep.OK > 0 {
		client := self[1] - self[0]
		r.clientUS = float64(client.Nanoseconds()) / 1e3 / float64(rep.OK)
		r.other = other(busy[1]-busy[0], srvCPU[1]-srvCPU[0], client, at[1].Sub(at[0]))
	}
	return r, nil
}
