package wasmhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Handler serves the host over HTTP:
//
//	GET|POST /plugin[?fn=trap|spin][&module=K]  one request through the
//	    plugin (module K, or the modules round robin):
//	    200 {"plugin":"ok","hash":H,"touched":T}; 503 when the pool is full
//	    (the body names the limit); 504 when the guest ran past its time
//	    limit; 500 when it trapped or broke isolation; 400 for an unknown fn.
//	POST /loop?seconds=S[&warmup=W][&max=N]
//	    runs Loop in this process on one goroutine and answers its report
//	    as JSON (409 while another loop runs).
//	GET /stats  the host's counters (Stats) as JSON.
//
// Every error status is logged by the host before it is written.
type Handler struct {
	Host   *Host
	loopMu sync.Mutex
}

// NewHandler returns the HTTP face of h.
func NewHandler(h *Host) *Handler { return &Handler{Host: h} }

// Close closes the host (the child calls it on shutdown).
func (s *Handler) Close() error { return s.Host.Close() }

func (s *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/plugin":
		s.plugin(w, r)
	case "/loop":
		s.loop(w, r)
	case "/stats":
		writeJSON(w, http.StatusOK, s.Host.Stats())
	default:
		s.Host.fail(FailBadRequest, fmt.Errorf("no such path %q", r.URL.Path))
		http.Error(w, "wasm host: no such path; try /plugin, /loop or /stats", http.StatusNotFound)
	}
}

func (s *Handler) plugin(w http.ResponseWriter, r *http.Request) {
	fn := r.URL.Query().Get("fn")
	if fn == "" {
		fn = FuncHandle
	}
	module := -1
	if v := r.URL.Query().Get("module"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.Host.fail(FailBadRequest, fmt.Errorf("module=%q is not a module index", v))
			http.Error(w, "wasm host: module= must be a module index (0, 1, ...)", http.StatusBadRequest)
			return
		}
		module = n
	}
	// The request as the plugin sees it: request line, then the body.
	req := make([]byte, 0, 256)
	req = fmt.Appendf(req, "%s %s %s\r\n\r\n", r.Method, r.RequestURI, r.Proto)
	if r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, RequestArea))
		if err != nil {
			s.Host.fail(FailBadRequest, fmt.Errorf("reading a request body: %w", err))
			http.Error(w, "wasm host: reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		req = append(req, body...)
	}
	rep, err := s.Host.HandleModule(r.Context(), module, fn, req)
	if err != nil {
		code := http.StatusInternalServerError
		switch FailureKind(err) {
		case FailPoolFull:
			code = http.StatusServiceUnavailable
			w.Header().Set("Retry-After", "1")
		case FailBadRequest:
			code = http.StatusBadRequest
		case FailTimeout:
			code = http.StatusGatewayTimeout
		case FailCanceled:
			code = http.StatusServiceUnavailable
		}
		http.Error(w, "wasm host: "+oneLine(err), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Server", "profdiff-wasm")
	body := fmt.Appendf(nil, `{"plugin":"ok","hash":%d,"touched":%d}`+"\n", rep.Hash, rep.Touched)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func (s *Handler) loop(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	secs, err := strconv.ParseFloat(q.Get("seconds"), 64)
	if err != nil || secs <= 0 || secs > 600 {
		s.Host.fail(FailBadRequest, fmt.Errorf("/loop: seconds=%q is not a duration of 0 to 600 s", q.Get("seconds")))
		http.Error(w, "wasm host: /loop needs seconds= between 0 and 600", http.StatusBadRequest)
		return
	}
	warm := 0.0
	if v := q.Get("warmup"); v != "" {
		warm, err = strconv.ParseFloat(v, 64)
		if err != nil || warm < 0 || warm > 600 {
			s.Host.fail(FailBadRequest, fmt.Errorf("/loop: warmup=%q is not a duration of 0 to 600 s", v))
			http.Error(w, "wasm host: /loop warmup= must be between 0 and 600 s", http.StatusBadRequest)
			return
		}
	}
	var maxIter int64
	if v := q.Get("max"); v != "" {
		maxIter, err = strconv.ParseInt(v, 10, 64)
		if err != nil || maxIter < 1 {
			s.Host.fail(FailBadRequest, fmt.Errorf("/loop: max=%q is not a positive count", v))
			http.Error(w, "wasm host: /loop max= must be a positive count", http.StatusBadRequest)
			return
		}
	}
	if !s.loopMu.TryLock() {
		s.Host.fail(FailBadRequest, errors.New("/loop refused: another loop is running"))
		http.Error(w, "wasm host: another loop is running", http.StatusConflict)
		return
	}
	defer s.loopMu.Unlock()
	rep, err := s.Host.Loop(r.Context(), time.Duration(warm*float64(time.Second)), time.Duration(secs*float64(time.Second)), maxIter)
	if err != nil {
		s.Host.log.printf("wasm host: /loop stopped early: %v", err)
		http.Error(w, "wasm host: loop stopped early: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}
