package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// goroutineProfiles returns two goroutine profiles written by the Go
// runtime in a child process (this test binary running
// TestGoroutineFixtureChild alone, so that no other test's goroutines are
// in them): the base before, the new while requests to an HTTP server and
// goroutines waiting on a mutex are parked. Their methods have long Go
// names (net/http.(*persistConn).writeLoop,
// github.com/profdiff/profdiff/cmd/profdiff.parkOnMutex).
func goroutineProfiles(t *testing.T) (base, new string) {
	t.Helper()
	dir := childProfiles(t, "TestGoroutineFixtureChild", "PROFDIFF_GOROUTINE_FIXTURE")
	return filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "new.pb.gz")
}

// childProfiles runs this test binary's test alone in a child process,
// with env naming a new folder that it writes its profiles in, and
// returns the folder.
func childProfiles(t *testing.T, test, env string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child that writes the profiles (%s): %v\n%s", test, err, out)
	}
	return dir
}

// TestGoroutineFixtureChild writes goroutineProfiles' profiles; it runs
// only as that child.
func TestGoroutineFixtureChild(t *testing.T) {
	dir := os.Getenv("PROFDIFF_GOROUTINE_FIXTURE")
	if dir == "" {
		t.Skip("writes goroutineProfiles' profiles, run by it in a child process")
	}
	snapshot := func(name string) { captureGoroutines(t, filepath.Join(dir, name), false) }
	snapshot("base.pb.gz")
	release := make(chan struct{})
	srv := httptest.NewServer(lateHandler(release))
	var mu sync.Mutex
	mu.Lock()
	var wg sync.WaitGroup
	before := runtime.NumGoroutine()
	for range 4 {
		wg.Add(2)
		go slowGet(srv.URL, &wg)
		go parkOnMutex(&mu, &wg)
	}
	// Each request takes a client and a server goroutine or more; wait
	// until they exist (a condition, not a time) before the snapshot.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() < before+12 && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	snapshot("new.pb.gz")
	close(release)
	mu.Unlock()
	wg.Wait()
	srv.Close()
}

// slowGet requests url, a server that answers late.
func slowGet(url string, wg *sync.WaitGroup) {
	defer wg.Done()
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
	}
}

// parkOnMutex waits for mu, held by its caller.
func parkOnMutex(mu *sync.Mutex, wg *sync.WaitGroup) {
	defer wg.Done()
	mu.Lock()
	mu.Unlock() //nolint:staticcheck // parked in Lock is the point
}

// lateHandler answers once it is closed.
type lateHandler chan struct{}

func (h lateHandler) ServeHTTP(http.ResponseWriter, *http.Request) { <-h }

// The Markdown diff fits a pull request comment: no table line over 120
// characters, sources without their shared (here absolute) directories,
// and every name a table shortened whole in the Full names block; for
// .NET names and for Go names recorded here, in diff and in gate.
func TestMarkdownFitsComment(t *testing.T) {
	goBase, goNew := goroutineProfiles(t)
	dir := filepath.Dir(goBase)
	for _, args := range [][]string{
		{"diff", "--format", "markdown", net10, net11},
		{"diff", "--format", "markdown", goBase, goNew},
		{"top", "--format", "markdown", goNew},
		{"gate", "--format", "markdown", "--max", "lock-contention=+1pp", "--base", goBase, "--new", goNew},
	} {
		out, stderr, code := profdiff(t, "", args...)
		if code > 1 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		if strings.Contains(out, dir) || strings.Contains(out, "testdata/dotnet") {
			t.Errorf("%q: a source's directories are shown:\n%s", args, out)
		}
		short := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "|") && len([]rune(l)) > 120 {
				t.Errorf("%q: a table line of %d characters: %s", args, len([]rune(l)), l)
			}
			if strings.HasPrefix(l, "- `") {
				short++
			}
		}
		if args[0] == "diff" && args[3] == net10 && (short == 0 || !strings.Contains(out, "<details><summary>Full names</summary>") ||
			!strings.Contains(out, "`System.Threading.LowLevelLock.WaitAndAcquire`")) {
			t.Errorf("%q: no full names for the shortened ones:\n%s", args, out)
		}
	}
}

// The demo's own profiles (sharedDemo's run) diff to Markdown that fits a
// PR comment: no table line over 120 characters, no absolute path.
func TestDemoMarkdownFitsComment(t *testing.T) {
	t.Parallel() // a few seconds of wall time, overlapping the other slow tests
	dir, _ := sharedDemo(t)
	for _, kind := range []string{"wall", "mutex", "cpu"} {
		args := []string{"diff", "--format", "markdown", "--kind", kind, filepath.Join(dir, "baseline"), filepath.Join(dir, "global-lock")}
		out, stderr, code := profdiff(t, "", args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		if strings.Contains(out, dir) || !strings.Contains(out, "### profdiff: baseline/"+kind+".pb.gz → global-lock/"+kind+".pb.gz\n") {
			t.Errorf("%q: the sources are not named by their short names:\n%s", args, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "|") && len([]rune(l)) > 120 {
				t.Errorf("%q: a table line of %d characters: %s", args, len([]rune(l)), l)
			}
		}
	}
}
