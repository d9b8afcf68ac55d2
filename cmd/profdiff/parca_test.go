package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"
)

// parcaBinary is a Parca v0.28.0 server binary: $PROFDIFF_PARCA, else the
// one .ci/build-parca caches under ~/.cache/profdiff.
func parcaBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROFDIFF_PARCA")
	if bin == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skipf("no home directory for Parca's cache: %v", err)
		}
		bin = filepath.Join(home, ".cache", "profdiff", "parca-v0.28.0")
	}
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		t.Skipf("no Parca binary at %s (.ci/build-parca builds it)", bin)
	}
	return bin
}

// startParca runs a real Parca on 127.0.0.1 with in-memory storage until
// the test ends, and returns its base URL once it answers.
func startParca(t *testing.T) string {
	t.Helper()
	bin := parcaBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "parca.yaml")
	if err := os.WriteFile(cfg, []byte("object_storage:\n  bucket:\n    type: FILESYSTEM\n    config:\n      directory: "+filepath.Join(dir, "data")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--http-address="+addr, "--config-path="+cfg, "--log-level=warn")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting Parca: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cancel(); <-exited })
	base := "http://" + addr
	// Ready when its query API answers. A foreign server says so by
	// answering only: asked on a 100 ms ticker, 300 times at most, until
	// it answers or exits (an event), for 30 s at most.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
ask:
	for i := 0; i < 300; i++ {
		resp, err := http.Get(base + "/api/profiles/types")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case <-tick.C:
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("Parca exited (%v) before answering on %s; its output:\n%s", err, addr, logs.String())
		case <-deadline.C:
			break ask
		}
	}
	cancel()
	err = <-exited // its output is complete once it has exited
	exited <- err
	t.Fatalf("Parca did not answer on %s within 30 s; its output:\n%s", addr, logs.String())
	return ""
}

// parcaIngest writes a profile to Parca (POST /api/profiles/writeraw) as
// series process_cpu{job="api",version=V}.
func parcaIngest(t *testing.T, base, version string, p *pprofile.Profile) {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"series": []any{map[string]any{
		"labels": map[string]any{"labels": []any{
			map[string]string{"name": "__name__", "value": "process_cpu"},
			map[string]string{"name": "job", "value": "api"},
			map[string]string{"name": "version", "value": version},
		}},
		"samples": []any{map[string]string{"rawProfile": base64.StdEncoding.EncodeToString(buf.Bytes())}},
	}}})
	resp, err := http.Post(base+"/api/profiles/writeraw", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		t.Fatalf("writeraw: %s: %s", resp.Status, b.String())
	}
}

// A real Parca: two CPU profiles ingested as versions v1 and v2, then
// diffed through parca+ sources, give the table of the files diffed; a
// CPU type without :delta is an empty answer that says why; sources lists
// the types and labels.
func TestDiffParcaQueries(t *testing.T) {
	base := startParca(t)
	dir := t.TempDir()
	profs := fleetProfiles(t)
	for i, p := range profs {
		v := fmt.Sprintf("v%d", i+1)
		parcaIngest(t, base, v, p)
		f, err := os.Create(filepath.Join(dir, v+".pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		p.Write(f)
		f.Close()
	}
	from := time.Unix(0, profs[0].TimeNanos).Add(-time.Minute).UTC().Format(time.RFC3339)
	to := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	src := func(typ, version string) string {
		return "parca+" + base + "?query=" + url.QueryEscape(typ+`{job="api",version="`+version+`"}`) + "&from=" + from + "&to=" + to
	}
	const cpu = "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta"
	files, stderr, code := profdiff(t, "", "diff", "--format", "json", filepath.Join(dir, "v1.pb.gz"), filepath.Join(dir, "v2.pb.gz"))
	if code != 0 {
		t.Fatalf("files: exit %d: %s", code, stderr)
	}
	queries, stderr, code := profdiff(t, "", "diff", "--format", "json", src(cpu, "v1"), src(cpu, "v2"))
	if code != 0 {
		t.Fatalf("queries: exit %d: %s", code, stderr)
	}
	if want := readDiffRows(t, files); len(want.Methods) < 2 || want.Totals[0] == 0 || want.Totals[1] == 0 {
		t.Fatalf("the recorded profiles are too thin to compare: %v", want)
	}
	if got, want := readDiffRows(t, queries), readDiffRows(t, files); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Parca's merged profiles give other rows than the files\n got %v\nwant %v", got, want)
	}
	_, stderr, code = profdiff(t, "", "diff", src(cpu, "v1"), src(strings.TrimSuffix(cpu, ":delta"), "v2"))
	if code != 2 || !strings.Contains(stderr, "empty profile: a CPU profile type needs its :delta suffix on Parca") {
		t.Errorf("a CPU type without :delta: exit %d: %s", code, stderr)
	}
	out, stderr, code := profdiff(t, "", "sources", "parca+"+base+"?from="+from+"&to="+to)
	if code != 0 {
		t.Fatalf("sources: exit %d: %s", code, stderr)
	}
	for _, want := range []string{cpu, "process_cpu:samples:count:cpu:nanoseconds:delta", "│ version ", "v1, v2"} {
		if !strings.Contains(out, want) {
			t.Errorf("sources lacks %q:\n%s", want, out)
		}
	}
}
