package symbolize

import (
	"debug/elf"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkFrames opens a cmd/go binary (about 20 MB, with DWARF; built
// into a temporary directory, the test binary itself when that fails) and
// names 100,000 addresses spread over its functions; one iteration
// includes the open and the indexing. It reports the time per address
// and the heap in use after the lookups (the object still open).
func BenchmarkFrames(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "go")
	if out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "cmd/go").CombinedOutput(); err != nil {
		b.Logf("go build cmd/go: %v: %s; using the test binary", err, out)
		if bin, err = os.Executable(); err != nil {
			b.Skip(err)
		}
	}
	addrs := benchAddrs(b, bin, 100_000)
	if st, err := os.Stat(bin); err == nil {
		b.Logf("%s: %.1f MB, %d addresses", bin, float64(st.Size())/1e6, len(addrs))
	}
	b.ResetTimer()
	var named int
	var heap uint64
	for range b.N {
		o, err := OpenObject(bin)
		if err != nil {
			b.Fatal(err)
		}
		named = 0
		for _, a := range addrs {
			if len(o.Frames(nil, a)) > 0 {
				named++
			}
		}
		b.StopTimer()
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heap = ms.HeapInuse
		b.StartTimer()
		o.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(addrs)), "ns/addr")
	b.ReportMetric(float64(heap)/1e6, "MB-heap")
	if named < len(addrs)*99/100 {
		b.Errorf("named %d of %d addresses", named, len(addrs))
	}
}

// benchAddrs picks n addresses inside the function symbols of bin, from a
// fixed seed.
func benchAddrs(b *testing.B, bin string, n int) []uint64 {
	ef, err := elf.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		b.Fatal(err)
	}
	var funcs []elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 {
			funcs = append(funcs, s)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, n)
	for i := range addrs {
		s := funcs[r.IntN(len(funcs))]
		addrs[i] = s.Value + r.Uint64N(s.Size)
	}
	return addrs
}
