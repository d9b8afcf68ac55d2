package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nodeProgram is a Node program with a busy loop of busyN iterations,
// garbageN short-lived objects and a 100 ms timer the event loop waits
// for.
const nodeProgram = `
function busy(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sqrt(i); return x; }
function garbage(n) { let a = []; for (let i = 0; i < n; i++) { a.push({i, s: 'x' + i}); if (a.length > 1000) a = []; } return a.length; }
busy(Number(process.argv[2])); garbage(Number(process.argv[3]));
setTimeout(() => {}, 100);
`

// recordNode profiles nodeProgram with node --cpu-prof into dir/side
// (the script keeps one path, so its frames are the same on both sides)
// and returns the profile's path.
func recordNode(t *testing.T, node, dir, side, busyN, garbageN string) string {
	t.Helper()
	out := filepath.Join(dir, side)
	cmd := exec.Command(node, "--cpu-prof", "--cpu-prof-dir="+out, "--cpu-prof-name=main.cpuprofile", filepath.Join(dir, "main.js"), busyN, garbageN)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --cpu-prof: %v\n%s", err, b)
	}
	return filepath.Join(out, "main.cpuprofile")
}

// TestDiffNodeCPUProf profiles a Node program twice with node --cpu-prof,
// the second time with the busy loop doubled and three times the garbage,
// and diffs them through the command: (idle) is wait, the collector is
// gc, the busy loop is cpu and the largest cpu growth, and gc grows.
func TestDiffNodeCPUProf(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.js"), []byte(nodeProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	base := recordNode(t, node, dir, "base", "6e7", "3e5")
	next := recordNode(t, node, dir, "new", "12e7", "9e5")
	out, stderr, code := profdiff(t, "", "diff", "--format", "json", "--top", "0", "--by", "frame", base, next)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := readDiffRows(t, out)
	var r struct {
		Methods []struct{ Name, Bucket string } `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := map[string]string{"(idle)": "wait", "(garbage collector)": "gc", "busy": "cpu"}
	top, grew := "", 0.0
	for _, m := range r.Methods {
		if b, ok := want[m.Name]; ok {
			if m.Bucket != b {
				t.Errorf("%s in %s, want %s", m.Name, m.Bucket, b)
			}
			delete(want, m.Name)
		}
		if v := rows.Methods[m.Name]; m.Bucket == "cpu" && v[1]-v[0] > grew {
			top, grew = m.Name, v[1]-v[0]
		}
	}
	if len(want) > 0 {
		t.Errorf("methods %v missing", want)
	}
	if top != "busy" {
		t.Errorf("largest cpu growth %s (+%.0f ns), want busy", top, grew)
	}
	if gc := rows.Buckets["gc"]; gc[1] <= gc[0] {
		t.Errorf("gc %.0f → %.0f ns, want growth with three times the garbage", gc[0], gc[1])
	}
	if wait := rows.Buckets["wait"]; wait[0] < 50e6 {
		t.Errorf("wait %.0f ns on the base side, want most of the 100 ms timer", wait[0])
	}
}
