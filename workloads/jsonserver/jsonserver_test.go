package jsonserver

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const wantBody = `{"message":"Hello, World!"}`

func startServer(t *testing.T, variant string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	h, err := Handler(variant)
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		h.(io.Closer).Close()
	})
	return srv, &conns
}

// checkResponse applies the TechEmpower verifier's checks to one response.
func checkResponse(resp *http.Response, body []byte) []string {
	var errs []string
	ctRE := regexp.MustCompile(`^application/json(; ?charset=(UTF|utf)-8)?$`)
	if resp.StatusCode != 200 {
		errs = append(errs, "status "+resp.Status)
	}
	if string(body) != wantBody || len(body) != 27 {
		errs = append(errs, "body "+string(body))
	}
	if ct := resp.Header.Get("Content-Type"); !ctRE.MatchString(ct) {
		errs = append(errs, "Content-Type "+ct)
	}
	if s := resp.Header.Get("Server"); s != ServerHeader {
		errs = append(errs, "Server "+s)
	}
	if d := resp.Header.Get("Date"); d == "" {
		errs = append(errs, "no Date")
	} else if _, err := http.ParseTime(d); err != nil {
		errs = append(errs, "Date "+d)
	}
	if resp.ContentLength != 27 {
		errs = append(errs, "Content-Length "+resp.Header.Get("Content-Length"))
	}
	if resp.Close {
		errs = append(errs, "connection not kept alive")
	}
	return errs
}

// TestTechEmpowerRules checks every variant against the TechEmpower JSON
// test's verifier: status 200, the exact 27-byte body, a Content-Type the
// verifier's regexp accepts, Server, Date and Content-Length headers, and
// keep-alive (several requests over one connection).
func TestTechEmpowerRules(t *testing.T) {
	for _, v := range Variants {
		t.Run(v, func(t *testing.T) {
			srv, conns := startServer(t, v)
			client := srv.Client()
			for i := 0; i < 5; i++ {
				resp, err := client.Get(srv.URL + "/json")
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if errs := checkResponse(resp, body); len(errs) > 0 {
					t.Fatalf("request %d: %s", i, strings.Join(errs, "; "))
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("5 sequential requests used %d connections; want 1 (keep-alive)", n)
			}
			head, err := client.Head(srv.URL + "/json")
			if err != nil {
				t.Fatal(err)
			}
			head.Body.Close()
			if head.StatusCode != 200 || head.Header.Get("Content-Type") != "application/json" {
				t.Errorf("HEAD: %s %q", head.Status, head.Header.Get("Content-Type"))
			}
			for _, path := range []string{"/", "/json/x", "/plaintext"} {
				resp, err := client.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 404 {
					t.Errorf("%s: status %d, want 404", path, resp.StatusCode)
				}
			}
			resp, err := client.Post(srv.URL+"/json", "text/plain", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("POST: status %d, want 405", resp.StatusCode)
			}
		})
	}
}

// TestVariantsConcurrent drives every variant with concurrent keep-alive
// clients: all responses must be identical and correct.
func TestVariantsConcurrent(t *testing.T) {
	const clients, each = 16, 50
	for _, v := range Variants {
		t.Run(v, func(t *testing.T) {
			srv, _ := startServer(t, v)
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			var wg sync.WaitGroup
			var bad atomic.Int32
			var first atomic.Value
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						resp, err := client.Get(srv.URL + "/json")
						if err != nil {
							bad.Add(1)
							first.CompareAndSwap(nil, err.Error())
							return
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if errs := checkResponse(resp, body); len(errs) > 0 {
							bad.Add(1)
							first.CompareAndSwap(nil, strings.Join(errs, "; "))
						}
					}
				}()
			}
			wg.Wait()
			if n := bad.Load(); n > 0 {
				t.Fatalf("%d bad responses; first: %v", n, first.Load())
			}
		})
	}
}

// TestRegistryEmptiesAndShards checks that every waiter is unregistered
// after concurrent requests and that requests spread over all shards.
func TestRegistryEmptiesAndShards(t *testing.T) {
	for _, shards := range []int{1, 8} {
		d := newDispatcher(shards, 2)
		srv := httptest.NewServer(http.HandlerFunc(d.serve))
		var wg sync.WaitGroup
		for c := 0; c < 8; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					resp, err := srv.Client().Get(srv.URL)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		srv.Close()
		d.close()
		used := 0
		for i := range d.reg.shards {
			s := &d.reg.shards[i]
			s.mu.Lock()
			if len(s.waiters) != 0 || len(s.list) != 0 {
				t.Errorf("%d shards: shard %d still holds %d waiters (%d listed)", shards, i, len(s.waiters), len(s.list))
			}
			for _, h := range s.history {
				if h != 0 || s.pos != 0 {
					used++
					break
				}
			}
			s.mu.Unlock()
		}
		if used != shards {
			t.Errorf("%d shards: %d saw requests; want all", shards, used)
		}
	}
}

func TestHandlerUnknownVariant(t *testing.T) {
	if _, err := Handler("nope"); err == nil || !strings.Contains(err.Error(), "baseline, global-lock, sharded") {
		t.Errorf("err = %v", err)
	}
}

func TestDefaultShards(t *testing.T) {
	n := defaultShards()
	if n < 8 || n&(n-1) != 0 {
		t.Errorf("defaultShards() = %d; want a power of two ≥ 8", n)
	}
}

// BenchmarkRegistryHold measures one register+wake+unregister round on an
// uncontended single-shard registry: three lock holds, the cost a request
// adds under the global lock.
func BenchmarkRegistryHold(b *testing.B) {
	r := newWaitRegistry(1)
	w := &waiter{ch: make(chan struct{}, 1)}
	for i := 0; b.Loop(); i++ {
		w.id = uint64(i + 1)
		w.woken = false
		r.register(w)
		r.wake(w.id)
		<-w.ch
		r.unregister(w)
	}
}

func BenchmarkSerialize(b *testing.B) {
	for b.Loop() {
		if _, err := serialize(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLockStats: the registry counts three acquisitions per request (its
// register, wake and unregister), times one hold in HoldSampleEvery, and
// GET /stats reports them with the requests dispatched; the sharded
// variant spreads the acquisitions over its shards.
func TestLockStats(t *testing.T) {
	r := newWaitRegistry(1)
	w := &waiter{ch: make(chan struct{}, 1)}
	const n = 640
	for i := range n {
		w.id, w.woken = uint64(i+1), false
		r.register(w)
		r.wake(w.id)
		<-w.ch
		r.unregister(w)
	}
	st := r.stats()
	if st.Acquisitions != 3*n || st.MaxShardAcquisitions != 3*n || st.TimedHolds != 3*n/holdSampleEvery || st.TimedHoldNS <= 0 {
		t.Errorf("stats %+v; want %d acquisitions, %d timed holds of some time", st, 3*n, 3*n/holdSampleEvery)
	}
	for _, variant := range []string{GlobalLock, Sharded, Baseline} {
		srv := httptest.NewServer(mustHandler(t, variant))
		for range 20 {
			resp, err := http.Get(srv.URL + "/json")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		resp, err := http.Get(srv.URL + "/stats")
		if err != nil {
			t.Fatal(err)
		}
		var got LockStats
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		srv.Close()
		switch {
		case err != nil:
			t.Errorf("%s: /stats: %v", variant, err)
		case variant == Baseline:
			if got.Variant != Baseline || got.Acquisitions != 0 || got.Shards != 0 {
				t.Errorf("baseline stats %+v; want no lock", got)
			}
		case got.Variant != variant || got.Requests != 20 || got.Acquisitions != 60:
			t.Errorf("%s: stats %+v; want 20 requests, 60 acquisitions", variant, got)
		case variant == Sharded && (got.Shards < 8 || got.MaxShardAcquisitions >= 60):
			t.Errorf("sharded stats %+v; want the acquisitions spread over 8 or more shards", got)
		}
	}
}

func mustHandler(t *testing.T, variant string) http.Handler {
	t.Helper()
	h, err := Handler(variant)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.(io.Closer).Close() })
	return h
}
