package perfscript

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/benchgen"
	"github.com/profdiff/profdiff/profile/internal/corpus"
)

// benchSize is what the inputs replicated from real captures grow to.
const benchSize = 16 << 20

// BenchmarkParse measures Parse, beside the floor of counting the lines
// of the same text, on: synth, 2,000 cpu-clock samples of distinct Go
// stacks (about 12 MB) in the format perf script prints; recorded, a
// `perf record -e cpu-clock -g` of this test binary's own run of the
// synth input, replicated to 16 MiB (skipped where perf cannot record);
// and corpus, FlameGraph's Java capture from the shared corpus replicated
// to 16 MiB (skipped without the corpus).
//
//	go test ./profile/perfscript -run '^$' -bench Parse -cpu 1
func BenchmarkParse(b *testing.B) {
	inputs := []struct {
		name string
		data func(b *testing.B) []byte
	}{
		{"synth", func(*testing.B) []byte { return benchgen.PerfScript(2_000) }},
		{"recorded", recorded},
		{"corpus", func(b *testing.B) []byte {
			data, err := os.ReadFile(filepath.Join(corpus.Need(b), "flamegraph", "test__perf-java-stacks-01.txt"))
			if err != nil {
				b.Skip(err)
			}
			return benchgen.Replicate(data, benchSize, "\n")
		}},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			data := in.data(b)
			text := string(data)
			b.Run("floor", func(b *testing.B) {
				benchgen.Loop(b, int64(len(data)), func() {
					if bytes.Count(data, []byte{'\n'}) == 0 {
						b.Fatal("no lines")
					}
				})
			})
			b.Run("parse", func(b *testing.B) {
				benchgen.Loop(b, int64(len(text)), func() {
					if _, _, err := Parse(text); err != nil {
						b.Fatal(err)
					}
				})
			})
		})
	}
}

// recorded records this test binary parsing the synth input with
// `perf record -e cpu-clock -g` and returns `perf script`'s text of it,
// replicated to benchSize; it skips where perf cannot record (no perf, a
// perf_event_paranoid that forbids it, a container without the syscall).
func recorded(b *testing.B) []byte {
	perf, err := exec.LookPath("perf")
	if err != nil {
		b.Skip("no perf")
	}
	dir := b.TempDir()
	data := filepath.Join(dir, "perf.data")
	rec := exec.Command(perf, "record", "-q", "-e", "cpu-clock", "-g", "-o", data, "--",
		os.Args[0], "-test.run", "^TestRecordedWorkload$", "-test.count", "1")
	rec.Env = append(os.Environ(), "PERFSCRIPT_BENCH_WORKLOAD=1")
	if out, err := rec.CombinedOutput(); err != nil {
		b.Skipf("perf record failed: %v: %s", err, out)
	}
	out, err := exec.Command(perf, "script", "-i", data).Output()
	if err != nil || len(out) == 0 {
		b.Skipf("perf script failed: %v", err)
	}
	return benchgen.Replicate(out, benchSize, "")
}

// TestRecordedWorkload is what BenchmarkParse's recorded input records:
// Parse of the synth input a few times. It only runs under the benchmark.
func TestRecordedWorkload(t *testing.T) {
	if os.Getenv("PERFSCRIPT_BENCH_WORKLOAD") == "" {
		t.Skip("the workload BenchmarkParse records")
	}
	text := string(benchgen.PerfScript(2_000))
	for range 3 {
		if _, _, err := Parse(text); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkPathological times Parse on the input that once took 13 s
// and 2.5 GB (TestManyEventsMemory holds its memory): 15,000 samples, each
// of its own event.
//
//	go test ./profile/perfscript -run '^$' -bench Pathological -cpu 1
func BenchmarkPathological(b *testing.B) {
	text := distinctEvents(15000)
	benchgen.Loop(b, int64(len(text)), func() {
		if _, _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	})
}
