package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/profile"
)

// busyRuns are the recordings of profile/jfr's Busy.java the JFR tests
// read, by their modes: a compute-only base, and the base plus a contended
// synchronized block or plus sleeps.
var busyRuns = [][]string{{"compute"}, {"compute", "contend"}, {"compute", "sleep"}}

var (
	busyOnce sync.Once
	busyData map[string][]byte // by modes joined with "-"
	busyErr  error
)

// recordJFR returns a recording of Busy running the given modes (one of
// busyRuns) with the JDK's profile settings, written to dir; it skips
// without a JDK. The recordings are made once per test binary, all at once
// by concurrent JVMs, and kept in memory: a test writes its copy.
func recordJFR(t *testing.T, dir string, modes ...string) string {
	t.Helper()
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no JDK: %s is not installed", tool)
		}
	}
	busyOnce.Do(func() { busyData, busyErr = recordBusy() })
	if busyErr != nil {
		t.Fatal(busyErr)
	}
	name := strings.Join(modes, "-")
	data, ok := busyData[name]
	if !ok {
		t.Fatalf("no recording of %q: add it to busyRuns", name)
	}
	path := filepath.Join(dir, name+".jfr")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordBusy compiles Busy.java and records busyRuns, each for 1 s (Busy's
// busy.ms; every assertion here holds with a wide margin on a second of
// each behaviour). The JVMs run C1 only (-XX:TieredStopAtLevel=1): C2's
// compiler threads otherwise spend about a second of CPU on JFR's and
// javac's start-up code, which programs this short never recoup.
func recordBusy() (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "profdiff-jfr")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	const c1 = "-XX:TieredStopAtLevel=1"
	classes := filepath.Join(dir, "classes")
	if out, err := exec.Command("javac", "-J"+c1, "-d", classes, "../../profile/jfr/testdata/Busy.java").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javac: %v\n%s", err, out)
	}
	errs := make([]error, len(busyRuns))
	var wg sync.WaitGroup
	for i, modes := range busyRuns {
		wg.Go(func() {
			path := filepath.Join(dir, strings.Join(modes, "-")+".jfr")
			args := append([]string{c1, "-Dbusy.ms=1000", "-XX:StartFlightRecording=filename=" + path + ",settings=profile", "-cp", classes, "Busy"}, modes...)
			if out, err := exec.Command("java", args...).CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("java %v: %v\n%s", args, err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, modes := range busyRuns {
		name := strings.Join(modes, "-")
		data, err := os.ReadFile(filepath.Join(dir, name+".jfr"))
		if err != nil {
			return nil, err
		}
		out[name] = data
	}
	return out, nil
}

// profdiff top on a recording: thread time by bucket, with the contended
// synchronized block as lock contention and the sleeps its holder makes
// inside it as wait, and the warnings on stderr saying what the JDK leaves
// out.
func TestTopJFR(t *testing.T) {
	path := recordJFR(t, t.TempDir(), "compute", "contend")
	out, stderr, code := profdiff(t, "", "top", "--format", "json", "--top", "0", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Kind       string `json:"kind"`
		SampleType string `json:"sample_type"`
		Buckets    []struct {
			Bucket string  `json:"bucket"`
			Share  float64 `json:"share"`
		} `json:"buckets"`
		Methods []struct {
			Name   string `json:"name"`
			Bucket string `json:"bucket"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	shares := map[string]float64{}
	for _, b := range r.Buckets {
		shares[b.Bucket] = b.Share
	}
	if r.Kind != "wall" || !strings.HasPrefix(r.SampleType, "thread-time") {
		t.Errorf("kind %s, sample type %s; want wall, thread-time", r.Kind, r.SampleType)
	}
	// Each bucket is there: the compute phase's share falls when a loaded
	// machine gives the JVM less CPU in the same wall time (4% seen at a
	// load of 15 on 2 cores), the sleeps' and the contention's do not.
	for _, b := range []string{"cpu", "wait", "lock-contention"} {
		if shares[b] < 0.01 {
			t.Errorf("%s: share %.3f of a program that computes, contends and sleeps; buckets %v", b, shares[b], shares)
		}
	}
	methods := map[string]string{}
	for _, m := range r.Methods {
		methods[m.Name] = m.Bucket
	}
	if !strings.HasPrefix(methods["Busy.contend"], "lock-contention") || methods["Busy.compute"] != "cpu" {
		t.Errorf("Busy.contend is %q, Busy.compute %q; want lock-contention and cpu (methods %v)", methods["Busy.contend"], methods["Busy.compute"], methods)
	}
	if stderr = unwrapped(stderr); !strings.Contains(stderr, "threshold") || !strings.Contains(stderr, "at most 5 threads") {
		t.Errorf("stderr does not warn of thresholds and the sampler's limit:\n%s", stderr)
	}
	// Each event type is a sample type of its own.
	out, stderr, code = profdiff(t, "", "top", "--sample-index", "monitor-enter", "--format", "json", path)
	if code != 0 || !strings.Contains(out, `"sample_type": "monitor-enter`) {
		t.Errorf("--sample-index monitor-enter: exit %d, %s\n%s", code, stderr, out)
	}
}

// profdiff diff on a regression pair: adding a contended synchronized
// block makes lock contention the bucket whose rate grew most, Busy.contend
// the method that grew most; adding sleeps makes it wait, with
// Thread.sleep or its caller Busy.run (the caller once the JVM caller
// skips JDK frames) the method that grew most.
func TestDiffJFR(t *testing.T) {
	dir := t.TempDir()
	base := recordJFR(t, dir, "compute")
	for _, c := range []struct {
		mode, bucket string
		leaders      []string
	}{{"contend", "lock-contention", []string{"Busy.contend"}}, {"sleep", "wait", []string{"java.lang.Thread.sleep", "Busy.run"}}} {
		next := recordJFR(t, dir, "compute", c.mode)
		out, stderr, code := profdiff(t, "", "diff", "--format", "json", "--top", "0", base, next)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var r struct {
			Buckets []struct {
				Bucket string  `json:"bucket"`
				Change float64 `json:"change"`
			} `json:"buckets"`
			Methods []struct {
				Name   string  `json:"name"`
				Change float64 `json:"change"`
			} `json:"methods"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		top, grew := "", 0.0
		for _, b := range r.Buckets {
			if b.Change > grew {
				top, grew = b.Bucket, b.Change
			}
		}
		if top != c.bucket {
			t.Errorf("adding %s: %s grew most (%+.3f threads), want %s: %+v", c.mode, top, grew, c.bucket, r.Buckets)
		}
		topM, grewM := "", 0.0
		for _, m := range r.Methods {
			if m.Change > grewM {
				topM, grewM = m.Name, m.Change
			}
		}
		if !slices.Contains(c.leaders, topM) {
			t.Errorf("adding %s: %s grew most (%+.3f threads), want one of %q", c.mode, topM, grewM, c.leaders)
		}
	}
}

// A recording without sleeps has no sleep sample type: diffing on that
// type counts it as zero, with a warning, instead of failing.
func TestDiffJFRTypeAbsentOnOneSide(t *testing.T) {
	dir := t.TempDir()
	base, next := recordJFR(t, dir, "compute"), recordJFR(t, dir, "compute", "sleep")
	if l, err := profile.Load(t.Context(), base, profile.Options{}); err != nil {
		t.Fatal(err)
	} else if _, err := diff.SampleTypeIndex(l.Profile, "sleep"); err == nil {
		t.Skip("the compute-only recording has sleep events of its own: nothing absent to test")
	}
	out, stderr, code := profdiff(t, "", "diff", "--format", "json", "--sample-index", "sleep", base, next)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, `recorded no "sleep" events: counted as zero`) {
		t.Errorf("stderr lacks the absent-type warning:\n%s", stderr)
	}
	var r struct {
		Kind string `json:"kind"`
		Base struct {
			Total float64 `json:"total"`
		} `json:"base"`
		New struct {
			Total float64 `json:"total"`
		} `json:"new"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Base.Total != 0 || r.New.Total <= 0 || r.Kind != "block" {
		t.Errorf("kind %s, totals %v → %v; want block, 0 → the sleeps", r.Kind, r.Base.Total, r.New.Total)
	}
}
