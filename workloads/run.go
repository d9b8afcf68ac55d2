// Package workloads runs profdiff's built-in workloads end to end: a server
// in a child process (the profdiff binary re-executed with GOMAXPROCS=N,
// package child), closed-loop load against it (package loadgen), and a live
// capture of its profiles during the measured window (package
// profile/capture), so that anyone can watch the analysis work on their own
// machine.
//
// The load generator runs in the parent and the server in the child, so the
// generator's own goroutines never appear in the server's profiles; the
// profiles are pulled from the child's /debug/pprof endpoints, the same path
// `profdiff capture` takes against a user's server.
//
// # Contract
//
// Run starts children from child.Builtin(), so a program that calls Run
// must call child.MaybeRun(child.Builtin()) first thing in main (a test
// binary in TestMain). Servers and load stay on 127.0.0.1, and every wait
// is bounded. Run returns numbers and errors and never prints or exits:
// progress and problems go to RunConfig.Log, and every failure path writes
// a line there as well as returning its error. On every path, a
// cancelled context included, the load is stopped and the child stopped
// and reaped before Run returns; an interrupted run's error unwraps to the
// context's error (its message ends with the context's cause, such as the
// signal) and, once the capture window has opened, is a
// *capture.InterruptedError naming the incomplete folder, whose manifest
// is marked interrupted. A child that exits, stops answering or answers no
// request fails the run with a *ChildError (never a context error), and
// a sweep may show it as a failed row (Failed, SweepRows).
package workloads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/workloads/child"
	"github.com/profdiff/profdiff/workloads/loadgen"
)

// RunConfig describes one run of a workload.
type RunConfig struct {
	Workload    string        // a name in child.Builtin(): "json", "wasm"
	Variant     string        // e.g. "baseline", "global-lock", "sharded"
	Path        string        // request path on the workload server ("/json")
	Cores       int           // the child's GOMAXPROCS (and CPU affinity where possible)
	Connections int           // load generator connections (0: loadgen.DefaultConnections)
	Warmup      time.Duration // load before the measured window, discarded
	Seconds     int           // measured window, whole seconds (the capture window too)
	Out         string        // capture folder for this run (created; must be new or empty)
	Log         io.Writer     // progress and problems, the child's log lines too (nil: discarded)

	// Args are handed to the workload in the child (child.Spec.Args).
	Args []string
	// Loop drives the workload's in-process loop instead of HTTP load: a
	// POST to Path with ?seconds= (and ?warmup=) whose JSON answer is the
	// window's loadgen.Report (the wasm host's /loop). Connections is
	// ignored.
	Loop bool
	// StatsPath, when set, is fetched from the workload when the window
	// opens and after it closes, and the two JSON documents stored in the
	// manifest's params as "server_stats_start" and "server_stats".
	StatsPath string
	// Params are added to the manifest's params.
	Params map[string]any
	// NoPerf leaves out the perf recording of the child (see
	// capture.Options.PerfPID), which a run otherwise takes where perf can
	// record.
	NoPerf bool
	// Profiles selects the kinds captured (capture.Options.Profiles; nil:
	// all of capture.Kinds).
	Profiles []string
	// PerfMaxScript bounds the perf script text stored
	// (capture.Options.PerfMaxScript; 0: its default).
	PerfMaxScript int64

	// Table is what the child is started from (nil: child.Builtin()); the
	// program must pass the same table to child.MaybeRun.
	Table child.Table
	// HangTimeout is how long the child's debug port may leave a probe
	// unanswered before the run fails as hung (0: DefaultHangTimeout).
	HangTimeout time.Duration
}

// DefaultHangTimeout is RunConfig.HangTimeout's default. The child's debug
// port is probed every second during the run; a server busy with the load
// and six profiles at once answers within milliseconds, so ten seconds
// without an answer is a server that stopped (a stopped process, a
// deadlocked runtime), and the run fails rather than waiting out the
// window and every timeout.
const DefaultHangTimeout = 10 * time.Second

// Result is what one run measured.
type Result struct {
	Config   RunConfig
	Manifest *capture.Manifest
	Load     *loadgen.Report
	// Kind is the profile the bucket shares come from: the wall-clock
	// (fgprof) profile when it was captured, else the CPU profile.
	Kind profile.Kind
	// Buckets are that profile's bucket shares (fractions 0..1).
	Buckets [rules.NumBuckets]float64
	// Failure is set, and nothing else but Config, in the result Failed
	// makes for a run that failed.
	Failure error
}

func (c *RunConfig) validate() error {
	switch {
	case c.Workload == "":
		return errors.New("no workload given")
	case c.Cores < 1:
		return fmt.Errorf("cores must be at least 1, not %d", c.Cores)
	case c.Seconds < 1:
		return fmt.Errorf("the measured window must be at least 1 second, not %d", c.Seconds)
	case c.Warmup < 0:
		return fmt.Errorf("negative warmup %v", c.Warmup)
	case c.Out == "":
		return errors.New("no output folder given")
	}
	return nil
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func logf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", a...)
	}
}

// Run starts the workload's server in a child process, drives it with the
// load generator for Warmup plus Seconds, captures every profile during the
// measured window, writes the capture folder with its manifest (parameters,
// load report, requests/s, latency, errors, server CPU per request) and
// stops the child. The load is stopped and the child stopped and reaped on
// every path, the error ones too.
//
// When ctx ends first (Ctrl-C, SIGTERM), Run stops the load, stops and
// reaps the child (SIGKILL after a grace period) and returns an error that
// unwraps to ctx.Err(): a *capture.InterruptedError naming the incomplete
// capture folder, whose manifest is marked interrupted, once the capture
// window has opened; an error saying nothing was captured before that.
//
// When the child exits before the run is over, or stops answering (its
// debug port leaves a probe unanswered for HangTimeout), the load and the
// capture stop at once, the child is reaped (killed when it hung), a
// capture folder already begun is marked interrupted, and the error is a
// *ChildError naming the exit status or signal and the folder. A run in
// which the server answered no request in the window fails with a
// *ChildError too, its folder complete.
func Run(ctx context.Context, cfg RunConfig) (res *Result, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Path == "" {
		cfg.Path = "/" + cfg.Workload
	}
	if cfg.Log != nil {
		// The child's log copier, the capture and this function all write
		// to Log, from different goroutines.
		cfg.Log = &lockedWriter{w: cfg.Log}
	}
	if cfg.Cores > runtime.NumCPU() {
		logf(cfg.Log, "note: %d cores asked for, this machine has %d CPUs: GOMAXPROCS=%d without pinning, so the run measures oversubscription, not scaling", cfg.Cores, runtime.NumCPU(), cfg.Cores)
	}
	table := cfg.Table
	if table == nil {
		table = child.Builtin()
	}
	proc, err := child.Start(ctx, table, child.Spec{Workload: cfg.Workload, Variant: cfg.Variant, Cores: cfg.Cores, Args: cfg.Args, Log: cfg.Log})
	if err != nil {
		logf(cfg.Log, "%s %s: the server did not start: %v", cfg.Workload, cfg.Variant, err)
		return nil, fmt.Errorf("starting the %s server (%s, %d cores): %w", cfg.Workload, cfg.Variant, cfg.Cores, err)
	}
	r := &run{cfg: cfg, proc: proc, url: proc.URL + cfg.Path}
	defer func() {
		stop := proc.Stop
		if r.hung {
			stop = proc.Kill // a SIGTERM would wait out the grace period
		}
		var ce *ChildError
		if serr := stop(); serr != nil && !errors.As(err, &ce) {
			logf(cfg.Log, "%s %s: stopping the server: %v", cfg.Workload, cfg.Variant, serr)
			if err == nil {
				err = fmt.Errorf("stopping the %s server: %w", cfg.Workload, serr)
			}
		}
	}()
	logf(cfg.Log, "%s %s: server pid %d at %s, GOMAXPROCS=%d, pinned to CPUs %v", cfg.Workload, cfg.Variant, proc.Pid, proc.URL, proc.GOMAXPROCS, proc.CPUs)
	if !cfg.NoPerf {
		// Attached, its events off, before the load starts, so that the
		// capture enables it on time when the window opens.
		r.perf = capture.StartPerf(proc.Pid)
		defer r.perf.Close()
		// The load starts once perf is attached (a fraction of a second,
		// seconds on a busy machine), so that its window, timed from the
		// load's start, does not open before perf can record it.
		if took, err := r.perf.Ready(ctx); err != nil && r.perf.Err() == nil && ctx.Err() == nil {
			logf(cfg.Log, "%s %s: perf: not ready after %v (%v); the load starts without waiting longer", cfg.Workload, cfg.Variant, took.Round(time.Millisecond), err)
		}
	}

	man, rep, err := r.measure(ctx)
	if err != nil {
		if ctx.Err() != nil {
			logf(cfg.Log, "%s %s: interrupted: the load and the server (pid %d) are stopped", cfg.Workload, cfg.Variant, proc.Pid)
		}
		return nil, err
	}
	r.record(ctx, man, rep)
	if err := capture.WriteManifest(cfg.Out, man); err != nil {
		return nil, err
	}
	if err := r.answered(rep); err != nil {
		return nil, err
	}
	res = &Result{Config: cfg, Manifest: man, Load: rep}
	if err := res.loadBuckets(ctx); err != nil {
		logf(cfg.Log, "bucket shares unavailable for %s: %v", cfg.Out, err)
	}
	return res, nil
}

// run is one Run's state once its child is up.
type run struct {
	cfg        RunConfig
	proc       *child.Process
	url        string // the workload's URL the load goes to
	statsStart any    // StatsPath's answer when the window opened
	hung       bool   // the child stopped answering: Kill it, do not Stop it
	perf       *capture.PerfRecorder
}

// loadDone is the load generator's result.
type loadDone struct {
	rep *loadgen.Report
	err error
}

// measure runs the load, waits out the warmup and captures the window. The
// load has stopped when it returns, on every path. The child is watched
// meanwhile: when it exits or stops answering, the load and the capture
// stop at once and the error is a *ChildError.
func (r *run) measure(ctx context.Context) (*capture.Manifest, *loadgen.Report, error) {
	// mctx ends with ctx, or with a *ChildError as its cause.
	mctx, fail := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.watch(mctx, fail)
	}()
	loadCh := r.startLoad(mctx)
	received := false
	defer func() {
		fail(nil)
		if !received {
			<-loadCh
		}
		<-watched
	}()

	// The capture window opens when the warmup ends. A timer, not a
	// handshake: the load generator's window is also time-based, and the
	// capture's seconds= requests end on the server's own clock.
	select {
	case <-time.After(r.cfg.Warmup):
	case <-mctx.Done():
		if ce := r.failure(ctx, mctx, 0); ce != nil {
			return nil, nil, r.childFailed(ce, nil, nil)
		}
		return nil, nil, fmt.Errorf("interrupted during the warmup: nothing captured in %s: %w", r.cfg.Out, cause(ctx))
	case ld := <-loadCh:
		received = true
		if ce := r.failure(ctx, mctx, time.Second); ce != nil {
			return nil, nil, r.childFailed(ce, nil, nil)
		}
		// The generator stopped during the warmup: nothing to capture.
		if ld.err == nil {
			ld.err = errors.New("load generator stopped before the measured window")
		}
		logf(r.cfg.Log, "load on %s: %v", r.url, ld.err)
		return nil, nil, fmt.Errorf("load on %s: %w", r.url, ld.err)
	}
	if r.cfg.StatsPath != "" {
		var err error
		if r.statsStart, err = fetchJSON(mctx, r.proc.URL+r.cfg.StatsPath); err != nil {
			logf(r.cfg.Log, "workload stats unavailable from %s: %v", r.proc.URL+r.cfg.StatsPath, err)
		}
	}
	man, cerr := capture.Capture(mctx, r.proc.DebugURL, capture.Options{Seconds: r.cfg.Seconds, Out: r.cfg.Out, Log: r.cfg.Log, Perf: r.perf,
		Profiles: r.cfg.Profiles, PerfMaxScript: r.cfg.PerfMaxScript})
	ld := <-loadCh
	received = true
	grace := time.Duration(0)
	if ld.err != nil || cerr != nil {
		grace = time.Second // a failure may be the child's exit, not reaped yet
	}
	if ce := r.failure(ctx, mctx, grace); ce != nil {
		return nil, nil, r.childFailed(ce, man, cerr)
	}
	var ie *capture.InterruptedError
	switch {
	case errors.As(cerr, &ie):
		ie.Err = cause(ctx)
		return nil, nil, withCause(ctx, ie)
	case ld.err != nil && ctx.Err() != nil:
		return nil, nil, r.loadInterrupted(ctx, man, cerr)
	case ld.err != nil:
		logf(r.cfg.Log, "load on %s: %v", r.url, ld.err)
		return nil, nil, fmt.Errorf("load on %s: %w", r.url, ld.err)
	case cerr != nil:
		return nil, nil, fmt.Errorf("capturing profiles: %w", cerr)
	}
	return man, ld.rep, nil
}

// startLoad runs the load generator (or the workload's own loop) for the
// warmup and the window; its result arrives on the channel.
func (r *run) startLoad(ctx context.Context) <-chan loadDone {
	window := time.Duration(r.cfg.Seconds) * time.Second
	serverCPU := func() time.Duration {
		d, err := r.proc.CPUTime()
		if err != nil {
			logf(r.cfg.Log, "server CPU time unavailable: %v", err)
		}
		return d
	}
	loadCh := make(chan loadDone, 1)
	go func() {
		var ld loadDone
		if r.cfg.Loop {
			ld.rep, ld.err = runLoop(ctx, r.url, r.cfg.Warmup, window, serverCPU)
		} else {
			ld.rep, ld.err = loadgen.Run(ctx, loadgen.Config{
				URL:         r.url,
				Connections: r.cfg.Connections,
				Warmup:      r.cfg.Warmup,
				Duration:    window,
				ServerCPU:   serverCPU,
			})
		}
		loadCh <- ld
	}()
	return loadCh
}

// loadInterrupted is measure's error when ctx cut the load short but the
// capture had every profile: the run marks the folder's manifest
// interrupted itself, the load report being what is missing.
func (r *run) loadInterrupted(ctx context.Context, man *capture.Manifest, cerr error) error {
	if man == nil {
		// The capture never wrote its folder (it could not be made).
		return fmt.Errorf("interrupted: capture folder %s not written (%v): %w", r.cfg.Out, cerr, cause(ctx))
	}
	man.Interrupted = true
	man.Errors = append(man.Errors, "load: interrupted before the window closed")
	if err := capture.WriteManifest(r.cfg.Out, man); err != nil {
		logf(r.cfg.Log, "writing the manifest of %s: %v", r.cfg.Out, err)
	}
	return withCause(ctx, &capture.InterruptedError{Dir: r.cfg.Out, Missing: []string{"load report"}, Err: cause(ctx)})
}

// record adds to the capture's manifest what the runner knows better than
// a remote capture can, and what it measured.
func (r *run) record(ctx context.Context, man *capture.Manifest, rep *loadgen.Report) {
	cfg, proc := r.cfg, r.proc
	man.GOMAXPROCS = proc.GOMAXPROCS
	man.GoVersion = runtime.Version()
	if len(proc.CPUs) > 0 {
		man.CPUs = len(proc.CPUs)
	} else {
		man.CPUs = runtime.NumCPU()
	}
	if man.Params == nil {
		man.Params = map[string]any{}
	}
	man.Params["workload"] = cfg.Workload
	man.Params["variant"] = cfg.Variant
	man.Params["cores"] = cfg.Cores
	man.Params["connections"] = rep.Connections
	man.Params["warmup_s"] = cfg.Warmup.Seconds()
	man.Params["pinned_cpus"] = proc.CPUs
	if cfg.Loop {
		man.Params["mode"] = "loop"
	}
	for k, v := range cfg.Params {
		man.Params[k] = v
	}
	if cfg.StatsPath != "" {
		st, err := fetchJSON(ctx, proc.URL+cfg.StatsPath)
		if err != nil {
			logf(cfg.Log, "workload stats unavailable from %s: %v", proc.URL+cfg.StatsPath, err)
		} else {
			man.Params["server_stats"] = st
		}
		if r.statsStart != nil {
			man.Params["server_stats_start"] = r.statsStart
		}
	}
	if b, err := json.Marshal(rep); err == nil {
		man.Load = b
	}
	man.RequestsPerS = rep.RPSOK
	man.Requests = rep.Sent
	man.RequestErrors = rep.Failed()
	man.LatencyMS = &capture.Latency{P50: rep.LatencyMS.P50, P90: rep.LatencyMS.P90, P99: rep.LatencyMS.P99, Max: rep.LatencyMS.Max}
	man.CPUPerRequestUS = rep.ServerCPUPerRequestUS
}

// loadBuckets computes the run's bucket shares from its wall-clock profile,
// or its CPU profile when fgprof was not captured.
func (r *Result) loadBuckets(ctx context.Context) error {
	for _, k := range []profile.Kind{profile.KindWall, profile.KindCPU} {
		f, ok := r.Manifest.File(string(k))
		if !ok {
			continue
		}
		l, err := profile.Load(ctx, filepath.Join(r.Config.Out, f.Path), profile.Options{})
		if err != nil {
			return err
		}
		a := diff.NewAnalyzer(diff.Options{})
		if err := a.Add(result.Base, l); err != nil {
			return err
		}
		t := a.Top()
		for _, b := range t.Buckets {
			r.Buckets[b.Bucket] = b.Share
		}
		r.Kind = k
		return nil
	}
	return errors.New("neither a wall-clock nor a CPU profile was captured")
}

// SweepRow is one line of a core-count sweep.
type SweepRow struct {
	Cores           int                       `json:"cores"`
	RequestsPerS    float64                   `json:"requests_per_s"`
	P99MS           float64                   `json:"p99_ms"`
	Errors          int64                     `json:"errors"`
	CPUPerRequestUS float64                   `json:"cpu_per_request_us"`
	Buckets         map[string]float64        `json:"buckets"`
	Kind            profile.Kind              `json:"buckets_from"`
	Efficiency      float64                   `json:"scaling_efficiency"` // (rps/cores) ÷ (rps/cores at the smallest core count), scaled to that count
	Peak            bool                      `json:"peak"`
	Folder          string                    `json:"folder"`
	Failed          string                    `json:"failed,omitempty"` // why the run failed ("child exited (status 2)"); its numbers are then all 0
	Load            *loadgen.Report           `json:"-"`
	raw             [rules.NumBuckets]float64 // same as Buckets, indexed
}

// SweepRows turns run results into table rows: efficiency relative to the
// first (smallest) core count that did not fail, and a marker on the
// highest requests/s. A failed result (Failed) gives a row with its
// reason and no numbers.
func SweepRows(results []*Result) []SweepRow {
	rows := make([]SweepRow, len(results))
	peak, first := -1, -1
	for i, r := range results {
		if r.Failure != nil {
			rows[i] = SweepRow{Cores: r.Config.Cores, Folder: r.Config.Out, Failed: failureText(r.Failure), Buckets: map[string]float64{}}
			continue
		}
		rows[i] = SweepRow{
			Cores: r.Config.Cores, RequestsPerS: r.Load.RPSOK, P99MS: r.Load.LatencyMS.P99,
			Errors: r.Load.Failed(), CPUPerRequestUS: r.Load.ServerCPUPerRequestUS,
			Kind: r.Kind, Folder: r.Config.Out, Load: r.Load, raw: r.Buckets,
			Buckets: map[string]float64{},
		}
		for _, b := range rules.Buckets {
			rows[i].Buckets[b.String()] = r.Buckets[b]
		}
		if peak < 0 || r.Load.RPSOK > rows[peak].RequestsPerS {
			peak = i
		}
		if first < 0 {
			first = i
		}
	}
	if peak >= 0 {
		rows[peak].Peak = true
	}
	if first >= 0 && rows[first].RequestsPerS > 0 {
		perCore0 := rows[first].RequestsPerS / float64(rows[first].Cores)
		for i := range rows {
			if rows[i].Failed == "" {
				rows[i].Efficiency = rows[i].RequestsPerS / float64(rows[i].Cores) / perCore0
			}
		}
	}
	return rows
}

// Share returns a row's bucket share.
func (r SweepRow) Share(b rules.Bucket) float64 { return r.raw[b] }
