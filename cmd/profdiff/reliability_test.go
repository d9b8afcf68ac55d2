package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// runMeasured runs profdiff in a subprocess (see startProfdiff) in dir
// and returns its stderr, exit status, CPU time (user and system: the
// work it did, which a busy machine does not inflate as it does wall
// time) and peak RSS in bytes.
func runMeasured(t *testing.T, dir string, args ...string) (string, int, time.Duration, int64) {
	t.Helper()
	rssFile := filepath.Join(t.TempDir(), "rss")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Stderr = dir, &stderr
	cmd.Env = append(os.Environ(), docsExecEnv+"=1", launchEnv+"="+rssFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	code := waitExit(t, cmd)
	var kb, cpuNS int64
	b, err := os.ReadFile(rssFile)
	if err == nil {
		_, err = fmt.Sscan(string(b), &kb, &cpuNS)
	}
	if err != nil {
		t.Skipf("no peak memory or CPU time of the measured profdiff (%v)", err)
	}
	return stderr.String(), code, time.Duration(cpuNS), kb * 1024 // Linux: KiB
}

// launchEnv makes the test binary a launcher (runLauncherIfAsked): the
// rusage a parent gets for a child counts the parent's own peak, since Go
// starts children with vfork and Linux carries the parent's high-water
// mark across the child's exec. A freshly started launcher is small, so
// the peak it reads for the profdiff it starts is profdiff's own.
const launchEnv = "PROFDIFF_TEST_RSS_FILE"

// runLauncherIfAsked, when launchEnv names a file, runs this binary again
// with the same arguments and environment (but launchEnv), passing its
// standard streams and exit status through, writes the child's peak RSS
// in KiB and its CPU time in nanoseconds to the file, and exits.
func runLauncherIfAsked() {
	file := os.Getenv(launchEnv)
	if file == "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(2)
	}
	os.Unsetenv(launchEnv)
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(2)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if err := os.WriteFile(file, []byte(fmt.Sprint(ru.Maxrss, " ", cpu.Nanoseconds())), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "launcher:", err)
		}
	}
	os.Exit(cmd.ProcessState.ExitCode())
}

// gzipBomb is compress/gzip's stream of mib MiB of zeros, as repeated 64
// MiB members (which gzip readers read as one stream): 2 GiB is about 2 MB.
func gzipBomb(mib int) []byte {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 64<<20))
	zw.Close()
	return bytes.Repeat(member.Bytes(), mib/64)
}

// capture --max-size 10MiB against a server serving a 2 MB gzip of 2 GiB
// of zeros at every endpoint exits 2 having spent under 2 s of CPU (it
// stops decompressing at the limit; inflating the 2 GiB costs several
// seconds), naming the limit, and peaks under 100 MB (before: 22 s and
// 4.5 GB).
func TestCaptureBombMemory(t *testing.T) {
	t.Parallel()
	bomb := gzipBomb(2048)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(bomb) }))
	defer srv.Close()
	stderr, code, took, rss := runMeasured(t, t.TempDir(), "capture", "--max-size", "10MiB", "--duration", "1s", "--out", "cap", srv.URL)
	t.Logf("exit %d after %v of CPU, peak RSS %.1f MB", code, took, float64(rss)/1e6)
	if code != 2 || !strings.Contains(stderr, "cpu, wall, mutex, block, goroutine: decompresses to more than 10MiB") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if took > 2*time.Second && !raceEnabled {
		t.Errorf("spent %v of CPU; want well under the seconds that inflating 2 GiB costs", took)
	}
	if rss > 100e6 && !raceEnabled {
		t.Errorf("peak RSS %.1f MB; want under 100 MB", float64(rss)/1e6)
	}
}

// A loopback server redirecting to another host: refused, exit 2,
// nothing written but the manifest that says the capture is incomplete.
func TestCaptureRedirectRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.0.2.1"+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "cap")
	_, stderr, code := profdiff(t, "", "capture", "--duration", "1s", "--profiles", "cpu,trace", "--out", dir, srv.URL)
	want := "cpu: redirected to http://192.0.2.1/debug/pprof/profile: 192.0.2.1 is not a loopback address"
	if code != 2 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "trace: redirected to http://192.0.2.1/debug/pprof/trace: ") {
		t.Errorf("exit %d, stderr:\n%s\nwant %q", code, stderr, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != "manifest.json" {
		t.Errorf("folder holds %v", ents)
	}
}

// diff and top read a loopback URL that redirects to another host: the
// redirect is refused (no request leaves loopback), exit 2.
func TestProfileURLRedirectRefused(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Redirect(w, r, "http://192.0.2.1"+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	url := srv.URL + "/debug/pprof/heap"
	for _, args := range [][]string{{"top", url}, {"diff", url, url}} {
		_, stderr, code := profdiff(t, "", args...)
		if want := "redirected to http://192.0.2.1/debug/pprof/heap: 192.0.2.1 is not a loopback address"; code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant %q", args[0], code, stderr, want)
		}
	}
	if requests.Load() == 0 {
		t.Error("the loopback server was never asked")
	}
}

// A dead port: exit 2 with the cause said once, and a retry into the
// same folder is not refused as "not empty".
func TestCaptureDeadPortRetry(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	dir := filepath.Join(t.TempDir(), "cap")
	_, stderr, code := profdiff(t, "", "capture", "--duration", "1s", "--out", dir, url)
	if code != 2 || strings.Count(stderr, "connection refused") != 1 {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and the cause once", code, stderr)
	}
	srv := fakeDebugServer(t, true, 1)
	if _, stderr, code := profdiff(t, "", "capture", "--duration", "1s", "--out", dir, srv.URL); code != 0 {
		t.Errorf("retry: exit %d: %s", code, stderr)
	}
}

// pprofSides writes a synthetic base and new CPU profile (profile/synth,
// gzipped as runtime/pprof writes them) to dir and n links to each, named
// base-NNN.pb.gz and new-NNN.pb.gz: repeated captures of one program.
func pprofSides(t *testing.T, dir string, n int) {
	t.Helper()
	for side, name := range []string{"base", "new"} {
		one := filepath.Join(dir, name+".pb")
		cfg := synth.Config{Seed: 1, Stacks: 300, MinDepth: 10, MaxDepth: 30, Functions: 600, Side: synth.Side(side)}
		if err := synth.WriteFile(one, cfg); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := os.Symlink(one, filepath.Join(dir, fmt.Sprintf("%s-%03d.pb.gz", name, i))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// diff --output-pprof merges as it loads: with 60 profiles a side it
// peaks under 300 MB and about where it does with 10 a side, and the
// diff written holds each side 60 times (before, it kept every profile:
// 18.3 GB for 200 large ones a side, 890 MB and 79 s for 200 synthetic
// 500-stack ones). With PROFDIFF_TEST_LONG, 20 and 200 a side (46 and
// 43 MB here; 5 s of CPU). Skipped with -short and under the race
// detector.
func TestOutputPprofMemory(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("loads 140 profiles (minutes under the race detector, which also inflates memory)")
	}
	few, many := 10, 60
	if longTests() {
		few, many = 20, 200
	}
	peak := map[int]int64{}
	for _, n := range []int{few, many} {
		dir := t.TempDir()
		pprofSides(t, dir, n)
		stderr, code, took, rss := runMeasured(t, dir, "diff", "--output-pprof", "diff.pb.gz", "--format", "csv", "--base", "base-*.pb.gz", "--new", "new-*.pb.gz")
		t.Logf("%d a side: exit %d after %v of CPU, peak RSS %.1f MB", n, code, took, float64(rss)/1e6)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		peak[n] = rss
		d := readPprof(t, filepath.Join(dir, "diff.pb.gz"))
		for side, name := range []string{"base", "new"} {
			one := readPprof(t, filepath.Join(dir, name+".pb"))
			var want, got int64
			for _, s := range one.Sample {
				want += s.Value[1] * int64(n)
			}
			for _, s := range d.Sample {
				if (s.Label[profile.BaseLabel] != nil) == (side == 0) {
					got += s.Value[0]
				}
			}
			if side == 0 {
				want = -want
			}
			if got != want {
				t.Errorf("%d a side: %s total %d in the diff; want %d", n, name, got, want)
			}
		}
	}
	if peak[many] > 300e6 || peak[many] > peak[few]+30e6 {
		t.Errorf("peak RSS %.1f MB for %d a side, %.1f MB for %d: want under 300 MB and no growth with the count", float64(peak[many])/1e6, many, float64(peak[few])/1e6, few)
	}
}

func readPprof(t *testing.T, name string) *pprofile.Profile {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := pprofile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
