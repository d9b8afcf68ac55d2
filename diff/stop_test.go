package diff

import (
	"context"
	"errors"
	"testing"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// walked is the sample records an Analyzer's profiles counted.
func walked(a *Analyzer) (n int64) {
	for _, p := range a.Profiles() {
		n += p.Samples
	}
	return n
}

// An Analyzer whose Options.Context has ended walks no more than a look's
// worth of records (stop.Every) per walk, by the streaming decoder (in
// shards) or the pprof model; Wait returns the context's cause. One whose
// context ends after the walks builds no call tree below the root.
func TestAnalyzerStops(t *testing.T) {
	const stacks = 30_000
	cfg := synth.Config{Seed: 1, Stacks: stacks, MinDepth: 5, MaxDepth: 20, Functions: 500}
	p := synth.Generate(cfg)
	for _, s := range p.Sample {
		s.Value[0] = 1 // the samples column: ProfileStats.Samples counts the records walked
	}
	raw := rawFile(t, t.TempDir(), "cpu.pb.gz", p, profile.Options{})
	cause := errors.New("a signal")
	ended, end := context.WithCancelCause(context.Background())
	end(cause)

	add := func(opts Options, stream bool) (*Analyzer, error) {
		a := NewAnalyzer(opts)
		if stream {
			in, err := PrepareWith(raw, prepFor(opts, a.WalksInParallel()))
			if err != nil || !in.Streamed() {
				t.Fatalf("PrepareWith: %v, streamed %v", err, in != nil && in.Streamed())
			}
			if err := a.AddInput(result.Base, in); err != nil {
				return a, err
			}
		} else {
			l, err := raw.Load()
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Add(result.Base, l); err != nil {
				return a, err
			}
		}
		return a, a.Wait()
	}
	for _, stream := range []bool{true, false} {
		full, err := add(cutFine(Options{}), stream)
		if err != nil {
			t.Fatal(err)
		}
		a, err := add(cutFine(Options{Context: ended}), stream)
		if !errors.Is(err, cause) {
			t.Errorf("stream %v: Wait = %v, want the context's cause", stream, err)
		}
		// A fine cut walks a profile in up to fine.most shards, each a
		// walk of its own.
		most := int64(fine.most * stop.Every)
		all, got := walked(full), walked(a)
		t.Logf("stream %v: %d of %d samples walked after the end", stream, got, all)
		if all != stacks || got >= most {
			t.Errorf("stream %v: %d of %d samples walked after the end; want under %d (%d walks' look)", stream, got, all, most, fine.most)
		}
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	a, err := add(Options{Context: ctx, CallTree: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	if r := a.Diff(); r.Tree == nil || len(r.Tree.Children) == 0 {
		t.Fatal("no call tree before the end")
	}
	cancel(cause)
	if r := a.Diff(); r.Tree != nil && len(r.Tree.Children) > 0 {
		t.Errorf("the call tree was built after the end: %d children of the root", len(r.Tree.Children))
	}
}
