package child

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const envTestParent = "PROFDIFF_CHILD_TEST_PARENT"

func TestMain(m *testing.M) {
	MaybeRun(testTable())
	if os.Getenv(envTestParent) != "" {
		testParent()
		return
	}
	os.Exit(m.Run())
}

// testParent is the middle process of TestParentKilledLeavesNoOrphan: it
// starts a child, prints its pid and waits to be killed.
func testParent() {
	p, err := Start(context.Background(), Builtin(), Spec{Workload: "json", Variant: "baseline", Cores: 1})
	if err != nil {
		os.Stdout.WriteString("ERROR " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("CHILDPID " + strconv.Itoa(p.Pid) + "\n")
	select {} // until SIGKILL
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestStartServeStop(t *testing.T) {
	for _, cores := range []int{1, 2} {
		t.Run("cores="+strconv.Itoa(cores), func(t *testing.T) {
			p, err := Start(context.Background(), Builtin(), Spec{Workload: "json", Variant: "global-lock", Cores: cores})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			if !strings.HasPrefix(p.URL, "http://127.0.0.1:") || !strings.HasPrefix(p.DebugURL, "http://127.0.0.1:") || p.URL == p.DebugURL {
				t.Fatalf("URL %q DebugURL %q", p.URL, p.DebugURL)
			}
			if code, body := get(t, p.URL+"/json"); code != 200 || string(body) != `{"message":"Hello, World!"}` {
				t.Errorf("/json: %d %q", code, body)
			}
			if code, _ := get(t, p.URL+"/debug/pprof/"); code != 404 {
				t.Errorf("workload port serves /debug/pprof/ (status %d); it must be on the debug port only", code)
			}
			if code, body := get(t, p.DebugURL+"/debug/pprof/"); code != 200 || !strings.Contains(string(body), "mutex") {
				t.Errorf("/debug/pprof/: %d", code)
			}
			code, body := get(t, p.DebugURL+"/debug/vars")
			var vars struct {
				GOMAXPROCS    int    `json:"gomaxprocs"`
				Pid           int    `json:"pid"`
				Variant       string `json:"variant"`
				GoVersion     string `json:"go_version"`
				MutexFraction int    `json:"mutex_profile_fraction"`
				BlockRate     int    `json:"block_profile_rate"`
				CPUs          []int  `json:"cpus"`
			}
			if err := json.Unmarshal(body, &vars); code != 200 || err != nil {
				t.Fatalf("/debug/vars: %d %v %s", code, err, body)
			}
			if vars.GOMAXPROCS != cores || p.GOMAXPROCS != cores {
				t.Errorf("GOMAXPROCS: vars %d, readiness line %d; want %d", vars.GOMAXPROCS, p.GOMAXPROCS, cores)
			}
			if vars.Pid != p.Pid || vars.Variant != "global-lock" || vars.GoVersion != runtime.Version() {
				t.Errorf("vars %+v (pid %d)", vars, p.Pid)
			}
			if vars.MutexFraction != DefaultMutexFraction || vars.BlockRate != DefaultBlockRate {
				t.Errorf("rates %d %d", vars.MutexFraction, vars.BlockRate)
			}
			if runtime.GOOS == "linux" && runtime.NumCPU() >= cores {
				if len(p.CPUs) != cores {
					t.Errorf("pinned to %v; want %d CPUs", p.CPUs, cores)
				}
				checkAffinity(t, p.Pid, p.CPUs)
			}
			if d, err := p.CPUTime(); runtime.GOOS == "linux" && (err != nil || d < 0) {
				t.Errorf("CPUTime = %v, %v", d, err)
			}
			if err := p.Stop(); err != nil {
				t.Errorf("Stop: %v", err)
			}
			if !gone(p.Pid) {
				t.Errorf("child %d still exists after Stop", p.Pid)
			}
			if d, err := p.CPUTime(); err != nil || d <= 0 {
				t.Errorf("CPUTime after Stop = %v, %v; want > 0 from rusage", d, err)
			}
			if err := p.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

// checkAffinity reads every thread's Cpus_allowed_list.
func checkAffinity(t *testing.T, pid int, cpus []int) {
	t.Helper()
	want := formatCPUList(cpus)
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no tasks: %v", err)
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // thread exited
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				got := expandRanges(strings.TrimSpace(v))
				if got != want {
					t.Errorf("%s: Cpus_allowed_list %s; want %s", f, got, want)
				}
			}
		}
	}
}

// expandRanges turns "0-2,5" into "0,1,2,5".
func expandRanges(s string) string {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if isRange {
			b, _ = strconv.Atoi(hi)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return formatCPUList(out)
}

func TestContextCancelStopsChild(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Builtin(), Spec{Workload: "json", Variant: "baseline", Cores: 1})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-p.Done():
	case <-time.After(15 * time.Second):
		p.Stop()
		t.Fatal("child still running 15 s after its context was cancelled")
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop after cancel: %v", err)
	}
	if !gone(p.Pid) {
		t.Errorf("child %d still exists", p.Pid)
	}
}

func TestStartRefusesBadSpecs(t *testing.T) {
	for _, spec := range []Spec{
		{Workload: "nope", Variant: "baseline"},
		{Workload: "json", Variant: "nope"},
		{Workload: "json", Variant: "baseline", Cores: -1},
	} {
		if p, err := Start(context.Background(), Builtin(), spec); err == nil {
			p.Stop()
			t.Errorf("Start(%+v) succeeded", spec)
		}
	}
}

func TestTable(t *testing.T) {
	if got := Builtin().Names(); strings.Join(got, ",") != "json,wasm" {
		t.Errorf("Builtin().Names() = %v", got)
	}
	// Start checks the name against the table it is given, not Builtin.
	small := Table{"echo": func(Params) (http.Handler, error) { return http.NotFoundHandler(), nil }}
	_, err := Start(context.Background(), small, Spec{Workload: "json"})
	if err == nil || !strings.Contains(err.Error(), `unknown workload "json" (have echo)`) {
		t.Errorf("Start with json not in the table: %v", err)
	}
}

// A child that exited without a line of serveChild's own (the program did
// not call MaybeRun) gets the hint; a child that logged its failure does
// not.
func TestStderrTailHint(t *testing.T) {
	p := &Process{stderr: &tailBuffer{w: io.Discard, max: 4096}}
	p.stderr.Write([]byte("usage: prog [flags]\n"))
	if got := p.stderrTail(true); !strings.Contains(got, "never reached child.MaybeRun") {
		t.Errorf("no hint: %q", got)
	}
	q := &Process{stderr: &tailBuffer{w: io.Discard, max: 4096}}
	q.stderr.Write([]byte(childLogPrefix + "12: unknown workload\n"))
	if got := q.stderrTail(true); strings.Contains(got, "MaybeRun") {
		t.Errorf("hint although the child logged its own failure: %q", got)
	}
}

func TestProcCPUTimeSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	if _, err := procCPUTime(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := procCPUTime(1 << 30); err == nil {
		t.Error("no error for a missing pid")
	}
}

func TestReadyLine(t *testing.T) {
	var p Process
	if err := p.parseReady("PROFDIFF_CHILD_READY http://127.0.0.1:1 http://127.0.0.1:2 gomaxprocs=3 cpus=0,1,2 future=x"); err != nil {
		t.Fatal(err)
	}
	if p.URL != "http://127.0.0.1:1" || p.DebugURL != "http://127.0.0.1:2" || p.GOMAXPROCS != 3 || formatCPUList(p.CPUs) != "0,1,2" {
		t.Errorf("%q %q %d %v", p.URL, p.DebugURL, p.GOMAXPROCS, p.CPUs)
	}
	if err := p.parseReady("PROFDIFF_CHILD_READY x"); err == nil {
		t.Error("malformed line accepted")
	}
	var q Process
	q.parseReady("PROFDIFF_CHILD_READY http://a http://b cpus=-")
	if q.CPUs != nil {
		t.Errorf("cpus=- gave %v", q.CPUs)
	}
}
