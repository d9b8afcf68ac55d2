// Package jsonserver is the TechEmpower "JSON serialization" test as a Go
// net/http handler, in three variants that differ only in how a request
// waits: the built-in workload behind profdiff's core sweep and demo.
//
// Every variant answers GET /json (and HEAD) with a freshly instantiated
// {"message":"Hello, World!"} object serialized by encoding/json on every
// request (no caching, as the TechEmpower rules demand): status 200, the
// 27-byte body, Content-Type application/json, Content-Length, a Server
// header, and the Date header net/http adds (refreshed every second).
// Connections are kept alive. Any other path is 404.
//
// # Variants
//
//   - baseline: the handler serializes and writes the response on the
//     connection's goroutine. Nothing is shared between requests.
//   - global-lock: the regression. Each request hands its serialization to a
//     worker pool and blocks until the worker wakes it, through a wait
//     registry guarded by ONE process-wide sync.Mutex, the shape of .NET 11's
//     managed wait subsystem (dotnet/runtime#117788, whose global lock is the
//     suspect of the Kestrel JSON regression, dotnet/runtime#127484).
//   - sharded: the fix. The same registry split into shards, each with its
//     own mutex, chosen by request id; everything else equals global-lock.
//   - gc, gc-lock: steps of a series (`profdiff series`, see
//     workloads/series.sh). gc is baseline plus garbage-collector pressure
//     (every request allocates a chain of pointers and keeps it live a
//     while, see churn); gc-lock is global-lock with the same pressure and
//     a hold of the lock 8 times as long (heavyAudits, so that the lock is
//     contended on 2 cores). Fewer worker threads, the .NET story's thread
//     tuning, is gc-lock run at fewer cores (GOMAXPROCS is Go's worker
//     thread count): at one, a holder is almost never descheduled while it
//     holds the lock, and the contention goes.
//
// The registry's functions have distinctive names, (*waitRegistry).register,
// (*waitRegistry).wake and (*waitRegistry).unregister, so that in a profdiff
// diff of global-lock against baseline (or against sharded) the growth of
// the lock-contention bucket is led by those frames.
package jsonserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Variants lists the variant names Handler accepts, baseline first.
var Variants = []string{Baseline, GlobalLock, Sharded, GC, GCLock}

// Variant names.
const (
	// Baseline serializes on the request's own goroutine: the TechEmpower
	// JSON handler as any Go framework writes it, with nothing shared
	// between requests.
	Baseline = "baseline"
	// GlobalLock models .NET's managed wait subsystem with its process-wide
	// lock: every request registers a waiter in a registry guarded by one
	// sync.Mutex, hands its serialization to a worker pool, blocks until
	// the worker wakes it (the worker takes the same lock to find the
	// waiter), and unregisters (the lock a third time). Each hold does
	// about a microsecond of bookkeeping (see waitRegistry), so the lock's
	// utilization, hold time × acquisitions/s, grows with throughput and
	// therefore with cores, until it saturates and throughput stops
	// scaling.
	GlobalLock = "global-lock"
	// Sharded is the fix: the same registry, worker pool and hold work, but
	// split into shards (4 × GOMAXPROCS, a power of two, at least 8), each
	// with its own mutex, chosen by request id, so requests rarely meet on
	// a lock.
	Sharded = "sharded"
	// GC is Baseline plus garbage-collector pressure (churn).
	GC = "gc"
	// GCLock is GlobalLock plus the pressure of GC, its lock held
	// heavyAudits times as long.
	GCLock = "gc-lock"
)

// ServerHeader is the value of the Server header on every response.
const ServerHeader = "profdiff-jsonserver"

// Message is the value the test serializes.
const Message = "Hello, World!"

// message is the object instantiated for every request.
type message struct {
	Message string `json:"message"`
}

// Handler returns the JSON server for a variant (see Variants). The
// global-lock and sharded handlers own a worker pool sized GOMAXPROCS at
// the time of the call; the returned handler implements io.Closer, and
// Close stops the workers of those variants (requests after Close fail
// with 503). Servers that live as long as the process need not call it.
func Handler(variant string) (http.Handler, error) {
	var serve func(http.ResponseWriter, *http.Request)
	var stop func()
	stats := func() LockStats { return LockStats{Variant: variant} }
	switch variant {
	case Baseline, GC:
		serve = serveBaseline
	case GlobalLock, Sharded, GCLock:
		shards := 1
		if variant == Sharded {
			shards = defaultShards()
		}
		d := newDispatcher(shards, defaultWorkers())
		if variant == GCLock {
			d.reg.audits = heavyAudits
		}
		serve, stop = d.serve, d.close
		stats = func() LockStats {
			st := d.reg.stats()
			st.Variant, st.Requests = variant, d.nextID.Load()
			if variant == Sharded {
				st.ShardsPerP = shardsPerP
			}
			return st
		}
	default:
		return nil, fmt.Errorf("unknown jsonserver variant %q (want %s)", variant, strings.Join(Variants, ", "))
	}
	if variant == GC || variant == GCLock {
		serve = withChurn(serve)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /json", serve) // GET patterns match HEAD too
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(stats())
	})
	return &handler{mux: mux, stop: stop}, nil
}

type handler struct {
	mux  *http.ServeMux
	stop func()
}

var _ io.Closer = (*handler)(nil)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Close stops the worker pool, if the variant has one.
func (h *handler) Close() error {
	if h.stop != nil {
		h.stop()
	}
	return nil
}

func serveBaseline(w http.ResponseWriter, r *http.Request) {
	body, err := serialize()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, body)
}

// serialize instantiates the message and encodes it: the per-request work
// the TechEmpower rules require (no caching of either step).
func serialize() ([]byte, error) {
	return json.Marshal(&message{Message: Message})
}

func writeJSON(w http.ResponseWriter, body []byte) {
	h := w.Header()
	// Direct map assignment skips header-key canonicalization; the keys are
	// already canonical.
	h["Server"] = []string{ServerHeader}
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}
