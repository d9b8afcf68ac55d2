package gate_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/gate"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
)

// folded is one run of a small service as folded stacks (root first): lock
// samples of 1,000 queue on the cache's mutex, the rest compute.
func folded(lock int) []byte {
	return fmt.Appendf(nil,
		"main.worker;main.handle;main.compute %d\n"+
			"main.worker;main.handle;main.(*cache).get;sync.(*Mutex).Lock;internal/sync.(*Mutex).lockSlow;internal/sync.runtime_SemacquireMutex;runtime.semacquire1;runtime.gopark %d\n",
		1000-lock, lock)
}

// exampleReport is the package comment's example: five runs per side; the
// new code holds the cache's lock longer.
func exampleReport() *gate.Report {
	g := gate.New(gate.Options{}) // default checks: lock-contention=+1pp, sync=+5pp
	for side, runs := range [][]int{{20, 25, 18, 22, 21}, {60, 55, 62, 58, 65}} {
		for i, lock := range runs {
			name := fmt.Sprintf("%s-%d.folded", result.Side(side), i+1)
			l, err := profile.Parse(name, folded(lock), 0)
			if err != nil {
				panic(err)
			}
			if err := g.Add(result.Side(side), l); err != nil {
				panic(err)
			}
		}
	}
	r, err := g.Report()
	if err != nil {
		panic(err)
	}
	return r
}

// The package comment shows this output; TestDocExample keeps it true.
func Example() {
	r := exampleReport()
	gate.Render(os.Stdout, r, render.Table)
	fmt.Println("verdict:", r.Verdict)
	// Output:
	// Verdict: lock-contention failed: 2.12% → 6.00% (+3.88pp, threshold +1pp, p 0.008), led by internal/sync.runtime_SemacquireMutex (+3.88pp) called from main.(*cache).get (+3.88pp).
	// The other check passed.
	//
	// profdiff gate: FAIL (1 of 2 checks failed)
	// base: 5 profiles (base-1.folded, base-2.folded and 3 more), 5000 samples
	// new:  5 profiles (new-1.folded, new-2.folded and 3 more), 5000 samples
	// sample type samples/count, kind unknown
	//
	// ┌─────────────────┬───────┬───────┬─────────┬───────────┬───────┬─────────┐
	// │ Check           │  base │   new │       Δ │ threshold │     p │ verdict │
	// ├─────────────────┼───────┼───────┼─────────┼───────────┼───────┼─────────┤
	// │ lock-contention │ 2.12% │ 6.00% │ +3.88pp │      +1pp │ 0.008 │ FAIL    │
	// │ sync            │ 2.12% │ 6.00% │ +3.88pp │      +5pp │ 0.008 │ pass    │
	// └─────────────────┴───────┴───────┴─────────┴───────────┴───────┴─────────┘
	// each profile is one observation: one-sided Mann–Whitney U test per check, p Holm-adjusted over 2 checks; a check fails when its growth exceeds the threshold and p ≤ 0.05
	//
	// behind lock-contention (+3.88pp, threshold +1pp):
	// ┌───────────────────────────────────────┬───────┬───────┬─────────┐
	// │ Frame that decided the bucket         │  base │   new │       Δ │
	// ├───────────────────────────────────────┼───────┼───────┼─────────┤
	// │ internal/sync.runtime_SemacquireMutex │ 2.12% │ 6.00% │ +3.88pp │
	// └───────────────────────────────────────┴───────┴───────┴─────────┘
	//
	// ┌────────────────────────────────┬───────┬───────┬─────────┐
	// │ Caller (nearest program frame) │  base │   new │       Δ │
	// ├────────────────────────────────┼───────┼───────┼─────────┤
	// │ main.(*cache).get              │ 2.12% │ 6.00% │ +3.88pp │
	// └────────────────────────────────┴───────┴───────┴─────────┘
	// verdict: fail
}

// TestDocExample checks that the output printed in the package comment is
// what the example renders.
func TestDocExample(t *testing.T) {
	src, err := os.ReadFile("gate.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "// prints\n//\n")
	if !ok {
		t.Fatal("gate.go: no example output after \"// prints\"")
	}
	var doc []string
	for _, line := range strings.Split(after, "\n") {
		if line == "//" {
			doc = append(doc, "")
			continue
		}
		text, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			break
		}
		doc = append(doc, text)
	}
	var buf bytes.Buffer
	if err := gate.Render(&buf, exampleReport(), render.Table); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimRight(buf.String(), "\n")
	want := strings.TrimRight(strings.Join(doc, "\n"), "\n")
	if got != want {
		t.Errorf("the package comment's example output is stale; it should be:\n%s", got)
	}
}
