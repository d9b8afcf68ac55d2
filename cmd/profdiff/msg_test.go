package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/profile/source"
)

// pprofServer is a real net/http/pprof server on 127.0.0.1 that publishes
// its Go version on /debug/vars as profdiff's workload children do (see
// workloads/child/servers.go).
func pprofServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/vars", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"go_version": runtime.Version(), "gomaxprocs": runtime.GOMAXPROCS(0)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// The messages of diff and top for URLs: the /debug/pprof/ index page
// names the profiles to use, a URL without its scheme gets the one it
// meant, and a remote host is refused without --allow-remote.
func TestURLMessages(t *testing.T) {
	srv := pprofServer(t)
	index := srv.URL + "/debug/pprof/"
	_, stderr, code := profdiff(t, "", "top", index)
	if want := index + ": the /debug/pprof/ index page (HTML), not a profile; read a profile listed on it: " + index + "profile?seconds=30 (CPU), " + index + "heap, "; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("top of the index page: exit %d, want %q in\n%s", code, want, stderr)
	}
	if want := "(execution trace); or take them all at once with profdiff capture " + index + "\n"; !strings.Contains(stderr, want) {
		t.Errorf("top of the index page: no capture hint %q in\n%s", want, stderr)
	}
	noScheme := strings.TrimPrefix(srv.URL, "http://") + "/debug/pprof/heap"
	_, stderr, code = profdiff(t, "", "diff", noScheme, index+"heap")
	if want := noScheme + ": not a file; did you mean http://" + noScheme + "?"; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("diff of a URL without scheme: exit %d, want %q in\n%s", code, want, stderr)
	}
	// With a query, the argument is not taken for a glob pattern.
	noScheme = strings.TrimPrefix(srv.URL, "http://") + "/debug/pprof/profile?seconds=5"
	_, stderr, code = profdiff(t, "", "top", noScheme)
	if want := noScheme + ": not a file; did you mean http://" + noScheme + "?"; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("top of a URL without scheme, with a query: exit %d, want %q in\n%s", code, want, stderr)
	}
	remote := "http://192.0.2.1:6060/debug/pprof/heap" // TEST-NET-1: never reached
	for _, args := range [][]string{{"top", remote}, {"diff", index + "heap", remote}, {"gate", "--base", index + "heap", "--new", remote}} {
		_, stderr, code = profdiff(t, "", args...)
		if want := remote + ": 192.0.2.1 is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote"; code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, want %q in\n%s", args[0], code, want, stderr)
		}
	}
}

// A profile read from a real capture folder carries the Go version the
// folder's manifest records, for the engine's comparability checks; a
// plain file does not.
func TestCaptureFolderGoVersion(t *testing.T) {
	srv := pprofServer(t)
	dir := filepath.Join(t.TempDir(), "cap")
	if _, err := capture.Capture(context.Background(), srv.URL, capture.Options{Seconds: 1, Out: dir, Profiles: []string{"goroutine"}, Log: io.Discard}); err != nil {
		t.Fatal(err)
	}
	m, err := capture.ReadManifest(dir)
	if err != nil || m.GoVersion != runtime.Version() {
		t.Fatalf("manifest go version %q (%v), want %s", m.GoVersion, err, runtime.Version())
	}
	plain := filepath.Join(t.TempDir(), "g.pb.gz")
	captureGoroutines(t, plain, false)
	sides := []source.Side{{Name: "BASE", Args: []string{dir}}, {Name: "NEW", Args: []string{filepath.Join(dir, "goroutine.pb.gz"), plain}}}
	var got []string
	err = loadProfiles(context.Background(), "diff", io.Discard, sides, source.Options{Kind: "goroutine"}, func(_ result.Side, l *profile.Loaded) error {
		got = append(got, l.GoVersion)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{runtime.Version(), runtime.Version(), ""}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Go versions %q, want %q", got, want)
	}
}
