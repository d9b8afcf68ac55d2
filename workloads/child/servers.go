package child

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"time"

	"github.com/felixge/fgprof"
)

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
