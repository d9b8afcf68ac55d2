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

// current is the spec this process runs under, when it is a child.
var current *childSpec

// Args returns Spec.Args in a child process (nil elsewhere), for workloads
// that take parameters.
func Args() []string {
	if current == nil {
		return nil
	}
	return current.Args
}

// MaybeRun serves a workload and exits when this process was started by
// Start (the environment variable PROFDIFF_CHILD holds its spec);
// otherwise it returns at once. Call it first thing in main, and in TestMain
// of any test package that starts children, before flags are parsed.
func MaybeRun() {
	v := os.Getenv(envChild)
	if v == "" {
		return
	}
	os.Exit(serveChild(v, os.Stdin, os.Stdout, os.Stderr))
}

// serveChild is the child's whole life; it returns the exit status.
func serveChild(specJSON string, stdin io.Reader, stdout, stderr io.Writer) int {
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "profdiff child %d: "+format+"\n", append([]any{os.Getpid()}, a...)...)
	}
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		logf("bad %s: %v", envChild, err)
		return 2
	}
	// PROFDIFF_CHILD stays set, so that Start refuses to run in a child:
	// a workload cannot start children of its own.
	current = &spec

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

	serve, err := lookup(spec.Workload)
	if err != nil {
		logf("%v", err)
		return 2
	}
	h, err := serve(spec.Variant)
	if err != nil {
		logf("%v", err)
		return 2
	}
	if c, ok := h.(io.Closer); ok {
		defer c.Close()
	}

	wl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logf("%v", err)
		return 1
	}
	dl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logf("%v", err)
		return 1
	}
	vars := map[string]any{
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
	work := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	// No write timeout on the debug server: profiles stream for their
	// whole ?seconds= window, and net/http/pprof refuses windows longer
	// than a write timeout.
	debug := &http.Server{Handler: debugMux(vars), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- work.Serve(wl) }()
	go func() { errc <- debug.Serve(dl) }()

	fmt.Fprintf(stdout, "%s http://%s http://%s gomaxprocs=%d cpus=%s\n",
		readyToken, wl.Addr(), dl.Addr(), runtime.GOMAXPROCS(0), formatCPUList(cpus))

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	eof := make(chan struct{})
	if spec.WatchStdin {
		// The parent holds the write end; EOF means it closed it (Stop) or
		// died.
		go func() {
			io.Copy(io.Discard, stdin)
			close(eof)
		}()
	}
	code := 0
	select {
	case <-sigs:
	case <-eof:
	case err := <-errc:
		logf("server failed: %v", err)
		code = 1
	}
	// A short grace for responses in flight, then close. The bound matters:
	// Shutdown counts a connection that was opened but never sent a
	// request (a client's spare dial) as active for its first 5 s, which
	// would stall every Stop for the whole bound. A profile still streaming
	// is cut.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := work.Shutdown(ctx); err != nil {
		work.Close()
	}
	if err := debug.Shutdown(ctx); err != nil {
		debug.Close()
	}
	return code
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
