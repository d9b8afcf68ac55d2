package diff

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// --by caller on a Node program's V8 CPU profile skips Node's built-in
// modules (node:*) as the JVM view skips the JDK: a program that reads
// files with fs.readFileSync has that time in io (the node rule for
// synchronous fs calls), charged to the program's own function that
// called readFileSync, never to node:fs or its native read.
func TestNodeCallerSkipsBuiltins(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	js := filepath.Join(dir, "main.js")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "const fs = require('fs');\n" +
		"function readAll() { let n = 0; for (let i = 0; i < 150; i++) n += fs.readFileSync(process.argv[2]).length; return n; }\n" +
		"readAll();\n"
	if err := os.WriteFile(js, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--cpu-prof", "--cpu-prof-dir="+dir, "--cpu-prof-name=main.cpuprofile", js, big)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --cpu-prof: %v\n%s", err, b)
	}
	l := loadFile(t, filepath.Join(dir, "main.cpuprofile"))
	a := NewAnalyzer(Options{By: result.ByCaller})
	var io, ioReadAll, total float64
	a.OnSample(func(s *Sample) {
		total += s.Value
		if s.Bucket != rules.IO {
			return
		}
		io += s.Value
		inReadAll := false
		for _, id := range s.Stack {
			inReadAll = inReadAll || a.MethodName(id) == "readAll"
		}
		if !inReadAll { // Node's loader reading main.js: no program frame
			return
		}
		if c := a.MethodName(s.Stack[s.Caller()]); c != "readAll" {
			t.Errorf("io under readAll charged to %s", c)
		}
		ioReadAll += s.Value
	})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	if ioReadAll < total/4 {
		t.Errorf("io %.0f ns of %.0f, %.0f of it readAll's: want most of the time reading under readAll, in io", io, total, ioReadAll)
	}
}
