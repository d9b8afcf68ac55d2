package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/capture"
)

// cannedProfile builds a small profile of a kind, shaped as Go's writers
// (and fgprof) shape them, with the given leaf→root stacks and values.
func cannedProfile(t *testing.T, kind string, stacks map[string]int64) []byte {
	t.Helper()
	p := &pprofile.Profile{Period: 1}
	switch kind {
	case "cpu":
		p.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}
		p.PeriodType = &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}
		p.Period = 10000000
	case "wall":
		p.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "time", Unit: "nanoseconds"}}
		p.PeriodType = &pprofile.ValueType{Type: "wallclock", Unit: "nanoseconds"}
		p.Period = 10101010
	case "mutex", "block":
		p.SampleType = []*pprofile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}}
		p.PeriodType = &pprofile.ValueType{Type: "contentions", Unit: "count"}
	case "goroutine":
		p.SampleType = []*pprofile.ValueType{{Type: "goroutine", Unit: "count"}}
		p.PeriodType = &pprofile.ValueType{Type: "goroutine", Unit: "count"}
	}
	fns := map[string]*pprofile.Function{}
	locs := map[string]*pprofile.Location{}
	for _, stack := range cannedKeys(stacks) {
		s := &pprofile.Sample{}
		for _, name := range strings.Split(stack, ";") {
			loc := locs[name]
			if loc == nil {
				fn := &pprofile.Function{ID: uint64(len(fns) + 1), Name: name, SystemName: name}
				fns[name] = fn
				p.Function = append(p.Function, fn)
				loc = &pprofile.Location{ID: uint64(len(locs) + 1), Line: []pprofile.Line{{Function: fn}}}
				locs[name] = loc
				p.Location = append(p.Location, loc)
			}
			s.Location = append(s.Location, loc)
		}
		v := stacks[stack]
		if len(p.SampleType) == 2 {
			s.Value = []int64{1, v}
		} else {
			s.Value = []int64{v}
		}
		p.Sample = append(p.Sample, s)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func cannedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fakeDebugServer serves canned profiles at the /debug/pprof paths (and
// /debug/fgprof when withFgprof), ignoring ?seconds=, so the CLI's
// plumbing is tested without a real window of load. contended scales the
// lock-contention stacks, as a global-lock server's profiles would show.
func fakeDebugServer(t *testing.T, withFgprof bool, contended int64) *httptest.Server {
	t.Helper()
	lock := "sync.runtime_SemacquireMutex;internal/sync.(*Mutex).lockSlow;sync.(*Mutex).Lock;main.(*waitRegistry).acquire;main.handler"
	profiles := map[string][]byte{
		"/debug/pprof/profile": cannedProfile(t, "cpu", map[string]int64{
			"encoding/json.Marshal;main.handler": 50e6,
			"internal/sync.(*Mutex).lockSlow;sync.(*Mutex).Lock;main.(*waitRegistry).acquire;main.handler": 10e6 * contended,
		}),
		"/debug/fgprof": cannedProfile(t, "wall", map[string]int64{
			"runtime.gopark;runtime.netpollblock;internal/poll.runtime_pollWait;main.handler": 900e6,
			"encoding/json.Marshal;main.handler":                                              100e6,
			"runtime.gopark;runtime.goparkunlock;runtime.semacquire1;" + lock:                 50e6 * contended,
		}),
		"/debug/pprof/mutex": cannedProfile(t, "mutex", map[string]int64{
			"sync.(*Mutex).Unlock;main.(*waitRegistry).release;main.handler": 1e6 * contended,
			"runtime.unlock;runtime.wakep":                                   1e6,
		}),
		"/debug/pprof/block": cannedProfile(t, "block", map[string]int64{
			"runtime.chanrecv1;main.handler": 5e6,
		}),
		"/debug/pprof/goroutine": cannedProfile(t, "goroutine", map[string]int64{
			"runtime.gopark;runtime.netpollblock;internal/poll.runtime_pollWait;main.handler": 100,
		}),
		"/debug/pprof/trace": append([]byte("go 1.26 trace\x00\x00\x00"), make([]byte, 64)...),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := profiles[r.URL.Path]
		if !ok || (r.URL.Path == "/debug/fgprof" && !withFgprof) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCaptureCommandAndDiffOfFolders(t *testing.T) {
	dir := t.TempDir()
	base, news := filepath.Join(dir, "base"), filepath.Join(dir, "new")

	// A server without fgprof: wall is skipped with a note, the rest kept.
	srv := fakeDebugServer(t, false, 1)
	out, stderr, code := profdiff(t, "", "capture", srv.URL+"/debug/pprof/", "--duration", "1s", "--out", base)
	if code != 0 {
		t.Fatalf("capture: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "wall: /debug/fgprof not exposed (404); skipped") {
		t.Errorf("stderr lacks the fgprof note:\n%s", stderr)
	}
	if !strings.Contains(out, "cpu, mutex, block, goroutine, trace (5 of 5 profiles)") {
		t.Errorf("stdout: %s", out)
	}
	for _, f := range []string{"manifest.json", "cpu.pb.gz", "mutex.pb.gz", "block.pb.gz", "goroutine.pb.gz", "trace.out.gz"} {
		if _, err := os.Stat(filepath.Join(base, f)); err != nil {
			t.Error(err)
		}
	}

	// The same folder on both sides: the default kind is cpu (no wall).
	out, stderr, code = profdiff(t, "", "diff", "--format", "json", base, base)
	if code != 0 {
		t.Fatalf("diff DIR DIR: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"sample_type": "cpu/nanoseconds"`) || !strings.Contains(out, filepath.Join(base, "cpu.pb.gz")) {
		t.Errorf("diff DIR DIR did not use cpu.pb.gz:\n%s", out)
	}

	// A contended server with fgprof: wall is the default, and the
	// registry's lock shows up as lock-contention growth.
	srv2 := fakeDebugServer(t, true, 8)
	// With --format json, stdout is the manifest it wrote (and -d, -o
	// are --duration and --out).
	out, stderr, code = profdiff(t, "", "capture", srv2.URL, "-d", "1", "-o", news, "--format", "json")
	if code != 0 {
		t.Fatalf("capture: exit %d: %s", code, stderr)
	}
	written, err := os.ReadFile(filepath.Join(news, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var printed, onDisk map[string]any
	if err := json.Unmarshal([]byte(out), &printed); err != nil || json.Unmarshal(written, &onDisk) != nil || !reflect.DeepEqual(printed, onDisk) || printed["seconds"] != 1.0 {
		t.Errorf("capture --format json printed (%v):\n%s\nwant the manifest:\n%s", err, out, written)
	}
	// Without --kind, both sides take the kind every folder has: base has
	// no wall, so cpu on both.
	out, stderr, code = profdiff(t, "", "diff", "--format", "json", base, news)
	if code != 0 || !strings.Contains(out, filepath.Join(news, "cpu.pb.gz")) {
		t.Errorf("diff of a folder without wall and one with: exit %d\n%s\n%s", code, out, stderr)
	}
	// Folders that all have wall default to it. Markdown names the
	// sources without the directories they share.
	out, stderr, code = profdiff(t, "", "diff", "--format", "markdown", news, news)
	if code != 0 || !strings.Contains(out, "### profdiff: wall.pb.gz → wall.pb.gz\n") || !strings.Contains(out, "wall") {
		t.Errorf("diff of folders with wall: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = profdiff(t, "", "diff", "--kind", "cpu", "--cum", "--format", "markdown", base, news)
	if code != 0 {
		t.Fatalf("diff --kind cpu: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "/cpu.pb.gz → "+filepath.Base(news)+"/cpu.pb.gz\n") || !strings.Contains(out, "`main.(*waitRegistry).acquire`") {
		t.Errorf("diff --kind cpu:\n%s", out)
	}
	out, stderr, code = profdiff(t, "", "diff", "--kind", "mutex", "--cum", base, news)
	if code != 0 || !strings.Contains(out, "main.(*waitRegistry).release") {
		t.Errorf("diff --kind mutex: exit %d\n%s\n%s", code, out, stderr)
	}
	// A capture folder mixes with plain files.
	if _, stderr, code := profdiff(t, "", "diff", "--kind", "cpu", filepath.Join(base, "cpu.pb.gz"), news); code != 0 {
		t.Errorf("file vs folder: exit %d: %s", code, stderr)
	}
	if _, stderr, code := profdiff(t, "", "diff", "--base", base, "--new", news, "--kind", "goroutine"); code != 0 {
		t.Errorf("--base/--new folders: exit %d: %s", code, stderr)
	}
}

func TestCaptureCommandErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	os.Mkdir(plain, 0o755)
	capDir := filepath.Join(dir, "cap")
	srv := fakeDebugServer(t, false, 1)
	if _, stderr, code := profdiff(t, "", "capture", srv.URL, "--duration", "1s", "--out", capDir); code != 0 {
		t.Fatalf("capture: %s", stderr)
	}
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"capture"}, "want one URL"},
		{[]string{"capture", srv.URL}, "--out DIR is required"},
		{[]string{"capture", srv.URL, "--out", filepath.Join(dir, "x"), "--duration", "0"}, "--duration must be positive"},
		{[]string{"capture", srv.URL, "--out", filepath.Join(dir, "x"), "--profiles", "cpu,heap"}, `unknown kind "heap"`},
		{[]string{"capture", "http://10.1.2.3:6060/debug/pprof/", "--out", filepath.Join(dir, "x")}, "10.1.2.3 is not a loopback address"},
		{[]string{"capture", "http://example.com/", "--out", filepath.Join(dir, "x")}, "--allow-remote"},
		{[]string{"capture", "127.0.0.1:6060", "--out", filepath.Join(dir, "x")}, "invalid URL"},
		{[]string{"capture", srv.URL, "--out", capDir}, "not empty"},
		{[]string{"diff", plain, capDir}, "a directory without manifest.json"},
		{[]string{"diff", "--kind", "heap", capDir, capDir}, "capture folder has no heap profile (has cpu, mutex, block, goroutine, trace)"},
	}
	for _, c := range cases {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a refused capture created its folder")
	}
	// A server answering nothing: exit 2, and the manifest says why.
	dead := httptest.NewServer(http.NotFoundHandler())
	defer dead.Close()
	empty := filepath.Join(dir, "empty")
	_, stderr, code := profdiff(t, "", "capture", dead.URL, "--duration", "1s", "--out", empty, "--profiles", "cpu,mutex")
	if code != 2 || !strings.Contains(stderr, "no profile captured") {
		t.Errorf("nothing captured: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(empty, "manifest.json")); err != nil || !strings.Contains(string(b), "HTTP 404") {
		t.Errorf("manifest of a failed capture: %v %s", err, b)
	}
}

// capture --perf-pid records this test process (the command runs in it)
// with perf during the window where perf can record, and otherwise says
// why in the manifest; a folder without perf.txt answers --kind perf with
// the kinds it has.
func TestCapturePerfPID(t *testing.T) {
	t.Parallel()
	srv := fakeDebugServer(t, false, 1)
	dir := filepath.Join(t.TempDir(), "cap")
	_, stderr, code := profdiff(t, "", "capture", srv.URL, "--duration", "1s", "--profiles", "goroutine", "--perf-pid", strconv.Itoa(os.Getpid()), "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m, err := capture.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	if _, stderr, code := profdiff(t, "", "capture", srv.URL, "--duration", "1s", "--profiles", "goroutine", "--out", plain); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, stderr, code := profdiff(t, "", "top", "--kind", "perf", plain); code == 0 || !strings.Contains(stderr, "capture folder has no perf profile (has goroutine)") {
		t.Errorf("top --kind perf without a recording: exit %d: %s", code, stderr)
	}
	if st := capture.ProbePerf(); st.Err != nil {
		want := "perf: not recorded: " + st.Err.Error()
		if !slices.Contains(m.Notes, want) {
			t.Errorf("notes %q; want %q", m.Notes, want)
		}
		return
	}
	if f, ok := m.File(capture.PerfKind); !ok || f.Path != capture.PerfFile || len(f.Events) == 0 {
		t.Fatalf("no perf recording: files %+v, notes %q, errors %q", m.Files, m.Notes, m.Errors)
	}
	if _, stderr, code := profdiff(t, "", "top", "--kind", "perf", dir); code != 0 {
		t.Errorf("top --kind perf: exit %d: %s", code, stderr)
	}
	_, stderr, code = profdiff(t, "", "capture", srv.URL, "--perf-pid", "-3", "--out", filepath.Join(t.TempDir(), "x"))
	if code != 2 || !strings.Contains(stderr, "--perf-pid: -3 is not a process id") {
		t.Errorf("--perf-pid -3: exit %d: %s", code, stderr)
	}
}
