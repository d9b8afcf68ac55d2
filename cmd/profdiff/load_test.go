package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/profdiff/profdiff/workloads/loadgen"
)

// loadServer answers JSON, and 503 to the first request and every
// every503-th after it (so a run that sends any request at all, however
// slow the machine, meets a 503); it remembers the last X-Run header it saw.
func loadServer(t *testing.T, every503 int64, seen *atomic.Value) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen.Store(r.Header.Get("X-Run"))
		}
		if every503 > 0 && (n.Add(1)-1)%every503 == 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"message":"Hello, World!"}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestLoadJSON(t *testing.T) {
	var seen atomic.Value
	s := loadServer(t, 0, &seen)
	out, stderr, code := profdiff(t, "", "load", "--connections", "4", "--duration", "300ms", "--warmup", "50ms",
		"--format", "json", "-H", "X-Run: 1", s.URL+"/json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep loadgen.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Connections != 4 || rep.ConnectionsOpened != 4 || rep.Sent == 0 || rep.OK != rep.Sent || rep.RPSOK <= 0 {
		t.Errorf("report %+v", rep)
	}
	if rep.Non2xx == nil || !strings.Contains(out, `"non_2xx": {}`) {
		t.Errorf("non_2xx must be {}:\n%s", out)
	}
	if seen.Load() != "1" {
		t.Errorf("--header X-Run: 1 not sent: %v", seen.Load())
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
}

func TestLoadFailuresAreLoud(t *testing.T) {
	s := loadServer(t, 4, nil)
	out, stderr, code := profdiff(t, "", "load", "-c", "2", "-d", "300ms", "--warmup", "0s", s.URL)
	if code != 0 {
		t.Fatalf("exit %d (failed requests are reported, not an error): %s", code, stderr)
	}
	first, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, "WARNING: ") || !strings.Contains(first, " requests failed (503: ") ||
		!strings.HasSuffix(first, "requests/s counts only 2xx responses — this is not saturation") {
		t.Errorf("first line: %s", first)
	}
	s = loadServer(t, 4, nil) // a server of its own: its first request fails
	out, stderr, code = profdiff(t, "", "load", "-c", "2", "-d", "300ms", "--warmup", "0s", "--format", "json", s.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep loadgen.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Non2xx["503"] == 0 || rep.OK+rep.Non2xx["503"] != rep.Sent {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(stderr, "profdiff: WARNING: ") || !strings.Contains(stderr, "this is not saturation") {
		t.Errorf("JSON output: the warning must also reach stderr: %q", stderr)
	}
}

func TestLoadBadUsage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	ok := "http://127.0.0.1:1/"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"load"}, "want one URL"},
		{[]string{"load", ok, ok}, "want one URL"},
		{[]string{"load", "ftp://127.0.0.1/"}, "only http:// is supported"},
		{[]string{"load", "https://127.0.0.1/"}, "only http:// is supported"},
		{[]string{"load", "127.0.0.1:8080"}, "bad URL"},
		{[]string{"load", "http://10.1.2.3:8080/"}, "10.1.2.3 is not a loopback address"},
		{[]string{"load", "http://example.com/"}, "--allow-remote"},
		{[]string{"load", "--format", "xml", ok}, `unknown format "xml"`},
		{[]string{"load", "-c", "0", ok}, "--connections must be positive"},
		{[]string{"load", "-d", "0s", ok}, "--duration must be positive"},
		{[]string{"load", "--warmup", "-1s", ok}, "--warmup must not be negative"},
		{[]string{"load", "--timeout", "0s", ok}, "--timeout must be positive"},
		{[]string{"load", "-H", "novalue", ok}, `want "Name: value"`},
		{[]string{"load", "--bogus", ok}, "unknown flag"},
		{[]string{"load", "-H", "Bad Name: x", "-d", "100ms", "--allow-remote", ok}, "bad header name"},
		{[]string{"load", "-c", "2", "-d", "100ms", "--timeout", "1s", closed}, "cannot connect to"},
	} {
		out, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.msg) || out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2 and %q", c.args, code, stderr, out, c.msg)
		}
	}
	if out, stderr, code := profdiff(t, "", "load", "--help"); code != 0 || !strings.Contains(out, "--allow-remote") || stderr != "" {
		t.Errorf("load --help: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestCheckLoadURL(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:80/", "http://127.8.9.10/", "http://[::1]:8080/json", "http://localhost:1/", "http://LOCALHOST/"} {
		if err := checkLoadURL(u, false); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://0.0.0.0/", "http://192.168.1.1/", "http://[::]/", "http://localhost.example.com/"} {
		if err := checkLoadURL(u, false); err == nil {
			t.Errorf("%s: accepted without --allow-remote", u)
		}
		if err := checkLoadURL(u, true); err != nil {
			t.Errorf("%s with --allow-remote: %v", u, err)
		}
	}
}
