package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/fleet/fleettest"
)

const pyroCPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"

var (
	fleetOnce  sync.Once
	fleetProfs [2]*pprofile.Profile
	fleetErr   error
)

// fleetProfiles are two real CPU profiles of this test process (sorting;
// sorting and hashing), recorded once for the fleet tests.
func fleetProfiles(t *testing.T) [2]*pprofile.Profile {
	t.Helper()
	fleetOnce.Do(func() {
		for i := range fleetProfs {
			if fleetProfs[i], fleetErr = fleettest.CPUProfile(400*time.Millisecond, i == 1); fleetErr != nil {
				return
			}
		}
	})
	if fleetErr != nil {
		t.Skipf("cannot record a CPU profile here: %v", fleetErr)
	}
	return fleetProfs
}

// pyroscopeFleet serves version v1 and v2 of service api on Pyroscope's
// protocol, each ingested windows times a minute apart from t0, and
// writes the same profiles to dir/v1.pb.gz and dir/v2.pb.gz.
func pyroscopeFleet(t *testing.T, p *fleettest.Pyroscope, t0 time.Time, windows int, dir string) string {
	t.Helper()
	for i, prof := range fleetProfiles(t) {
		v := fmt.Sprintf("v%d", i+1)
		for w := range windows {
			p.Add(fleettest.Series{Name: "process_cpu", Labels: map[string]string{"service_name": "api", "version": v}, Time: t0.Add(time.Duration(w) * time.Minute), Profile: prof})
		}
		f, err := os.Create(filepath.Join(dir, v+".pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		if err := prof.Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	srv := p.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func pyroSource(base, version string, from, to time.Time, extra string) string {
	return "pyroscope+" + base + "?type=" + pyroCPU + "&query=" + url.QueryEscape(`{service_name="api",version="`+version+`"}`) +
		"&from=" + from.UTC().Format(time.RFC3339) + "&to=" + to.UTC().Format(time.RFC3339) + extra
}

// diffRows is a JSON diff's numbers: each bucket's and each method's raw
// values, methods named without Go type arguments (a file keeps them,
// Pyroscope drops them) and summed by that name.
type diffRows struct {
	Buckets map[string][2]float64
	Methods map[string][2]float64
	Totals  [2]float64
}

func readDiffRows(t *testing.T, out string) diffRows {
	t.Helper()
	var d struct {
		Base, New struct {
			Total float64 `json:"total"`
		}
		Buckets []struct {
			Bucket    string  `json:"bucket"`
			BaseValue float64 `json:"base_value"`
			NewValue  float64 `json:"new_value"`
		} `json:"buckets"`
		Methods []struct {
			Name      string  `json:"name"`
			BaseValue float64 `json:"base_value"`
			NewValue  float64 `json:"new_value"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := diffRows{Buckets: map[string][2]float64{}, Methods: map[string][2]float64{}, Totals: [2]float64{d.Base.Total, d.New.Total}}
	for _, b := range d.Buckets {
		r.Buckets[b.Bucket] = [2]float64{b.BaseValue, b.NewValue}
	}
	for _, m := range d.Methods {
		n := fleettest.DropShapes(m.Name)
		v := r.Methods[n]
		r.Methods[n] = [2]float64{v[0] + m.BaseValue, v[1] + m.NewValue}
	}
	return r
}

// diff of two Pyroscope queries gives the table of the files that were
// ingested; so does a file against a query, whose rows name each function
// once although the file keeps Go type arguments and Pyroscope drops them.
// Rates use the query's window as the side's duration.
func TestDiffPyroscopeQueries(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := &fleettest.Pyroscope{}
	base := pyroscopeFleet(t, p, t0, 1, dir)
	v1, v2 := pyroSource(base, "v1", t0, t0.Add(time.Hour), ""), pyroSource(base, "v2", t0, t0.Add(time.Hour), "")
	files, stderr, code := profdiff(t, "", "diff", "--format", "json", filepath.Join(dir, "v1.pb.gz"), filepath.Join(dir, "v2.pb.gz"))
	if code != 0 {
		t.Fatalf("files: exit %d: %s", code, stderr)
	}
	queries, stderr, code := profdiff(t, "", "diff", "--format", "json", v1, v2)
	if code != 0 {
		t.Fatalf("queries: exit %d: %s", code, stderr)
	}
	mixed, stderr, code := profdiff(t, "", "diff", "--format", "json", filepath.Join(dir, "v1.pb.gz"), v2)
	if code != 0 {
		t.Fatalf("file and query: exit %d: %s", code, stderr)
	}
	want := readDiffRows(t, files)
	if len(want.Methods) < 2 || want.Totals[0] == 0 || want.Totals[1] == 0 {
		t.Fatalf("the recorded profiles are too thin to compare: %v", want)
	}
	for name, out := range map[string]string{"queries": queries, "file and query": mixed} {
		got := readDiffRows(t, out)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: rows differ from the files'\n got %v\nwant %v", name, got, want)
		}
		if strings.Contains(out, "[go.shape.") {
			t.Errorf("%s: a method keeps its Go type arguments although one side is from Pyroscope", name)
		}
	}
	if !strings.Contains(files, "[go.shape.") {
		t.Log("the recorded profiles hold no generic instantiation; the type-argument check proved nothing")
	}
	var d struct {
		New struct {
			DurationNanos int64 `json:"duration_nanos"`
			Sources       []string
		} `json:"new"`
	}
	if err := json.Unmarshal([]byte(queries), &d); err != nil {
		t.Fatal(err)
	}
	if d.New.DurationNanos != 3600e9 || len(d.New.Sources) != 1 || !strings.HasPrefix(d.New.Sources[0], "pyroscope+http://127.0.0.1:") {
		t.Errorf("new side: duration %v ns (want the 1 h window), sources %q", d.New.DurationNanos, d.New.Sources)
	}
}

// The gate splits each side's range into windows=5 merged profiles: its
// test runs on five observations a side.
func TestGatePyroscopeWindows(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := &fleettest.Pyroscope{Legacy: true}
	base := pyroscopeFleet(t, p, t0, 5, dir)
	out, stderr, code := profdiff(t, "", "gate", "--format", "json", "--max", "cpu=+100%",
		"--base", pyroSource(base, "v1", t0, t0.Add(5*time.Minute), "&windows=5"),
		"--new", pyroSource(base, "v2", t0, t0.Add(5*time.Minute), "&windows=5"))
	if code != 0 && code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var g struct {
		Checks []struct {
			Check        string    `json:"check"`
			BaseProfiles []float64 `json:"base_profiles"`
			NewProfiles  []float64 `json:"new_profiles"`
			P            *float64  `json:"p"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(g.Checks) == 0 {
		t.Fatalf("no checks:\n%s", out)
	}
	for _, c := range g.Checks {
		if len(c.BaseProfiles) != 5 || len(c.NewProfiles) != 5 || c.P == nil || math.IsNaN(*c.P) {
			t.Errorf("check %s: %d and %d observations, p %v; want 5 and 5 and a p-value", c.Check, len(c.BaseProfiles), len(c.NewProfiles), c.P)
		}
	}
	// Ten queries, each answered by the fallback call of a legacy server.
	calls := p.Calls()
	sort.Strings(calls)
	if len(calls) != 20 || calls[0] != "SelectMergeProfile" || calls[19] != "SelectMergeStacktraces" {
		t.Errorf("calls: %v; want 10 SelectMergeStacktraces and 10 SelectMergeProfile", calls)
	}
}

// A missing server, an empty answer, a bad query and a missing tenant are
// each one line on stderr, exit 2, naming the source and what happened.
func TestFleetErrors(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := &fleettest.Pyroscope{Tenant: "team-a"}
	base := pyroscopeFleet(t, p, t0, 1, dir)
	file := filepath.Join(dir, "v1.pb.gz")
	cases := []struct {
		name, source, want string
		env                []string
	}{
		{"missing server", pyroSource("http://127.0.0.1:1", "v2", t0, t0.Add(time.Hour), ""), "connection refused", nil},
		{"missing tenant", pyroSource(base, "v2", t0, t0.Add(time.Hour), ""), "HTTP 401 Unauthorized (unauthenticated): no org id", nil},
		{"empty answer", pyroSource(base, "v9", t0, t0.Add(time.Hour), "&tenant=team-a"), "the server answered an empty profile: nothing matched the query in that range", nil},
		{"bad query", strings.Replace(pyroSource(base, "v2", t0, t0.Add(time.Hour), "&tenant=team-a"), "version%3D", "version%3D~", 1), "(invalid_argument): parse error: unsupported matcher", nil},
		{"remote server", "pyroscope+http://192.0.2.1:4040?type=" + pyroCPU, "192.0.2.1 is not a loopback address", nil},
		{"bad source", "pyroscope+http://127.0.0.1:4040?type=cpu", "a profile type ID has 5 parts", nil},
	}
	for _, c := range cases {
		_, stderr, code := profdiff(t, "", "diff", file, c.source)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || !strings.Contains(lines[0], c.want) || (len(lines) > 1 && !strings.HasPrefix(lines[1], "Run 'profdiff")) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 and one line with %q", c.name, code, stderr, c.want)
		}
		if !strings.Contains(stderr, "pyroscope") {
			t.Errorf("%s: the error does not name the source: %s", c.name, stderr)
		}
	}
}

// An answer past --max-size is one line naming the limit, and the command
// says how to raise it (the library names no flag).
func TestFleetAnswerPastTheLimit(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	base := pyroscopeFleet(t, &fleettest.Pyroscope{}, t0, 1, dir)
	_, stderr, code := profdiff(t, "", "top", "--max-size", "64B", pyroSource(base, "v2", t0, t0.Add(time.Hour), ""))
	if want := "the answer is larger than the 64-byte limit (raise it with --max-size)"; code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "--max-size") != 1 {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, want)
	}
}

// profdiff sources lists a server's types and labels.
func TestSourcesCommand(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	p := &fleettest.Pyroscope{}
	base := pyroscopeFleet(t, p, t0, 1, dir)
	out, stderr, code := profdiff(t, "", "sources", "pyroscope+"+base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"pyroscope at " + base, "2 profile types, 3 labels", pyroCPU, "process_cpu:samples:count:cpu:nanoseconds", "│ version      │      2 │ v1, v2      │"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, stderr, code := profdiff(t, "", "sources", "pyroscope+"+base+"?type="+pyroCPU); code != 2 || !strings.Contains(stderr, "type= is a query's") {
		t.Errorf("a query given to sources: exit %d: %s", code, stderr)
	}
}
