package diff

import (
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// A shard that walks a profile makes its method tables and lead sums
// for the profile's functions once: walking every sample grows none of
// them (each would be copied a doubling at a time).
func TestShardTablesSized(t *testing.T) {
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = 4000, 700
	r := rawFile(t, t.TempDir(), "p.pb.gz", synth.Generate(cfg), profile.Options{})
	a := NewAnalyzer(Options{})
	in, err := PrepareWith(r, PrepareOptions{IDsInWalk: true})
	if err != nil {
		t.Fatal(err)
	}
	fns := len(in.d.Funcs())
	if err := a.AddInput(result.Base, in); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(a.pending) != 1 || len(a.pending[0].shards) != 1 {
		t.Fatalf("%d walks in flight, want one of one shard", len(a.pending))
	}
	s := a.pending[0].shards[0]
	if n := len(s.methods); n < fns/2 || n > fns {
		t.Fatalf("%d methods of %d functions: the test wants most functions met", n, fns)
	}
	for name, c := range map[string]int{"methods": cap(s.methods), "spellings": cap(s.spellings), "frame rules": cap(s.mfr),
		"std": cap(s.std), "closure": cap(s.closure)} {
		if c != fns {
			t.Errorf("%s: capacity %d, want the %d functions'", name, c, fns)
		}
	}
	used := 0
	for b := range rules.NumBuckets {
		for _, sums := range [][]float64{s.lead.dec1[b], s.lead.call1[b]} {
			if sums == nil {
				continue
			}
			used++
			if cap(sums) != fns {
				t.Errorf("%s lead sums: capacity %d, want the %d functions'", rules.Bucket(b), cap(sums), fns)
			}
		}
	}
	if used == 0 {
		t.Error("no lead sums")
	}
}
