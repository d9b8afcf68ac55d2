package main

import (
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A password in a profile URL is used to fetch but never shown or stored:
// against a loopback server that demands it (basic auth), top, diff,
// gate, capture, load and their errors write "user:xxxxx" where they name the
// URL, and the password appears in no output, no message and no file.
func TestURLPasswordNeverShown(t *testing.T) {
	const pw = "s3cretPW"
	folded, err := os.ReadFile(net10)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/goroutine", httppprof.Handler("goroutine"))
	mux.HandleFunc("/p.folded", func(w http.ResponseWriter, r *http.Request) { w.Write(folded) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != pw {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server not on loopback: %s", srv.URL)
	}
	auth := "http://user:" + pw + "@" + strings.TrimPrefix(srv.URL, "http://")
	shown := "user:xxxxx@"
	dir := t.TempDir()
	capDir := filepath.Join(dir, "cap")
	for _, c := range []struct {
		name  string
		code  int
		shown bool // the redacted URL is expected in the output
		args  []string
	}{
		{"top table", 0, true, []string{"top", auth + "/p.folded"}},
		{"top json", 0, true, []string{"top", "--format", "json", auth + "/p.folded"}},
		{"top goroutine", 0, true, []string{"top", auth + "/debug/pprof/goroutine"}},
		{"diff markdown", 0, true, []string{"diff", "--format", "markdown", auth + "/p.folded", net10}},
		{"diff json", 0, true, []string{"diff", "--format", "json", auth + "/p.folded", auth + "/p.folded"}},
		{"diff html", 0, true, []string{"diff", "--format", "html", auth + "/p.folded", net10}},
		{"gate", 0, false, []string{"gate", "--base", auth + "/p.folded", "--new", auth + "/p.folded"}},
		{"404", 2, true, []string{"top", auth + "/nope"}},
		{"refused", 2, true, []string{"top", "http://user:" + pw + "@example.com/p"}},
		{"bad URL", 2, true, []string{"top", auth + "/%zz"}},
		{"bad scheme", 2, true, []string{"top", "ftp://user:" + pw + "@127.0.0.1/p"}},
		{"capture", 0, true, []string{"capture", "--duration", "1s", "--profiles", "goroutine", "--out", capDir, auth + "/debug/pprof/"}},
		{"capture json", 0, true, []string{"capture", "--format", "json", "--duration", "1s", "--profiles", "goroutine", "--out", filepath.Join(dir, "cap2"), auth}},
		{"load", 2, true, []string{"load", "-c", "1", auth + "/p.folded"}},
		{"load bad URL", 2, true, []string{"load", auth + "/%zz"}},
		{"capture nothing", 2, true, []string{"capture", "--duration", "1s", "--profiles", "cpu", "--out", filepath.Join(dir, "cap3"), auth}},
	} {
		out, stderr, code := profdiff(t, "", c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", c.name, code, c.code, stderr)
		}
		if strings.Contains(out+stderr, pw) {
			t.Errorf("%s: the password is shown:\n%s\n%s", c.name, out, stderr)
		}
		if c.shown && !strings.Contains(out+stderr, shown) {
			t.Errorf("%s: the URL is not named (%q):\n%s\n%s", c.name, shown, out, stderr)
		}
	}
	// Nothing written holds it; the manifests are the owner's only.
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), pw) {
			t.Errorf("%s holds the password", path)
		}
		if fi.Name() == "manifest.json" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, fi.Mode().Perm())
		}
		return nil
	})
	if b, err := os.ReadFile(filepath.Join(capDir, "manifest.json")); err != nil || !strings.Contains(string(b), shown) {
		t.Errorf("the manifest does not name the URL redacted (%v):\n%s", err, b)
	}
}
