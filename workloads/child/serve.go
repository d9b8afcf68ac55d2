package child

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/felixge/fgprof"
)

// childLogPrefix starts every line the child logs itself (its workload's
// lines are the workload's own); Start's error for a child that exited
// early looks for it.
const childLogPrefix = "profdiff child "

// MaybeRun serves a workload from table and exits when this process was
// started by Start (the environment variable PROFDIFF_CHILD holds its
// spec); otherwise it returns at once. Call it first thing in main, and in
// TestMain of any test package that starts children, before flags are
// parsed, with the table the parent passes to Start.
func MaybeRun(table Table) {
	v := os.Getenv(envChild)
	if v == "" {
		return
	}
	os.Exit(serveChild(table, v, os.Stdin, os.Stdout, os.Stderr))
}

// serveChild is the child's whole life; it returns the exit status: 2 for
// a spec it cannot serve, 1 when a server failed, 0 after a requested
// stop. PROFDIFF_CHILD stays set, so that Start refuses to run in a
// child: a workload cannot start children of its own.
func serveChild(table Table, specJSON string, stdin io.Reader, stdout, stderr io.Writer) int {
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, childLogPrefix+"%d: "+format+"\n", append([]any{os.Getpid()}, a...)...)
	}
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		logf("bad %s: %v", envChild, err)
		return 2
	}
	var cpus []int
	if spec.Cores > 0 {
		var note string
		cpus, note = restrictCPUs(spec.Cores)
		if note != "" {
			logf("%s", note)
		}
	}
	runtime.SetMutexProfileFraction(spec.MutexFraction)
	runtime.SetBlockProfileRate(spec.BlockRate)

	serve, err := table.lookup(spec.Workload)
	if err != nil {
		logf("%v", err)
		return 2
	}
	h, err := serve(Params{Variant: spec.Variant, Args: spec.Args, Log: stderr})
	if err != nil {
		logf("%v", err)
		return 2
	}
	if c, ok := h.(io.Closer); ok {
		defer c.Close()
	}
	srv, err := listen(h, debugVars(spec, cpus))
	if err != nil {
		logf("%v", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s %s %s gomaxprocs=%d cpus=%s\n",
		readyToken, srv.workURL, srv.debugURL, runtime.GOMAXPROCS(0), formatCPUList(cpus))
	code := 0
	if err := waitForStop(spec.WatchStdin, stdin, srv.errc); err != nil {
		logf("server failed: %v", err)
		code = 1
	}
	srv.shutdown()
	return code
}

// debugVars is the child's /debug/vars object.
func debugVars(spec childSpec, cpus []int) map[string]any {
	return map[string]any{
		"pid":                    os.Getpid(),
		"cmdline":                os.Args,
		"go_version":             runtime.Version(),
		"gomaxprocs":             runtime.GOMAXPROCS(0),
		"num_cpu":                runtime.NumCPU(),
		"cpus":                   cpus,
		"workload":               spec.Workload,
		"variant":                spec.Variant,
		"args":                   spec.Args,
		"mutex_profile_fraction": spec.MutexFraction,
		"block_profile_rate":     spec.BlockRate,
	}
}

// servers are the child's two servers, both serving on loopback.
type servers struct {
	work, debug       *http.Server
	workURL, debugURL string
	errc              chan error // each server's Serve result
}

// listen starts the workload's server and the debug server, each on its
// own 127.0.0.1 port.
func listen(h http.Handler, vars map[string]any) (*servers, error) {
	wl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	dl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		wl.Close()
		return nil, err
	}
	s := &servers{
		work: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute},
		// No write timeout on the debug server: profiles stream for their
		// whole ?seconds= window, and net/http/pprof refuses windows
		// longer than a write timeout.
		debug:    &http.Server{Handler: debugMux(vars), ReadHeaderTimeout: 10 * time.Second},
		workURL:  "http://" + wl.Addr().String(),
		debugURL: "http://" + dl.Addr().String(),
		errc:     make(chan error, 2),
	}
	go func() { s.errc <- s.work.Serve(wl) }()
	go func() { s.errc <- s.debug.Serve(dl) }()
	return s, nil
}

// waitForStop blocks until SIGTERM or SIGINT, EOF on stdin when watchStdin
// (the parent holds the write end: EOF means it closed it in Stop, or
// died), or a server's failure, which it returns.
func waitForStop(watchStdin bool, stdin io.Reader, errc <-chan error) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)
	eof := make(chan struct{})
	if watchStdin {
		go func() {
			io.Copy(io.Discard, stdin)
			close(eof)
		}()
	}
	select {
	case <-sigs:
	case <-eof:
	case err := <-errc:
		return err
	}
	return nil
}

// shutdown gives responses in flight a short grace, then closes. The bound
// matters: Shutdown counts a connection that was opened but never sent a
// request (a client's spare dial) as active for its first 5 s, which would
// stall every Stop for the whole bound. A profile still streaming is cut.
func (s *servers) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := s.work.Shutdown(ctx); err != nil {
		s.work.Close()
	}
	if err := s.debug.Shutdown(ctx); err != nil {
		s.debug.Close()
	}
}

// debugMux is the child's private debug mux: net/http/pprof's handlers
// (registered here, never on http.DefaultServeMux), fgprof, and vars.
func debugMux(vars map[string]any) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index) // named profiles: goroutine, mutex, block, heap, ...
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/fgprof", fgprof.Handler())
	body, _ := json.MarshalIndent(vars, "", "  ")
	mux.HandleFunc("/debug/vars", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
		w.Write([]byte("\n"))
	})
	return mux
}
