package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixge/fgprof"

	"github.com/profdiff/profdiff/diff/series"
)

// seriesJSON is the part of `series --format json` the tests read.
type seriesJSON struct {
	Measure string
	Steps   []struct {
		Name string
		Runs int
		Test string
	}
	Buckets []struct {
		Bucket  string
		Changes []struct {
			Step     int
			StepName string `json:"step_name"`
			Note     string
			P        *float64
		}
	}
	Methods []struct {
		Name    string
		Changes []struct{ Step int }
	}
	Substitutions []struct {
		Step    int
		In, Out []string
	}
}

// changesAt are the bucket changes at each step: step index → bucket → note.
func (s *seriesJSON) changesAt() map[int]map[string]string {
	out := map[int]map[string]string{}
	for _, b := range s.Buckets {
		for _, c := range b.Changes {
			if out[c.Step] == nil {
				out[c.Step] = map[string]string{}
			}
			out[c.Step][b.Bucket] = c.Note
		}
	}
	return out
}

// seriesSleep and seriesLocked are the series test program's waits: a
// sleep, or the same sleep under a shared mutex.
//
//go:noinline
func seriesSleep() { time.Sleep(time.Millisecond) }

//go:noinline
func seriesLocked(mu *sync.Mutex) {
	mu.Lock()
	seriesSleep()
	mu.Unlock()
}

// captureSeriesRun runs four workers that sleep in a loop for 100ms,
// under one mutex when contended (so three of them wait for it), and
// writes the fgprof wall-clock profile of that window to path.
func captureSeriesRun(t *testing.T, path string, contended bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	stopProfile := fgprof.Start(f, fgprof.FormatPprof)
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(100 * time.Millisecond)
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if contended {
					seriesLocked(&mu)
				} else {
					seriesSleep()
				}
			}
		})
	}
	wg.Wait()
	if err := stopProfile(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSeriesAttributes records the test program (fgprof) in four steps
// of five runs, the mutex in the third step only: the series attributes the lock
// contention to the third step with the U test, its recovery to the
// fourth, and flags nothing at the second, where nothing changed.
func TestSeriesAttributes(t *testing.T) {
	dir := t.TempDir()
	steps := []string{"a", "same", "mutex", "fixed"}
	for _, st := range steps {
		if err := os.Mkdir(filepath.Join(dir, st), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 5; i++ { // interleaved, as TestGateRealRegression does
		for _, st := range steps {
			captureSeriesRun(t, filepath.Join(dir, st, fmt.Sprintf("wall-%d.pb.gz", i)), st == "mutex")
		}
	}
	var args []string
	for _, st := range steps {
		args = append(args, st+"="+filepath.Join(dir, st, "*.pb.gz"))
	}
	out, stderr, code := profdiff(t, "", append([]string{"series", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var s seriesJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	for i, st := range s.Steps {
		if st.Runs != 5 || i > 0 && st.Test != "u-test" {
			t.Errorf("step %s: %d runs, test %q; want 5 runs and the U test", st.Name, st.Runs, st.Test)
		}
	}
	at := s.changesAt()
	t.Logf("changes by step: %v", at)
	if len(at[1]) > 0 {
		t.Errorf("changes flagged at step same, where nothing changed: %v", at[1])
	}
	if n := at[2]["lock-contention"]; n == "" || n == "recovered" {
		t.Errorf("lock-contention at step mutex: %q, want a growth; all: %v", n, at)
	}
	if n := at[3]["lock-contention"]; n != "recovered" {
		t.Errorf("lock-contention at step fixed: %q, want recovered; all: %v", n, at)
	}
	for _, m := range s.Methods {
		for _, c := range m.Changes {
			if c.Step == 1 {
				t.Errorf("method %s flagged at step same", m.Name)
			}
		}
	}
	// The sleeps the lock took the place of: a substitution at mutex.
	if len(s.Substitutions) == 0 || s.Substitutions[0].Step != 2 || !strings.HasSuffix(s.Substitutions[0].In[0], "seriesLocked") ||
		!strings.HasSuffix(s.Substitutions[0].Out[0], "seriesSleep") {
		t.Errorf("substitutions %+v, want seriesLocked replacing seriesSleep at step mutex", s.Substitutions)
	}
}

func TestSeriesUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"series", "a=" + net10}, "want at least two steps"},
		{[]string{"series", "a=" + net10, "b=" + net11, "a=" + net10}, `step "a" is given twice`},
		{[]string{"series", "--metric", "rps=1,2,3", "a=" + net10, "b=" + net11}, "--metric has 3 values for 2 steps"},
		{[]string{"series", "--flame", "a,b", "a=" + net10, "b=" + net11}, "--flame draws in the html page"},
		{[]string{"series", "--format", "html", "--flame", "a,c", "a=" + net10, "b=" + net11}, `no step "c"`},
		{[]string{"series", "--normalize", "value", "a=" + net10, "b=" + net11}, "--normalize is share or rate, not value"},
		{[]string{"series", "--normalize", "rate", "a=" + net10, "b=" + net11}, "--normalize rate: a profile has no rate: [" + net10 + "] in step a"},
	} {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// Steps given as paths are named by the shortest tail that tells them
// apart; the metric sits in the table's first row.
func TestSeriesNamesAndMetric(t *testing.T) {
	out, stderr, code := profdiff(t, "", "series", "--metric", "req/s=41200,38000", "--format", "markdown", net10, net11)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"| Bucket          | net10.folded | net11.folded |", "| req/s           |        41200 |        38000 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	csv, _, code := profdiff(t, "", "series", "--metric", "req/s=41200,38000", "--format", "csv", net10, net11)
	if code != 0 || !strings.Contains(csv, "\nmetric,req/s,,net11.folded,,38000,,,,,\n") {
		t.Errorf("csv: exit %d, no metric record:\n%s", code, csv)
	}
	if got := tails([]string{"x/run1/cores-2", "y/run1/cores-2", "z"}, []int{0, 1, 2}); strings.Join(got, " ") != "x/run1/cores-2 y/run1/cores-2 z" {
		t.Errorf("tails: %v", got)
	}
}

// TestSeriesWorkload checks the two series of workloads/series.sh
// (PROFDIFF_SERIES_JSON, the wall-clock profiles on rates without GC
// assists, and PROFDIFF_SERIES_CPU_JSON, the CPU profiles on shares;
// skipped without): every step of as many runs, five or more, judged by the U test;
// nothing flagged at the control step in either; GC pressure at gc in the
// CPU series, and no lock contention there in either; the lock at gc-lock
// in the wall series (and gc not growing there); its recovery at fewer.
// GC is judged on the CPU profiles because the wall-clock sampler sees
// goroutines only: GC's mark workers never reach it, and the goroutines
// it catches assisting are too few and too bursty to measure GC by.
func TestSeriesWorkload(t *testing.T) {
	wallPath, cpuPath := os.Getenv("PROFDIFF_SERIES_JSON"), os.Getenv("PROFDIFF_SERIES_CPU_JSON")
	if wallPath == "" || cpuPath == "" {
		t.Skip("PROFDIFF_SERIES_JSON or PROFDIFF_SERIES_CPU_JSON is unset: workloads/series.sh sets them")
	}
	read := func(path string) (idx map[string]int, at map[int]map[string]string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var s seriesJSON
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		idx = map[string]int{}
		for i, st := range s.Steps {
			idx[st.Name] = i
			if st.Runs < series.MinRuns || st.Runs != s.Steps[0].Runs || i > 0 && st.Test != "u-test" {
				t.Errorf("%s: step %s: %d runs, test %q; want %d or more, as many as step %s, and the U test", path, st.Name, st.Runs, st.Test, series.MinRuns, s.Steps[0].Name)
			}
		}
		return idx, s.changesAt()
	}
	grew := func(n string) bool {
		return n != "" && n != "gone" && n != "recovered" && !strings.HasPrefix(n, "-") && !strings.HasPrefix(n, "1/") && n != "halved"
	}
	wi, wall := read(wallPath)
	ci, cpu := read(cpuPath)
	t.Logf("wall series, changes by step: %v", wall)
	t.Logf("cpu series, changes by step: %v", cpu)
	if len(wall[wi["again"]]) > 0 || len(cpu[ci["again"]]) > 0 {
		t.Errorf("flagged at the control step again: wall %v, cpu %v", wall[wi["again"]], cpu[ci["again"]])
	}
	if !grew(cpu[ci["gc"]]["gc"]) {
		t.Errorf("cpu series at gc: %v; want gc grown", cpu[ci["gc"]])
	}
	if wall[wi["gc"]]["lock-contention"] != "" || cpu[ci["gc"]]["lock-contention"] != "" {
		t.Errorf("lock-contention changed at gc: wall %v, cpu %v", wall[wi["gc"]], cpu[ci["gc"]])
	}
	if !grew(wall[wi["gc-lock"]]["lock-contention"]) || grew(cpu[ci["gc-lock"]]["gc"]) {
		t.Errorf("at gc-lock: wall %v, cpu %v; want lock-contention grown, gc not", wall[wi["gc-lock"]], cpu[ci["gc-lock"]])
	}
	if n := wall[wi["fewer"]]["lock-contention"]; n != "recovered" {
		t.Errorf("at fewer: lock-contention %q, want recovered; all %v", n, wall[wi["fewer"]])
	}
}

// Bad input: steps of different sample types, and a file that is no
// profile, fail with exit 2 and say which step or file.
func TestSeriesBadInput(t *testing.T) {
	dir := t.TempDir()
	cpu := filepath.Join(dir, "cpu.pb.gz")
	writeTinyProfile(t, cpu, "cpu", "nanoseconds", map[string]int64{"main.main;main.work": 10})
	junk := filepath.Join(dir, "junk.pb.gz")
	if err := os.WriteFile(junk, []byte("not a profile\x00\x01"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"series", "a=" + net10, "b=" + cpu}, "different sample types: samples/count in step a, cpu/nanoseconds in step b"},
		{[]string{"series", "a=" + net10, "b=" + junk}, junk},
	} {
		out, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, stderr, c.want)
		}
	}
}

// The html page has a chart per principal bucket and, with --flame, the
// flame graph of the two steps' diff.
func TestSeriesHTML(t *testing.T) {
	args := []string{"--format", "html", "net10=" + net10, "net11=" + net11}
	plain, stderr, code := profdiff(t, "", append([]string{"series"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	// cpu, wait, lock-contention, gc and io are each 1% or more of a step.
	if n := strings.Count(plain, `class="chart"`); n != 5 || strings.Contains(plain, `class="flame"`) {
		t.Errorf("%d charts (want 5), flame %v (want none without --flame)", n, strings.Contains(plain, `class="flame"`))
	}
	page, stderr, code := profdiff(t, "", append([]string{"series", "--flame", "net10,net11"}, args...)...)
	if code != 0 || !strings.Contains(page, `class="flame"`) || !strings.Contains(page, "System.Threading.LowLevelLock.WaitAndAcquire") {
		t.Errorf("--flame: exit %d, flame %v\n%s", code, strings.Contains(page, `class="flame"`), stderr)
	}
}
