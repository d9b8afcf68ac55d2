package present

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// held keeps heapGrowth's allocations in use while the heap profile is
// written.
var held [][]byte

// heapGrowth allocates n MiB in 1 MiB blocks, kept in held.
//
//go:noinline
func heapGrowth(n int) {
	for range n {
		held = append(held, make([]byte, 1<<20))
	}
}

// heapProfile writes Go's heap profile of this process, as of a
// collection that has just run.
func heapProfile(t *testing.T, name string) *profile.Loaded {
	t.Helper()
	runtime.GC()
	runtime.GC() // the profile is as of the last completed cycle
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	l, err := profile.Parse(name, buf.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Two heap profiles of this process, before and after it holds 32 MiB
// more (Go's heap profiler, at its default sampling rate): the verdict
// speaks of in-use memory allocated by running code, led by the function
// that allocated it, never of cpu growing.
func TestDiffVerdictGoHeap(t *testing.T) {
	defer func() { held = nil }()
	heapGrowth(8)
	base := heapProfile(t, "base.heap.pb.gz")
	heapGrowth(32)
	nw := heapProfile(t, "new.heap.pb.gz")
	a := diff.NewAnalyzer(diff.Options{})
	if err := a.Add(result.Base, base); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(result.New, nw); err != nil {
		t.Fatal(err)
	}
	r := a.Diff()
	text := renderDiff(t, r, render.Table, render.Options{Width: 400})
	lines := strings.SplitN(text, "\n", 3)
	if !regexp.MustCompile(`^Verdict: In-use memory allocated by running code \(cpu\) grew from [0-9.]+ MiB to [0-9.]+ MiB \([^)]+\)\.$`).MatchString(lines[0]) {
		t.Errorf("verdict %q, want in-use memory allocated by running code grew from … MiB to … MiB", lines[0])
	}
	if !strings.Contains(lines[1], "present.heapGrowth (+") {
		t.Errorf("leaders %q do not name heapGrowth", lines[1])
	}
	if strings.Contains(text, "cpu grew") {
		t.Errorf("the heap verdict says cpu grew:\n%s", text)
	}
}

// The corpus's heap profiles of one Parca process (46.2 MiB → 136 MiB in
// use), whose verdict read "cpu grew from 98.93% to 99.27%": in use, in
// objects, and allocated since start, one profile against two.
func TestDiffVerdictParcaHeap(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "parca")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/corpus beside the module: corpus test skipped")
	}
	first, second, last := "pkg__query__testdata__many__1644509272337470000.pb.gz", "pkg__query__testdata__many__1644509275338070000.pb.gz", "pkg__query__testdata__many__1644509299337903000.pb.gz"
	for _, c := range []struct {
		index     string
		base, new []string
		want      string
	}{
		{"", []string{first}, []string{last},
			"**Verdict:** In-use memory allocated by running code (`cpu`) grew from 46.2 MiB to 136 MiB (3x).\nLed by `github.com/dgraph-io/badger/v3/skl.newArena` (+83.2 MiB).\n"},
		{"inuse_objects", []string{first}, []string{last},
			"**Verdict:** In-use objects allocated in lock machinery (`lock-contention`) grew from 0 objects to 5461 objects (new).\nLed by `sync.runtime_SemacquireMutex` (+5461 objects)"},
		{"alloc_space", []string{first, second}, []string{last},
			"**Verdict:** Memory allocated by running code (`cpu`) grew from 49.1 MiB to 141 MiB per profile (3x).\n"},
	} {
		a := diff.NewAnalyzer(diff.Options{SampleIndex: c.index})
		for side, files := range map[result.Side][]string{result.Base: c.base, result.New: c.new} {
			for _, f := range files {
				l, err := profile.Load(context.Background(), filepath.Join(dir, f), profile.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Add(side, l); err != nil {
					t.Fatal(err)
				}
			}
		}
		if md := renderDiff(t, a.Diff(), render.Markdown, render.Options{}); !strings.HasPrefix(md, c.want) {
			t.Errorf("%s: markdown starts\n%s\nwant\n%s", c.index, md[:min(len(md), 400)], c.want)
		}
	}
}

// Further changes of a heap diff are in memory too, with their machinery.
func TestDiffVerdictMemoryAlso(t *testing.T) {
	r := &result.Result{Analysis: result.Analysis{SampleType: "alloc_objects/count", Kind: profile.KindHeap, Meaning: result.MeaningMemory},
		Verdict: &result.Verdict{Measure: result.NormalizeValue, Grew: true,
			Principal: &result.VerdictChange{Bucket: rules.GC, VerdictSize: result.VerdictSize{Base: 0.1, New: 0.3, Note: "3x", Values: vals(1000, 3000, "count", "")}},
			Also:      []result.VerdictChange{{Bucket: rules.IO, VerdictSize: result.VerdictSize{Base: 0, New: 0.1, Note: "new", Values: vals(0, 1000, "count", "")}}},
		}}
	got := write(t, &report.Report{Verdict: diffVerdict(r)}, render.Table, render.Options{})
	want := "Verdict: Objects allocated by the garbage collector (gc) grew from 1000 objects to 3000 objects (3x).\n" +
		"Also grew: allocated in I/O machinery (network, files) (io) 0 objects → 1000 objects (new).\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
