package jfr

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestMemoryLinear: parsing a recording concatenated k times (a valid
// file of k chunks) allocates at most about k times what parsing it once
// does, and the profile it returns, once the parse's garbage is gone,
// holds at most a few times the file's size. Bytes are counted, not time.
// The counts are the whole process's, so the parse is measured in a child
// test process, and this test runs beside the others.
func TestMemoryLinear(t *testing.T) {
	if path := os.Getenv(memoryChildEnv); path != "" {
		memoryLinear(t, path)
		return
	}
	t.Parallel()
	path := shapesRecording(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryLinear$", "-test.v")
	cmd.Env = append(os.Environ(), memoryChildEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child measuring %s: %v\n%s", path, err, out)
	}
	t.Logf("the child measuring %s:\n%s", path, out)
}

// memoryChildEnv names the recording TestMemoryLinear's child measures.
const memoryChildEnv = "PROFDIFF_JFR_MEMORY_CHILD"

func memoryLinear(t *testing.T, path string) {
	one, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const k = 4
	many := bytes.Repeat(one, k)
	if n := chunks(t, many); n != k {
		t.Fatalf("%d chunks in %d copies", n, k)
	}
	alloc1, kept1 := parseCost(t, one)
	allocK, keptK := parseCost(t, many)
	t.Logf("file %d bytes: parse allocates %d (%.1f× the file), keeps %d; %d copies: allocates %d (%.2f× one), keeps %d",
		len(one), alloc1, float64(alloc1)/float64(len(one)), kept1, k, allocK, float64(allocK)/float64(alloc1), keptK)
	if limit := uint64(1.3*k*float64(alloc1)) + 1<<20; allocK > limit {
		t.Errorf("%d chunks allocate %d bytes, more than 1.3·%d× the %d one chunk does (+1 MiB)", k, allocK, k, alloc1)
	}
	if limit := int64(4*len(many)) + 1<<20; keptK > limit {
		t.Errorf("the profile of %d bytes of recording holds %d bytes, more than 4× the file (+1 MiB)", len(many), keptK)
	}
}

// parseCost returns the bytes Parse allocates and the heap its profile
// holds: the live heap after a collection with the profile, less the live
// heap after one without it.
func parseCost(t *testing.T, data []byte) (alloc uint64, kept int64) {
	var before, after, held, freed runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, _, err := Parse(data)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&held)
	runtime.KeepAlive(p)
	p = nil
	runtime.GC()
	runtime.ReadMemStats(&freed)
	return after.TotalAlloc - before.TotalAlloc, int64(held.HeapAlloc) - int64(freed.HeapAlloc)
}
