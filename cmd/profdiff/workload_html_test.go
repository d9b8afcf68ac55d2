package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A real two-run sweep as a page: the requests/s chart, the diff page of
// the 2-core run against the 1-core run in its folder, the chart's points
// linked to it (relative to the current directory on stdout, to the sweep
// folder in its sweep.html copy), and the list of diff pages linking
// them too; and the projection (--project) with its chart.
func TestWorkloadJSONHTML(t *testing.T) {
	t.Parallel() // a few seconds of wall time, overlapping the other slow tests
	if testing.Short() {
		t.Skip("runs the JSON server twice")
	}
	dir := t.TempDir()
	out, stderr, code := profdiff(t, "", "workload", "json", "--cores", "1,2", "--duration", "1s", "--warmup", "0s", "--connections", "16",
		"--project", "4", "--perf=false", "--format", "html", "--out", dir)
	page := filepath.Join(dir, "cores-2", "diff-vs-cores-1.html")
	fromCWD := checkDiffPage(t, page, stderr, code)
	for _, want := range []string{"<svg", "Requests/s by cores", "Efficiency per core", `class="point peak"`, "Projected requests/s by cores (a projection, not a measurement)", "PROJECTION",
		`<a href="` + fromCWD + `">`, "2 cores: <a href=\"" + fromCWD + "\">" + page + "</a>"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	copyPage, err := os.ReadFile(filepath.Join(dir, "sweep.html"))
	if err != nil || !strings.Contains(string(copyPage), `<a href="cores-2/diff-vs-cores-1.html">`) {
		t.Errorf("sweep.html in the sweep folder does not link the run's diff relative to itself (%v)", err)
	}
}

// checkDiffPage checks that a sweep wrote the diff page at page, and
// returns its path relative to the current directory (the stdout page's
// link).
func checkDiffPage(t *testing.T, page, stderr string, code int) string {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(strings.ToLower(string(b)), "<html") {
		t.Fatalf("no diff page at %s (%v):\n%s", page, err, stderr)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, page)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// The wasm sweep as a page: its charts, with the loop mode's second
// keep-resident run linked to its diff against the first.
func TestWorkloadWasmHTML(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the wasm host twice")
	}
	dir := t.TempDir()
	out, stderr, code := profdiff(t, "", "workload", "wasm", "--mode", "loop", "--keep-resident", "0,256KiB", "--pages", "4", "--touch", "128KiB",
		"--duration", "1s", "--warmup", "200ms", "--cores", "2", "--perf=false", "--format", "html", "--out", dir)
	page := filepath.Join(dir, "loop-keep-256KiB", "diff-vs-loop-keep-0.html")
	fromCWD := checkDiffPage(t, page, stderr, code)
	for _, want := range []string{"CPU per request by keep-resident", "Requests/s by keep-resident", `<a href="` + fromCWD + `"><rect class="bar"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
