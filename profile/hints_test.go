package profile

import (
	"errors"
	"expvar"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/internal/corpus"
)

// An argument meant as a /debug/pprof URL without its scheme, that is no
// file, gets the URL it probably meant; other missing files do not.
func TestSchemelessURLHint(t *testing.T) {
	for src, want := range map[string]string{
		"127.0.0.1:6060/debug/pprof/heap":              "http://127.0.0.1:6060/debug/pprof/heap",
		"localhost:6060/debug/pprof/profile?seconds=5": "http://localhost:6060/debug/pprof/profile?seconds=5",
		"[::1]:6060/debug/pprof/mutex":                 "http://[::1]:6060/debug/pprof/mutex",
		"myhost.example:8080":                          "http://myhost.example:8080",
		":6060/debug/pprof/heap":                       "http://localhost:6060/debug/pprof/heap",
		"localhost/debug/pprof/heap":                   "http://localhost/debug/pprof/heap",
		"missing.pb.gz":                                "",
		"dir/missing.pb.gz":                            "",
		"C:/profiles/cpu.pb.gz":                        "",
	} {
		if got := GuessURL(src); got != want {
			t.Errorf("GuessURL(%q) = %q, want %q", src, got, want)
		}
		_, err := loadT(t, src, Options{})
		switch {
		case want != "":
			checkError(t, err, src, "not a file; did you mean "+want+"?")
		default:
			checkError(t, err, src, "no such file or directory")
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v does not wrap fs.ErrNotExist", src, err)
		}
	}
}

// The index page of a real net/http/pprof server says it is the index and
// names the profile URLs under it; other HTML pages (a real
// http.FileServer listing) say they are HTML.
func TestHTMLPages(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.Handle("/files/", http.StripPrefix("/files/", http.FileServer(http.Dir(t.TempDir()))))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, src := range []string{srv.URL + "/debug/pprof/", srv.URL + "/debug/pprof/?debug=1"} {
		_, err := loadT(t, src, Options{})
		checkError(t, err, src, "the /debug/pprof/ index page (HTML), not a profile; read a profile listed on it: "+
			srv.URL+"/debug/pprof/profile?seconds=30 (CPU), "+srv.URL+"/debug/pprof/heap, …/mutex, …/block, …/goroutine, or …/trace?seconds=5")
		if !errors.Is(err, ErrUnsupported) || strings.Contains(err.Error(), "folded") {
			t.Errorf("%s: %v", src, err)
		}
	}
	// The page saved to a file: the same message without the server's URL.
	resp, err := http.Get(srv.URL + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	page := readAllT(t, resp)
	path := writeTemp(t, "index.html", page)
	_, err = loadT(t, path, Options{})
	checkError(t, err, path, "index page (HTML)", "http://HOST:PORT/debug/pprof/profile?seconds=30")

	src := srv.URL + "/files/"
	_, err = loadT(t, src, Options{})
	checkError(t, err, src, "an HTML page, not a profile")
	if _, _, err := ParseFolded(page); err == nil || !strings.Contains(err.Error(), "index page") {
		t.Errorf("ParseFolded of the index page: %v", err)
	}
}

func readAllT(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// JSON that is not speedscope names what it looks like (V8 CPU profiles
// and Chrome traces are read instead). The V8 formats are written by
// Node.js (skipped without node); expvar's page by a
// real expvar handler. No tool here writes stackprof, Firefox or the
// speedscope look-alikes, so those are minimal documents that check the
// shapes only.
func TestDescribeJSON(t *testing.T) {
	if node, err := exec.LookPath("node"); err != nil {
		t.Log("node not found: skipping the Chrome/V8 formats Node.js writes")
	} else {
		dir := t.TempDir()
		cmd := exec.Command(node, "--cpu-prof", "--cpu-prof-dir="+dir, "--heap-prof", "--heap-prof-dir="+dir,
			"--trace-events-enabled", "--trace-event-categories", "v8", "--prof",
			"-e", "let a = []; for (let i = 0; i < 1e5; i++) a.push({i})")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
		// The CPU profile is read (profile/v8), not described.
		if m, _ := filepath.Glob(filepath.Join(dir, "*.cpuprofile")); len(m) != 1 {
			t.Fatalf("node wrote %q for *.cpuprofile", m)
		} else if l, err := loadT(t, m[0], Options{}); err != nil || l.Format != FormatV8 {
			t.Errorf("%s: %v, want it read as %s", m[0], err, FormatV8)
		}
		for pattern, want := range map[string]string{
			"*.heapprofile": "V8 sampling heap profile JSON (.heapprofile of Chrome DevTools or `node --heap-prof`), which holds allocated bytes, not time (record CPU time with `node --cpu-prof`",
			"isolate-*.log": "V8 --prof log (isolate-*.log of `node --prof`), raw ticks that only V8 can resolve (record with `node --cpu-prof` instead, which writes a .cpuprofile, or summarize the log with `node --prof-process`)",
		} {
			m, _ := filepath.Glob(filepath.Join(dir, pattern))
			if len(m) != 1 {
				t.Fatalf("node wrote %q for %s", m, pattern)
			}
			_, err := loadT(t, m[0], Options{})
			checkError(t, err, m[0], "unknown format: "+want)
			if !errors.Is(err, ErrUnsupported) || strings.Contains(err.Error(), "not supported") {
				t.Errorf("%s: %v", pattern, err)
			}
		}
	}
	// Heap profiles of Node.js 10's era, from the corpus (its older
	// .cpuprofile beside them is read: package v8's tests).
	if dir := corpus.Dir(); dir != "" {
		for file, want := range map[string]string{
			"speedscope/sample__profiles__node__10.11.0__Heap-20181003T105432.heapprofile": "unknown format: V8 sampling heap profile JSON",
			"speedscope/sample__profiles__Chrome__69__Heap-20181005T144546.heapprofile":    "unknown format: V8 sampling heap profile JSON",
		} {
			path := filepath.Join(dir, file)
			_, err := loadT(t, path, Options{})
			checkError(t, err, path, want)
		}
	}
	srv := httptest.NewServer(expvar.Handler())
	defer srv.Close()
	_, err := loadT(t, srv.URL, Options{})
	checkError(t, err, srv.URL, "expvar JSON (/debug/vars: runtime statistics, not a profile; the profiles are under /debug/pprof/)")

	for name, tc := range map[string]struct{ data, want string }{
		"no schema, no frames": {`{"profiles": [{"type": "sampled", "samples": [[0]], "weights": [1]}], "name": "x"}`,
			`JSON with some of speedscope's keys that is not a speedscope file: no "$schema", no "shared" frames (speedscope files have "$schema": "https://www.speedscope.app/file-format-schema.json")`},
		"wrong schema": {`{"$schema": "https://example.com/profile.json", "profiles": []}`, `"$schema" is "https://example.com/profile.json", no "shared" frames`},
		"firefox":      {`{"meta": {"version": 24}, "threads": [], "libs": []}`, "Firefox Profiler (Gecko) JSON"},
		"other object": {`{"a": 1, "b": [2], "c d": {"d": 3}}`, "unknown format: JSON with keys a, b, \"c d\"; profdiff reads"},
		"other array":  {`[{"x": 1, "y": 2}, {"x": 3}]`, "unknown format: a JSON array of objects with keys x, y;"},
	} {
		path := writeTemp(t, "x.json", []byte(tc.data))
		_, err := loadT(t, path, Options{})
		checkError(t, err, path, tc.want)
		if strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The other pages of a real net/http/pprof server that are not profiles
// say what they are, instead of a parse failure or a one-frame folded
// stack.
func TestDebugPprofPagesThatAreNotProfiles(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for path, want := range map[string]string{
		"/debug/pprof/goroutine?debug=2": "goroutine dump (a traceback, or /debug/pprof/goroutine?debug=2), not a profile",
		"/debug/pprof/cmdline":           "the program's command line (/debug/pprof/cmdline), not a profile",
		"/debug/pprof/symbol":            "/debug/pprof/symbol output, not a profile",
	} {
		_, err := loadT(t, srv.URL+path, Options{})
		checkError(t, err, srv.URL+path, want)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v is not ErrUnsupported", path, err)
		}
	}
	// Block profiling is off in this test binary: the empty profile says
	// how a program turns it on.
	src := srv.URL + "/debug/pprof/block"
	if _, err := loadT(t, src, Options{}); errors.Is(err, ErrEmpty) {
		checkError(t, err, src, "profile has no samples (Go records mutex and block profiles only after runtime.SetMutexProfileFraction or runtime.SetBlockProfileRate)")
	} else {
		t.Logf("block profile not empty here (%v); hint not checked", err)
	}
}

// A failed request names the URL once (as the source), and a timeout says
// it was one.
func TestFetchErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	dead := srv.URL + "/debug/pprof/heap"
	srv.Close()
	_, err := loadT(t, dead, Options{})
	checkError(t, err, dead, "fetching profile: dial tcp", "connection refused")
	if strings.Count(err.Error(), dead) != 1 {
		t.Errorf("the URL is named more than once: %v", err)
	}
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	_, err = loadT(t, slow.URL, Options{HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
	checkError(t, err, slow.URL, "fetching profile: no complete answer in time")
}

// An error page says its title, not its first line of markup. The page is
// the one nginx answers when its upstream is down (no proxy runs here).
func TestHTTPErrorPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n</body>\n</html>\n")
	}))
	defer srv.Close()
	_, err := loadT(t, srv.URL, Options{})
	checkError(t, err, srv.URL, "HTTP 502 Bad Gateway: 502 Bad Gateway")
	if strings.Contains(err.Error(), "<") {
		t.Errorf("markup in %v", err)
	}
}
